// Package fetch makes outbound HTTP requests to URLs that users give
// (oEmbed pages and endpoints, later JWKS and webhooks) without letting them
// reach the platform's own network: every address is checked when it is
// dialled, after the name was resolved, so a DNS answer that changes between
// a check and a connection (rebinding) or a redirect to an internal host is
// refused as well.
package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
)

// Defaults of Options.
const (
	DefaultTimeout        = 10 * time.Second
	DefaultConnectTimeout = 5 * time.Second
	DefaultMaxBody        = 1 << 20
	DefaultMaxRedirects   = 5
	DefaultUserAgent      = "LMS-Fetch/1.0 (+https://oembed.com)"
)

// ErrRefused is the cause of every error about a URL or address the client
// will not fetch (scheme, private address, redirect count, body size), as
// opposed to a fetch that failed; errors.Is tells them apart.
var ErrRefused = errors.New("fetch: refused")

// Options configure a Client; zero values take the defaults.
type Options struct {
	// AllowPrivate turns the address check off: for deployments that
	// fetch from their own network on purpose.
	AllowPrivate bool
	// Timeout bounds a whole Get, redirects and body included.
	Timeout time.Duration
	// ConnectTimeout bounds one connection attempt.
	ConnectTimeout time.Duration
	// MaxBody is the largest body Get reads, in bytes.
	MaxBody int64
	// MaxRedirects is the number of redirects Get follows.
	MaxRedirects int
	// UserAgent is sent with every request.
	UserAgent string

	// Resolve looks up the addresses of a host name; nil uses the system
	// resolver. Tests map made-up names to addresses here.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address that passed the check; nil dials it.
	// Tests route checked public addresses to local test servers here, so
	// the check itself stays on.
	Dial func(ctx context.Context, network string, addr netip.AddrPort) (net.Conn, error)
}

// Client fetches user-given URLs. It is safe for concurrent use.
type Client struct {
	opts Options
	http *http.Client
}

// Response is a fetched response with its body read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// FinalURL is the URL after redirects.
	FinalURL string
	// Truncated is set by GetPartial when the body was cut at the cap.
	Truncated bool
}

// New returns a client with opts.
func New(opts Options) *Client {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.MaxBody <= 0 {
		opts.MaxBody = DefaultMaxBody
	}
	if opts.MaxRedirects <= 0 {
		opts.MaxRedirects = DefaultMaxRedirects
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	c := &Client{opts: opts}
	transport := &http.Transport{
		// No proxy: a proxy would dial the user's host itself, past the check.
		Proxy:                 nil,
		DialContext:           c.dial,
		TLSHandshakeTimeout:   opts.ConnectTimeout,
		ResponseHeaderTimeout: opts.Timeout,
		MaxIdleConns:          16,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	c.http = &http.Client{
		Transport:     transport,
		Timeout:       opts.Timeout,
		CheckRedirect: c.checkRedirect,
	}
	return c
}

// Get fetches rawURL and reads its body up to the client's cap. A response
// with any status is returned without error; errors are refusals
// (apperr.Invalid with ErrRefused as cause, the message saying what was
// refused: a scheme, a non-public address, too many redirects, a body over
// the cap) or failures to fetch (apperr.Invalid, "The URL could not be
// fetched." and the like).
func (c *Client) Get(ctx context.Context, rawURL string) (*Response, error) {
	return c.get(ctx, rawURL, false)
}

// GetPartial is Get for documents whose useful part comes first (the head
// of an HTML page): a body over the cap is cut at the cap and marked
// Truncated instead of refused.
func (c *Client) GetPartial(ctx context.Context, rawURL string) (*Response, error) {
	return c.get(ctx, rawURL, true)
}

// Send makes a request of any method with the headers given (Content-Type
// and Authorization among them) and body (nil: none) under the same
// checks as Get, and reads the answer as Get does: for calls to services
// at user-given URLs (LTI grade services).
func (c *Client) Send(ctx context.Context, method, rawURL string, header http.Header, body []byte) (*Response, error) {
	return c.do(ctx, method, rawURL, header, body, false)
}

// HTTPClient is an *http.Client under the same checks (address, scheme,
// redirects, timeout), for libraries that make their own requests (the
// OpenID Connect discovery, key sets and token calls of social login); a
// body over the cap fails to read instead of being read whole.
func (c *Client) HTTPClient() *http.Client {
	return &http.Client{Transport: cappedTransport{next: c.http.Transport, max: c.opts.MaxBody},
		Timeout: c.opts.Timeout, CheckRedirect: c.http.CheckRedirect}
}

type cappedTransport struct {
	next http.RoundTripper
	max  int64
}

func (t cappedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	resp.Body = &cappedBody{ReadCloser: resp.Body, max: t.max, left: t.max}
	return resp, nil
}

func (c *Client) get(ctx context.Context, rawURL string, partial bool) (*Response, error) {
	return c.do(ctx, http.MethodGet, rawURL, nil, nil, partial)
}

// Stream is a fetched response whose body the caller reads.
type Stream struct {
	Status int
	Header http.Header
	// Body reads up to the client's cap; reading past it fails with a
	// refusal (ErrRefused).
	Body io.ReadCloser
}

// Open makes a GET request with the headers given (If-None-Match, ...)
// under the same checks as Get, and leaves the body to the caller: for
// files too large to hold in memory (a meeting's recording). The
// client's Timeout bounds the reading of the body too.
func (c *Client) Open(ctx context.Context, rawURL string, header http.Header) (*Stream, error) {
	resp, err := c.request(ctx, http.MethodGet, rawURL, header, nil)
	if err != nil {
		return nil, err
	}
	return &Stream{Status: resp.StatusCode, Header: resp.Header,
		Body: &cappedBody{ReadCloser: resp.Body, max: c.opts.MaxBody, left: c.opts.MaxBody}}, nil
}

// cappedBody fails a read that goes past the cap, rather than ending
// quietly, so a cut file is never taken for a whole one.
type cappedBody struct {
	io.ReadCloser
	max, left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, b.tooLarge()
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, b.tooLarge()
	}
	return n, err
}

func (b *cappedBody) tooLarge() error {
	return refused(fmt.Sprintf("The response is larger than %s.", size(b.max)), nil)
}

func (c *Client) request(ctx context.Context, method, rawURL string, header http.Header, body []byte) (*http.Response, error) {
	u, err := CheckURL(rawURL)
	if err != nil {
		return nil, err
	}
	var reader io.Reader
	if body != nil {
		reader = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), reader)
	if err != nil {
		return nil, refused("The URL is not valid.", err)
	}
	req.Header.Set("Accept", "application/json, text/html;q=0.9, */*;q=0.5")
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, failure(err)
	}
	return resp, nil
}

