package oembed

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/fetch"
)

var testNow = time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC)

// world is a made-up internet: names resolve to public test addresses
// (TEST-NET-3) that the fetch client's Dial routes to local test servers.
// The address check of the client stays on, so names that resolve to
// private addresses are refused exactly as in production.
type world struct {
	t      *testing.T
	mu     sync.Mutex
	hosts  map[string]netip.Addr
	routes map[netip.Addr]string
	hits   map[string]*atomic.Int32 // requests by "host/path"
}

func newWorld(t *testing.T) *world {
	return &world{
		t: t,
		hosts: map[string]netip.Addr{
			"internal.test": netip.MustParseAddr("10.0.0.1"),
			"loop.test":     netip.MustParseAddr("127.0.0.1"),
		},
		routes: map[netip.Addr]string{},
		hits:   map[string]*atomic.Int32{},
	}
}

// site serves h as http://name through a new test server.
func (w *world) site(name string, h http.HandlerFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	addr := netip.AddrFrom4([4]byte{203, 0, 113, byte(10 + len(w.routes))})
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.hit(r.Host + r.URL.Path).Add(1)
		h(rw, r)
	}))
	w.t.Cleanup(srv.Close)
	w.hosts[name] = addr
	w.routes[addr] = srv.Listener.Addr().String()
}

func (w *world) hit(key string) *atomic.Int32 {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.hits[key] == nil {
		w.hits[key] = new(atomic.Int32)
	}
	return w.hits[key]
}

