package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
)

// Made-up public addresses (TEST-NET-3) that the tests' Dial routes to
// local test servers; the address check sees them as public, so it stays
// on and is what refuses the private ones.
var (
	publicAddr = netip.MustParseAddr("203.0.113.10")
	otherAddr  = netip.MustParseAddr("203.0.113.11")
)

// testNet is a fake name service and network: names resolve through hosts,
// and connections to a checked address go to the listener routed for it.
type testNet struct {
	hosts  map[string][]netip.Addr
	routes map[netip.Addr]string
	dials  atomic.Int32
}

func newTestNet() *testNet {
	return &testNet{
		hosts: map[string][]netip.Addr{
			"public.test":   {publicAddr},
			"other.test":    {otherAddr},
			"rebind.test":   {netip.MustParseAddr("127.0.0.1")},
			"mixed.test":    {publicAddr, netip.MustParseAddr("10.0.0.7")},
			"metadata.test": {netip.MustParseAddr("169.254.169.254")},
		},
		routes: map[netip.Addr]string{},
	}
}

func (n *testNet) options() Options {
	return Options{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			if a, ok := n.hosts[host]; ok {
				return append([]netip.Addr(nil), a...), nil
			}
			return nil, fmt.Errorf("no such host %q", host)
		},
		Dial: func(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
			n.dials.Add(1)
			target, ok := n.routes[ap.Addr()]
			if !ok {
				// With the check off (AllowPrivate), local addresses are
				// dialled for real.
				target = ap.String()
			}
			var d net.Dialer
			return d.DialContext(ctx, network, target)
		},
	}
}

// serve starts a test server reachable as http://public.test:80 through n.
func (n *testNet) serve(t *testing.T, addr netip.Addr, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	n.routes[addr] = srv.Listener.Addr().String()
	return srv
}

func wantRefused(t *testing.T, err error, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want refusal %q", msg)
	}
	if !apperr.Is(err, apperr.Invalid) {
		t.Fatalf("kind = %v, want invalid (%v)", apperr.KindOf(err), err)
	}
	if !errors.Is(err, ErrRefused) {
		t.Fatalf("error %v is not a refusal", err)
	}
	if got := apperr.As(err).Message; msg != "" && got != msg {
		t.Fatalf("message = %q, want %q", got, msg)
	}
}

func TestRefusesNonPublicAddresses(t *testing.T) {
	cases := []struct {
		url, msg string
	}{
		{"http://127.0.0.1/", msgLoopback},
		{"http://127.1.2.3:8080/admin", msgLoopback},
		{"http://localhost/", msgLoopback}, // resolved by the system resolver
		{"http://[::1]/", msgLoopback},
		{"http://[::ffff:127.0.0.1]/", msgLoopback},
		{"http://10.1.2.3/", msgPrivate},
		{"http://172.16.0.1/", msgPrivate},
		{"http://192.168.1.1/", msgPrivate},
		{"http://100.64.0.1/", msgPrivate},
		{"http://[fd12:3456::1]/", msgPrivate},
		{"http://[64:ff9b::a00:1]/", msgPrivate},   // NAT64 of 10.0.0.1
		{"http://[2002:c0a8:101::1]/", msgPrivate}, // 6to4 of 192.168.1.1
		{"http://169.254.169.254/latest/meta-data/", msgLinkLocal},
		{"http://[fe80::1]/", msgLinkLocal},
		{"http://224.0.0.1/", msgMulticast},
		{"http://[ff02::1]/", msgMulticast},
		{"http://0.0.0.0/", msgReserved},
		{"http://[::]/", msgReserved},
		{"http://255.255.255.255/", msgReserved},
	}
	var dials atomic.Int32
	c := New(Options{Dial: func(context.Context, string, netip.AddrPort) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("dialled")
	}})
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			_, err := c.Get(context.Background(), tc.url)
			wantRefused(t, err, tc.msg)
		})
	}
	if n := dials.Load(); n != 0 {
		t.Fatalf("%d refused addresses were dialled", n)
	}
}

func TestRefusesNamesResolvingToNonPublicAddresses(t *testing.T) {
	n := newTestNet()
	c := New(n.options())
	for url, msg := range map[string]string{
		"http://rebind.test/":          msgLoopback,
		"https://metadata.test/":       msgLinkLocal,
		"http://mixed.test/":           msgPrivate, // one private address is enough
		"http://rebind.test:8443/path": msgLoopback,
	} {
		_, err := c.Get(context.Background(), url)
		wantRefused(t, err, msg)
	}
	if d := n.dials.Load(); d != 0 {
		t.Fatalf("%d refused addresses were dialled", d)
	}
}

func TestRefusesSchemes(t *testing.T) {
	c := New(Options{})
	for _, u := range []string{"ftp://example.com/", "file:///etc/passwd", "javascript:alert(1)", "gopher://x/", "", "/relative", "http:///nohost"} {
		_, err := c.Get(context.Background(), u)
		wantRefused(t, err, "")
	}
}