func (c *Client) do(ctx context.Context, method, rawURL string, header http.Header, body []byte, partial bool) (*Response, error) {
	resp, err := c.request(ctx, method, rawURL, header, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBody+1))
	if err != nil {
		return nil, failure(err)
	}
	truncated := int64(len(answer)) > c.opts.MaxBody
	if truncated {
		if !partial {
			return nil, refused(fmt.Sprintf("The response is larger than %s.", size(c.opts.MaxBody)), nil)
		}
		answer = answer[:c.opts.MaxBody]
	}
	return &Response{
		Status:    resp.StatusCode,
		Header:    resp.Header,
		Body:      answer,
		FinalURL:  resp.Request.URL.String(),
		Truncated: truncated,
	}, nil
}

// CheckURL parses a URL a user gave and refuses anything but an absolute
// http or https URL with a host. It does not look at the address; the
// client does that when it dials.
func CheckURL(rawURL string) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, refused("The URL is not valid.", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, refused("Only http and https URLs can be fetched.", nil)
	}
	if u.Hostname() == "" {
		return nil, refused("The URL has no host.", nil)
	}
	return u, nil
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.opts.MaxRedirects {
		return refused(fmt.Sprintf("The URL redirects more than %d times.", c.opts.MaxRedirects), nil)
	}
	if _, err := CheckURL(req.URL.String()); err != nil {
		return err
	}
	return nil
}

// dial resolves the host of addr, refuses it when any of its addresses is
// not public, and connects to the checked addresses in turn. Connecting to
// the very addresses checked, not to the name again, is what defeats DNS
// rebinding.
func (c *Client) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, refused("The URL is not valid.", err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, refused("The URL has an invalid port.", err)
	}
	addrs, err := c.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	if !c.opts.AllowPrivate {
		for _, a := range addrs {
			if msg := refusal(a); msg != "" {
				return nil, refused(msg, nil)
			}
		}
	}
	var firstErr error
	for _, a := range addrs {
		conn, err := c.connect(ctx, network, netip.AddrPortFrom(a, uint16(port)))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

func (c *Client) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	lookup := c.opts.Resolve
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, apperr.Wrap(apperr.Invalid, err, "The host of the URL could not be found.")
	}
	if len(addrs) == 0 {
		return nil, apperr.New(apperr.Invalid, "The host of the URL could not be found.")
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

func (c *Client) connect(ctx context.Context, network string, ap netip.AddrPort) (net.Conn, error) {
	if c.opts.Dial != nil {
		return c.opts.Dial(ctx, network, ap)
	}
	d := net.Dialer{Timeout: c.opts.ConnectTimeout, Control: c.control}
	return d.DialContext(ctx, network, ap.String())
}

// control checks the address once more on the socket itself, so a future
// change of dial cannot skip the check.
func (c *Client) control(network, address string, _ syscall.RawConn) error {
	if c.opts.AllowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return refused("The URL is not valid.", err)
	}
	if msg := refusal(ap.Addr()); msg != "" {
		return refused(msg, nil)
	}
	return nil
}

// refused is an error about the URL itself, shown to the caller.
func refused(msg string, cause error) *apperr.Error {
	if cause == nil {
		cause = ErrRefused
	} else {
		cause = fmt.Errorf("%w: %w", ErrRefused, cause)
	}
	return apperr.Wrap(apperr.Invalid, cause, msg)
}

// failure turns a transport error into one the caller can show, keeping
// a refusal that happened inside the transport (at dial or redirect).
func failure(err error) error {
	if e := apperr.As(err); e != nil {
		return e
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return apperr.Wrap(apperr.Invalid, err, "The URL did not answer in time.")
	}
	return apperr.Wrap(apperr.Invalid, err, "The URL could not be fetched.")
}

func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