func (w *world) client() *fetch.Client {
	return fetch.New(fetch.Options{
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			if a, ok := w.hosts[host]; ok {
				return []netip.Addr{a}, nil
			}
			return nil, fmt.Errorf("no such host %q", host)
		},
		Dial: func(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
			w.mu.Lock()
			target, ok := w.routes[ap.Addr()]
			w.mu.Unlock()
			if !ok {
				return nil, fmt.Errorf("no route to %s", ap)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, target)
		},
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

const youtubeHTML = `<iframe width="560" height="315" src="https://www.youtube.com/embed/abc?feature=oembed" ` +
	`frameborder="0" allow="accelerometer; autoplay; clipboard-write; encrypted-media; gyroscope; picture-in-picture; web-share; camera; microphone" ` +
	`referrerpolicy="no-referrer-when-downgrade" allowfullscreen title="Cats &amp; dogs" onload="alert(1)" srcdoc="<script>alert(2)</script>"></iframe>` +
	`<script src="https://evil.test/x.js"></script>`

const youtubeWant = `<iframe src="https://www.youtube.com/embed/abc?feature=oembed" width="560" height="315" title="Cats &amp; dogs" ` +
	`allow="accelerometer; autoplay; clipboard-write; encrypted-media; gyroscope; picture-in-picture; web-share" allowfullscreen ` +
	`sandbox="allow-scripts allow-same-origin allow-presentation allow-popups" referrerpolicy="strict-origin-when-cross-origin" ` +
	`loading="lazy" frameborder="0"></iframe>`

// fixture is a world with a rewired YouTube endpoint and a blog with
// discovery, and a kind that fetches from them.
type fixture struct {
	w        *world
	kind     *Kind
	cache    cache.Cache
	requests []url.Values // queries received by the YouTube endpoint
	mu       sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{w: newWorld(t), cache: cache.NewMemory(clock.NewFake(testNow))}
	f.w.site("provider.test", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f.mu.Lock()
		f.requests = append(f.requests, q)
		f.mu.Unlock()
		page := q.Get("url")
		switch {
		case strings.Contains(page, "v=abc"):
			writeJSON(w, map[string]any{
				"type": "video", "version": "1.0", "title": "Cats & dogs", "author_name": "Someone",
				"provider_name": "YouTube", "provider_url": "https://www.youtube.com/",
				"thumbnail_url": "https://i.ytimg.com/vi/abc/hqdefault.jpg", "thumbnail_width": 480,
				"width": 560, "height": "315", "html": youtubeHTML,
			})
		case strings.Contains(page, "v=foreign"):
			writeJSON(w, map[string]any{"type": "video", "version": "1.0",
				"html": `<iframe src="https://evil.test/embed/1"></iframe>`})
		case strings.Contains(page, "v=js"):
			writeJSON(w, map[string]any{"type": "rich", "version": "1.0",
				"html": `<iframe src="javascript:alert(1)"></iframe><iframe src="jaVascript&colon;alert(1)"></iframe><img src=x onerror=alert(1)>`})
		case strings.Contains(page, "v=photo"):
			writeJSON(w, map[string]any{"type": "photo", "version": "1.0", "title": `A "photo"`,
				"url": "https://live.staticflickr.com/1/2.jpg", "width": 1024, "height": 768,
				"thumbnail_url": "http://insecure.test/t.jpg", "provider_url": "javascript:alert(1)"})
		case strings.Contains(page, "v=v2"):
			writeJSON(w, map[string]any{"type": "video", "version": "2.0", "html": youtubeHTML})
		case strings.Contains(page, "v=badtype"):
			writeJSON(w, map[string]any{"type": "movie", "version": "1.0", "html": youtubeHTML})
		case strings.Contains(page, "v=notjson"):
			fmt.Fprint(w, "<html>not json</html>")
		default:
			http.NotFound(w, r)
		}
	})
	f.w.site("blog.test", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/post/1":
			fmt.Fprintf(w, `<!doctype html><html><head><title>Post</title>
<!-- <link rel="alternate" type="application/json+oembed" href="http://loop.test/commented-out"> -->
<script>var s = '<link rel="alternate" type="application/json+oembed" href="http://loop.test/in-script">';</script>
<link rel="stylesheet" href="/s.css">
<LINK REL="Alternate" TYPE="application/json+oembed" HREF="/oembed?url=%s&amp;format=json" title="Post">
<link rel="alternate" type="text/xml+oembed" href="/oembed.xml">
</head><body>x</body></html>`, url.QueryEscape("http://blog.test/post/1"))
		case "/oembed":
			writeJSON(w, map[string]any{
				"type": "rich", "version": "1.0", "title": "Post", "provider_name": "Blog",
				"html": `<blockquote>quote</blockquote><iframe src="https://evil.test/x"></iframe>` +
					`<iframe src="https://player.blog.test/embed/1" width="100%" height="400px" sandbox="allow-top-navigation"></iframe>`,
			})
		case "/plain":
			fmt.Fprint(w, `<html><head><title>No oEmbed</title></head><body><link rel="alternate" type="application/json+oembed" href="/late"></body></html>`)
		case "/broken":
			fmt.Fprint(w, `<html><head><link rel="alternate" type="application/json+oembed" href="/missing"></head></html>`)
		case "/to-private":
			fmt.Fprint(w, `<html><head><link rel="alternate" type="application/json+oembed" href="http://loop.test/oembed"></head></html>`)
		case "/moved":
			http.Redirect(w, r, "http://internal.test/secret", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	})
	providers := DefaultProviders()
	for i := range providers {
		if providers[i].Name == "YouTube" {
			providers[i].Endpoint = "http://provider.test/oembed"
		}
	}
	f.kind = NewWithOptions(f.w.client(), f.cache, func() time.Time { return testNow }, Options{Providers: providers})
	return f
}

func (f *fixture) build(t *testing.T, pageURL string) (Value, error) {
	t.Helper()
	raw, err := f.kind.Build(context.Background(), content.Env{}, nil, content.Input{Fields: map[string]string{"url": pageURL}})
	if err != nil {
		return Value{}, err
	}
	var v Value
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v, nil
}

func wantField(t *testing.T, err error, msg string) {
	t.Helper()
	e := apperr.As(err)
	if e == nil || e.Kind != apperr.Invalid {
		t.Fatalf("err = %v, want a 422", err)
	}
	if got := e.Fields["url"]; len(got) != 1 || got[0] != msg || e.Message != msg {
		t.Fatalf("errors = %q %v, want url: %q", e.Message, e.Fields, msg)
	}
}

func TestBuildWithRegistryProvider(t *testing.T) {
	f := newFixture(t)
	page := "https://www.youtube.com/watch?v=abc"
	v, err := f.build(t, page)
	if err != nil {
		t.Fatal(err)
	}
	want := Value{
		URL: page, ProviderName: "YouTube", ProviderURL: "https://www.youtube.com/", Type: "video",
		Title: "Cats & dogs", AuthorName: "Someone", ThumbnailURL: "https://i.ytimg.com/vi/abc/hqdefault.jpg",
		Width: 560, Height: 315, HTML: youtubeWant, FetchedAt: testNow,
	}
	if v != want {
		t.Fatalf("value:\n got %+v\nwant %+v", v, want)
	}
	if len(f.requests) != 1 {
		t.Fatalf("endpoint requests = %d", len(f.requests))
	}
	q := f.requests[0]
	if q.Get("url") != page || q.Get("format") != "json" || q.Get("maxwidth") != "1280" || q.Get("maxheight") != "720" {
		t.Fatalf("endpoint query = %v", q)
	}
}

func TestBuildWithDiscovery(t *testing.T) {
	f := newFixture(t)
	v, err := f.build(t, "http://blog.test/post/1")
	if err != nil {
		t.Fatal(err)
	}
	if v.ProviderName != "Blog" || v.ProviderURL != "http://blog.test/" || v.Type != "rich" || v.Title != "Post" {
		t.Fatalf("value = %+v", v)
	}
	// The foreign iframe is dropped, the site's own kept with its own
	// sandbox in place of the one sent.
	wantHTML := `<iframe src="https://player.blog.test/embed/1" width="100%" sandbox="` + iframeSandbox +
		`" referrerpolicy="strict-origin-when-cross-origin" loading="lazy" frameborder="0"></iframe>`
	if v.HTML != wantHTML {
		t.Fatalf("html = %s", v.HTML)
	}
	if n := f.w.hit("blog.test/oembed").Load(); n != 1 {
		t.Fatalf("discovered endpoint requests = %d", n)
	}
}

func TestSanitisedThroughBuild(t *testing.T) {
	f := newFixture(t)
	for _, page := range []string{"https://youtu.be/x?v=foreign", "https://youtu.be/x?v=js"} {
		v, err := f.build(t, page)
		if err != nil {
			t.Fatal(err)
		}
		if v.HTML != "" {
			t.Errorf("%s: html = %s", page, v.HTML)
		}
	}
	v, err := f.build(t, "https://youtu.be/x?v=photo")
	if err != nil {
		t.Fatal(err)
	}
	wantImg := `<img src="https://live.staticflickr.com/1/2.jpg" width="1024" height="768" alt="A &#34;photo&#34;" loading="lazy" referrerpolicy="strict-origin-when-cross-origin">`
	if v.HTML != wantImg || v.ThumbnailURL != "" || v.ProviderURL != "https://www.youtube.com/" {
		t.Fatalf("photo value = %+v", v)
	}
}

func TestEmbedHTML(t *testing.T) {
	youtube := func(h string) bool { return hostAllowed(h, []string{"www.youtube.com", "*.ytimg.com"}) }
	cases := []struct{ name, in, want string }{
		{"script only", `<script>alert(1)</script>`, ""},
		{"foreign host", `<iframe src="https://evil.test/embed"></iframe>`, ""},
		{"look-alike host", `<iframe src="https://www.youtube.com.evil.test/embed"></iframe>`, ""},
		{"javascript", `<iframe src="javascript:alert(1)"></iframe>`, ""},
		{"encoded javascript", `<iframe src="&#106;avascript:alert(1)"></iframe>`, ""},
		{"data", `<iframe src="data:text/html,<script>alert(1)</script>"></iframe>`, ""},
		{"http", `<iframe src="http://www.youtube.com/embed/1"></iframe>`, ""},
		{"user info", `<iframe src="https://www.youtube.com@evil.test/embed/1"></iframe>`, ""},
		{"other port", `<iframe src="https://www.youtube.com:8443/embed/1"></iframe>`, ""},
		{"iframe in comment", `<!-- <iframe src="https://www.youtube.com/embed/1"></iframe> -->`, ""},
		{"iframe in script", `<script>"<iframe src='https://www.youtube.com/embed/1'>"</script>`, ""},
		{"unterminated", `<iframe src="https://www.youtube.com/embed/1"`, ""},
		{"protocol relative", `<iframe src="//www.youtube.com/embed/1" width=640 height=360></iframe>`,
			`<iframe src="https://www.youtube.com/embed/1" width="640" height="360" sandbox="` + iframeSandbox + `" referrerpolicy="strict-origin-when-cross-origin" loading="lazy" frameborder="0"></iframe>`},
		{"first allowed wins", `<iframe src="https://evil.test/"></iframe><IFRAME SRC='https://www.youtube.com/embed/2?a=1&amp;b="x"' onload=alert(1) style="position:fixed" width="640px"></IFRAME><iframe src="https://www.youtube.com/embed/3"></iframe>`,
			`<iframe src="https://www.youtube.com/embed/2?a=1&amp;b=&#34;x&#34;" sandbox="` + iframeSandbox + `" referrerpolicy="strict-origin-when-cross-origin" loading="lazy" frameborder="0"></iframe>`},
		{"title escaped", `<iframe src="https://www.youtube.com/e" title='"><script>alert(1)</script>'></iframe>`,
			`<iframe src="https://www.youtube.com/e" title="&#34;&gt;&lt;script&gt;alert(1)&lt;/script&gt;" sandbox="` + iframeSandbox + `" referrerpolicy="strict-origin-when-cross-origin" loading="lazy" frameborder="0"></iframe>`},
		{"allow filtered", `<iframe src="https://www.youtube.com/e" allow="camera *; autoplay 'self'; geolocation; fullscreen; autoplay"></iframe>`,
			`<iframe src="https://www.youtube.com/e" allow="autoplay; fullscreen" sandbox="` + iframeSandbox + `" referrerpolicy="strict-origin-when-cross-origin" loading="lazy" frameborder="0"></iframe>`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := embedHTML(tc.in, youtube); got != tc.want {
				t.Fatalf("embedHTML(%s)\n got %s\nwant %s", tc.in, got, tc.want)
			}
		})
	}
}