func TestGetPublicAddress(t *testing.T) {
	n := newTestNet()
	var ua string
	n.serve(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ua = r.UserAgent()
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusTeapot)
		fmt.Fprint(w, "hello "+r.Host)
	}))
	c := New(n.options())
	resp, err := c.Get(context.Background(), "http://public.test/x?y=1")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != http.StatusTeapot || string(resp.Body) != "hello public.test" ||
		resp.Header.Get("Content-Type") != "text/plain" || resp.FinalURL != "http://public.test/x?y=1" {
		t.Fatalf("response = %d %q %v %q", resp.Status, resp.Body, resp.Header, resp.FinalURL)
	}
	if ua != DefaultUserAgent {
		t.Fatalf("User-Agent = %q", ua)
	}
}

func TestRedirectToPrivateAddressIsRefused(t *testing.T) {
	var secretHits atomic.Int32
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secretHits.Add(1)
		fmt.Fprint(w, "secret")
	}))
	defer secret.Close()
	_, port, _ := net.SplitHostPort(secret.Listener.Addr().String())

	n := newTestNet()
	n.routes[netip.MustParseAddr("127.0.0.1")] = secret.Listener.Addr().String()
	n.serve(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-ip":
			http.Redirect(w, r, secret.URL+"/secret", http.StatusFound)
		case "/to-name":
			http.Redirect(w, r, "http://rebind.test:"+port+"/secret", http.StatusMovedPermanently)
		case "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case "/to-public":
			http.Redirect(w, r, "http://other.test/ok", http.StatusSeeOther)
		}
	}))
	n.serve(t, otherAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))

	c := New(n.options())
	_, err := c.Get(context.Background(), "http://public.test/to-ip")
	wantRefused(t, err, msgLoopback)
	_, err = c.Get(context.Background(), "http://public.test/to-name")
	wantRefused(t, err, msgLoopback)
	_, err = c.Get(context.Background(), "http://public.test/to-file")
	wantRefused(t, err, "Only http and https URLs can be fetched.")
	if h := secretHits.Load(); h != 0 {
		t.Fatalf("the private server was reached %d times", h)
	}

	resp, err := c.Get(context.Background(), "http://public.test/to-public")
	if err != nil || string(resp.Body) != "ok" || resp.FinalURL != "http://other.test/ok" {
		t.Fatalf("public redirect: %v %+v", err, resp)
	}

	// The same redirects reach the private server when the check is off,
	// which shows the refusals above came from the check.
	open := n.options()
	open.AllowPrivate = true
	for _, path := range []string{"/to-ip", "/to-name"} {
		resp, err := New(open).Get(context.Background(), "http://public.test"+path)
		if err != nil || string(resp.Body) != "secret" {
			t.Fatalf("AllowPrivate %s: %v %+v", path, err, resp)
		}
	}
	if h := secretHits.Load(); h != 2 {
		t.Fatalf("private server hits = %d, want 2", h)
	}
}

func TestRedirectCap(t *testing.T) {
	n := newTestNet()
	n.serve(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		left, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/r/"))
		if left == 0 {
			fmt.Fprint(w, "done")
			return
		}
		http.Redirect(w, r, "/r/"+strconv.Itoa(left-1), http.StatusFound)
	}))
	c := New(n.options())
	resp, err := c.Get(context.Background(), "http://public.test/r/5")
	if err != nil || string(resp.Body) != "done" || !strings.HasSuffix(resp.FinalURL, "/r/0") {
		t.Fatalf("5 redirects: %v %+v", err, resp)
	}
	_, err = c.Get(context.Background(), "http://public.test/r/6")
	wantRefused(t, err, "The URL redirects more than 5 times.")

	opts := n.options()
	opts.MaxRedirects = 1
	_, err = New(opts).Get(context.Background(), "http://public.test/r/2")
	wantRefused(t, err, "The URL redirects more than 1 times.")
}

func TestBodyCap(t *testing.T) {
	n := newTestNet()
	n.serve(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Write([]byte(strings.Repeat("a", size)))
	}))
	opts := n.options()
	opts.MaxBody = 1024
	c := New(opts)
	resp, err := c.Get(context.Background(), "http://public.test/?n=1024")
	if err != nil || len(resp.Body) != 1024 {
		t.Fatalf("body at the cap: %v", err)
	}
	_, err = c.Get(context.Background(), "http://public.test/?n=1025")
	wantRefused(t, err, "The response is larger than 1 KiB.")

	_, err = New(n.options()).Get(context.Background(), "http://public.test/?n="+strconv.Itoa(DefaultMaxBody+1))
	wantRefused(t, err, "The response is larger than 1 MiB.")

	resp, err = c.GetPartial(context.Background(), "http://public.test/?n=1025")
	if err != nil || len(resp.Body) != 1024 || !resp.Truncated {
		t.Fatalf("partial over the cap: %v", err)
	}
	resp, err = c.GetPartial(context.Background(), "http://public.test/?n=1024")
	if err != nil || len(resp.Body) != 1024 || resp.Truncated {
		t.Fatalf("partial at the cap: %v", err)
	}
}