func TestNoOEmbed(t *testing.T) {
	f := newFixture(t)
	for _, page := range []string{
		"http://blog.test/plain",       // no discovery link in the head
		"http://blog.test/broken",      // the endpoint answers 404
		"http://blog.test/gone",        // the page answers 404
		"https://youtu.be/x?v=missing", // the registry endpoint answers 404
		"https://youtu.be/x?v=v2",      // wrong version
		"https://youtu.be/x?v=badtype", // unknown type
		"https://youtu.be/x?v=notjson", // not JSON
	} {
		_, err := f.build(t, page)
		wantField(t, err, "The URL has no oEmbed description.")
	}
	if n := f.w.hit("blog.test/late").Load(); n != 0 {
		t.Fatalf("a link outside the head was followed")
	}
}

func TestPrivateAddressesRefused(t *testing.T) {
	f := newFixture(t)
	cases := map[string]string{
		"http://127.0.0.1/video":        "The address resolves to this machine (loopback).",
		"http://internal.test/page":     "The address resolves to a private network.",
		"http://169.254.169.254/latest": "The address resolves to a link-local network.",
		"http://[::1]/":                 "The address resolves to this machine (loopback).",
		"http://blog.test/moved":        "The address resolves to a private network.",
		"http://blog.test/to-private":   "The oEmbed endpoint of the URL was refused. The address resolves to this machine (loopback).",
	}
	for page, msg := range cases {
		_, err := f.build(t, page)
		wantField(t, err, msg)
	}
	// The production client, with the system resolver.
	k := NewWithOptions(fetch.New(fetch.Options{}), nil, nil, Options{})
	for _, page := range []string{"http://localhost/", "http://localhost:8080/x", "http://127.0.0.1/video"} {
		_, err := k.Build(context.Background(), content.Env{}, nil, content.Input{Fields: map[string]string{"url": page}})
		wantField(t, err, "The address resolves to this machine (loopback).")
	}
}

func TestCache(t *testing.T) {
	f := newFixture(t)
	first, err := f.build(t, "https://www.youtube.com/watch?v=abc")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.build(t, "http://blog.test/post/1"); err != nil {
		t.Fatal(err)
	}
	// Another replica sharing the cache, with a later clock.
	later := NewWithOptions(f.w.client(), f.cache, func() time.Time { return testNow.Add(time.Hour) },
		Options{Providers: f.kind.providers.providers})
	for _, k := range []*Kind{f.kind, later} {
		v, err := k.Resolve(context.Background(), "https://www.youtube.com/watch?v=abc")
		if err != nil || v != first {
			t.Fatalf("cached value = %+v, %v", v, err)
		}
		if _, err := k.Resolve(context.Background(), "http://blog.test/post/1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.w.hit("provider.test/oembed").Load(); n != 1 {
		t.Fatalf("registry endpoint requests = %d, want 1", n)
	}
	if p, e := f.w.hit("blog.test/post/1").Load(), f.w.hit("blog.test/oembed").Load(); p != 1 || e != 1 {
		t.Fatalf("discovery requests: page %d, endpoint %d, want 1 and 1", p, e)
	}
	if _, ok, _ := f.cache.Get(context.Background(), cacheKey("https://www.youtube.com/watch?v=abc")); !ok {
		t.Fatal("no cache entry under the documented key")
	}
	// Failures are not cached: a fixed page is found on the next try.
	_, err = f.build(t, "https://youtu.be/x?v=missing")
	wantField(t, err, msgNoOEmbed)
	_, err = f.build(t, "https://youtu.be/x?v=missing")
	wantField(t, err, msgNoOEmbed)
	if n := f.w.hit("provider.test/oembed").Load(); n != 3 {
		t.Fatalf("registry endpoint requests = %d, want 3", n)
	}
}

func TestInput(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	build := func(old json.RawMessage, in content.Input) (json.RawMessage, error) {
		return f.kind.Build(ctx, content.Env{}, old, in)
	}
	_, err := build(nil, content.Input{})
	wantField(t, err, "The url field is required.")
	_, err = build(nil, content.Input{Fields: map[string]string{"url": "  "}})
	wantField(t, err, "The url field is required.")
	for _, bad := range []string{"ftp://example.com/x", "javascript:alert(1)", "www.youtube.com/watch?v=abc", "https://", "mailto:a@b.c"} {
		_, err = build(nil, content.Input{Fields: map[string]string{"url": bad}})
		wantField(t, err, "The url must be an http or https URL.")
	}
	long := "https://www.youtube.com/watch?v=abc&x=" + strings.Repeat("a", MaxURLLength)
	_, err = build(nil, content.Input{Fields: map[string]string{"url": long}})
	wantField(t, err, "The url may not be longer than 2048 characters.")

	// The generic create sends the value.
	for _, value := range []string{`{"url":"https://www.youtube.com/watch?v=abc","html":"<script>"}`, `"https://www.youtube.com/watch?v=abc"`} {
		raw, err := build(nil, content.Input{Value: json.RawMessage(value)})
		if err != nil {
			t.Fatal(err)
		}
		var v Value
		json.Unmarshal(raw, &v)
		if v.HTML != youtubeWant {
			t.Fatalf("generic value %s: html %s", value, v.HTML)
		}
	}
	_, err = build(nil, content.Input{Value: json.RawMessage(`{"html":"<b>"}`)})
	wantField(t, err, "The url field is required.")

	// An update without a url keeps the value.
	old := json.RawMessage(`{"url":"https://www.youtube.com/watch?v=abc"}`)
	got, err := build(old, content.Input{Fields: map[string]string{"title": "x"}})
	if err != nil || string(got) != string(old) {
		t.Fatalf("update without url: %s, %v", got, err)
	}
}

func TestViewCopyRemove(t *testing.T) {
	f := newFixture(t)
	raw, err := f.kind.Build(context.Background(), content.Env{}, nil, content.Input{Fields: map[string]string{"url": "https://www.youtube.com/watch?v=abc"}})
	if err != nil {
		t.Fatal(err)
	}
	view, err := f.kind.View(content.Env{}, raw)
	if err != nil {
		t.Fatal(err)
	}
	out, _ := json.Marshal(view)
	var fields map[string]any
	json.Unmarshal(out, &fields)
	for _, k := range []string{"url", "provider_name", "provider_url", "type", "title", "author_name", "thumbnail_url", "width", "height", "html", "fetched_at"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("view has no %s: %s", k, out)
		}
	}
	if fields["fetched_at"] != "2025-03-04T05:06:07Z" || fields["width"] != float64(560) {
		t.Errorf("view = %s", out)
	}
	cp, err := f.kind.Copy(context.Background(), content.Env{}, raw)
	if err != nil || string(cp) != string(raw) {
		t.Fatalf("copy = %s, %v", cp, err)
	}
	if err := f.kind.Remove(context.Background(), content.Env{}, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kind.View(content.Env{}, json.RawMessage(`[`)); !apperr.Is(err, apperr.Internal) {
		t.Fatalf("bad value view: %v", err)
	}
	if f.kind.Class() != `Lms\TopicTypes\Models\TopicContent\OEmbed` || f.kind.Name() != "oembed" {
		t.Fatal("class or name")
	}
}

func TestRegistryMatch(t *testing.T) {
	r := newRegistry(DefaultProviders())
	cases := map[string]string{
		"https://www.youtube.com/watch?v=abc":               "YouTube",
		"http://m.youtube.com/watch?v=abc&t=1":              "YouTube",
		"https://youtube.com/shorts/abc":                    "YouTube",
		"https://youtu.be/abc":                              "YouTube",
		"https://WWW.YOUTUBE.COM/watch?v=abc":               "YouTube",
		"https://vimeo.com/76979871":                        "Vimeo",
		"https://player.vimeo.com/video/76979871":           "Vimeo",
		"https://www.dailymotion.com/video/x8abc":           "Dailymotion",
		"https://soundcloud.com/forss/flickermood":          "SoundCloud",
		"https://open.spotify.com/track/2qToAcex0ruZfbEbAy": "Spotify",
		"https://www.flickr.com/photos/bees/2362225867/":    "Flickr",
		"https://flic.kr/p/abc":                             "Flickr",
		"https://www.slideshare.net/haraldf/business":       "SlideShare",
		"https://twitter.com/Interior/status/463440424141":  "Twitter",
		"https://x.com/Interior/status/463440424141":        "Twitter",
		"https://www.ted.com/talks/some_talk":               "TED",
		"https://codepen.io/someone/pen/JXwgdK":             "CodePen",
		"https://www.loom.com/share/123":                    "Loom",
		"https://home.wistia.com/medias/xfepf8u5c4":         "Wistia",
		"https://speakerdeck.com/wallat/why-backbone":       "Speaker Deck",
		"https://www.mixcloud.com/someone/a-set/":           "Mixcloud",
		"https://evil.test/www.youtube.com/watch?v=1":       "",
		"https://www.youtube.com.evil.test/watch?v=1":       "",
		"https://evil.test/?u=https://youtu.be/abc":         "",
		"https://notyoutube.com/watch?v=1":                  "",
		"https://twitter.com/Interior":                      "",
	}
	for raw, want := range cases {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := r.find(u)
		if p.Name != want {
			t.Errorf("%s: provider %q, want %q", raw, p.Name, want)
		}
	}
}

func TestDiscover(t *testing.T) {
	base, _ := url.Parse("https://site.test/a/b")
	cases := map[string]string{
		`<head><link rel="alternate" type="application/json+oembed" href="/o?url=x&amp;y=1"></head>`:                           "https://site.test/o?url=x&y=1",
		`<head><link type='application/json+oembed; charset=utf-8' rel='nofollow alternate' href=o>`:                           "https://site.test/a/o",
		`<head><link rel=alternate type=text/json+oembed href=//cdn.test/o></head>`:                                            "https://cdn.test/o",
		`<head><link rel="alternate" type="application/json+oembed" href="javascript:alert(1)"></head>`:                        "",
		`<head><link rel="alternate" type="application/xml+oembed" href="/x"></head>`:                                          "",
		`<head></head><link rel="alternate" type="application/json+oembed" href="/late">`:                                      "",
		`<head><style>x{}</style><noscript><link rel="alternate" type="application/json+oembed" href="/no"></noscript></head>`: "",
		`<head><link rel="alternate" type="application/json+oembed" href="/unterminated`:                                       "",
	}
	for doc, want := range cases {
		if got := discover(doc, base); got != want {
			t.Errorf("discover(%s) = %q, want %q", doc, got, want)
		}
	}
}