// Open leaves the body to the caller, whose reads fail past the cap
// instead of ending as if the file were whole.
func TestOpenStreamsUnderTheCap(t *testing.T) {
	n := newTestNet()
	n.serve(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		size, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("ETag", `"v1"`)
		w.Write([]byte(strings.Repeat("a", size)))
	}))
	opts := n.options()
	opts.MaxBody = 1024
	c := New(opts)
	s, err := c.Open(context.Background(), "http://public.test/?n=1024", nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(s.Body)
	s.Body.Close()
	if err != nil || len(body) != 1024 || s.Status != 200 || s.Header.Get("ETag") != `"v1"` {
		t.Fatalf("at the cap: %v, %d bytes, %d", err, len(body), s.Status)
	}
	s, err = c.Open(context.Background(), "http://public.test/?n=5000", nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(s.Body)
	s.Body.Close()
	wantRefused(t, err, "The response is larger than 1 KiB.")
	_, err = New(Options{}).Open(context.Background(), "http://127.0.0.1:1/", nil)
	wantRefused(t, err, msgLoopback)
}

func TestTimeout(t *testing.T) {
	n := newTestNet()
	release := make(chan struct{})
	n.serve(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer close(release)
	opts := n.options()
	opts.Timeout = 50 * time.Millisecond
	_, err := New(opts).Get(context.Background(), "http://public.test/slow")
	if !apperr.Is(err, apperr.Invalid) || errors.Is(err, ErrRefused) ||
		apperr.As(err).Message != "The URL did not answer in time." {
		t.Fatalf("err = %v", err)
	}
}

func TestUnknownHost(t *testing.T) {
	n := newTestNet()
	_, err := New(n.options()).Get(context.Background(), "http://nowhere.test/")
	if !apperr.Is(err, apperr.Invalid) || errors.Is(err, ErrRefused) ||
		apperr.As(err).Message != "The host of the URL could not be found." {
		t.Fatalf("err = %v", err)
	}
}

func TestAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "local")
	}))
	defer srv.Close()
	resp, err := New(Options{AllowPrivate: true}).Get(context.Background(), srv.URL)
	if err != nil || string(resp.Body) != "local" {
		t.Fatalf("%v %+v", err, resp)
	}
	_, err = New(Options{}).Get(context.Background(), srv.URL)
	wantRefused(t, err, msgLoopback)
}

// The socket-level check refuses on its own, should a dial ever bypass
// the resolver check.
func TestControlRefuses(t *testing.T) {
	c := New(Options{})
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "10.0.0.1:80", "[fe80::1%eth0]:80"} {
		wantRefused(t, c.control("tcp", addr, nil), "")
	}
	if err := c.control("tcp", "203.0.113.10:443", nil); err != nil {
		t.Fatal(err)
	}
	if err := New(Options{AllowPrivate: true}).control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Fatal(err)
	}
}

func TestRefusal(t *testing.T) {
	public := []string{"8.8.8.8", "1.1.1.1", "203.0.113.10", "2606:4700::1111", "2a00:1450:4001::200e", "64:ff9b::808:808", "100.63.255.255", "100.128.0.0"}
	for _, s := range public {
		if r := refusal(netip.MustParseAddr(s)); r != "" {
			t.Errorf("%s refused: %s", s, r)
		}
	}
	blocked := []string{"127.0.0.1", "10.0.0.0", "172.31.255.255", "192.168.0.1", "100.64.0.0", "100.127.255.255",
		"169.254.0.1", "0.1.2.3", "192.0.0.8", "198.18.0.1", "240.0.0.1", "::1", "::", "fc00::1", "fe80::1", "fec0::1",
		"ff05::2", "::ffff:10.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::", "2001::1", "::127.0.0.2"}
	for _, s := range blocked {
		if r := refusal(netip.MustParseAddr(s)); r == "" {
			t.Errorf("%s not refused", s)
		}
	}
}

// TestSend sends the body and headers to a public address and reads the
// answer; a non-public address is refused as for Get, undialled.
func TestSend(t *testing.T) {
	n := newTestNet()
	n.serve(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.Header.Get("Content-Type"), r.Header.Get("Authorization"), body)
	}))
	c := New(n.options())
	res, err := c.Send(context.Background(), http.MethodPost, "http://public.test/scores", http.Header{
		"Content-Type": {"application/json"}, "Authorization": {"Bearer t"}}, []byte(`{"a":1}`))
	if err != nil || res.Status != 200 || string(res.Body) != `POST application/json Bearer t {"a":1}` {
		t.Fatalf("post: %v %+v", err, res)
	}
	before := n.dials.Load()
	_, err = c.Send(context.Background(), http.MethodPost, "http://rebind.test/token", nil, []byte("x"))
	wantRefused(t, err, msgLoopback)
	if n.dials.Load() != before {
		t.Fatal("a refused address was dialled")
	}
}
