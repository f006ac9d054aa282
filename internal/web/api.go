package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
)

// errUnreachable wraps a failure to reach the API at all (refused
// connection, timeout before an answer): the frontend answers 502.
var errUnreachable = errors.New("web: the API cannot be reached")

// apiClient calls the API over HTTP at its base URL, naming the tenant by
// the Host header, exactly as a frontend deployed on another machine would:
// pages through the typed client (as), the /bff/ and /h5p/ proxies and the
// public cache through raw calls (do) whose answers pass unchanged.
type apiClient struct {
	base  *url.URL
	http  *http.Client
	typed *client.Client
}

func newAPIClient(base string, hc *http.Client) (*apiClient, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web: API URL %q must be http(s)://host[:port]", base)
	}
	if hc == nil {
		hc = &http.Client{Transport: newTransport()}
	}
	// The frontend follows no redirect itself: proxied answers reach the
	// browser as they are (with Location rewritten).
	c := *hc
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	typed, err := client.New(u.String(), unreachable{&c})
	if err != nil {
		return nil, err
	}
	return &apiClient{base: u, http: &c, typed: typed}, nil
}

// as is the typed client for the tenant at host, signed in with token
// ("": anonymous).
func (c *apiClient) as(host, token string) *client.Client {
	return c.typed.WithHost(host).WithToken(token)
}

// keeping is the typed client of as whose answers' cookies k records:
// the typed client reads only the bodies.
func (c *apiClient) keeping(host, token string, k *cookieKeeper) *client.Client {
	k.next = unreachable{c.http}
	typed, _ := client.New(c.base.String(), k)
	return typed.WithHost(host).WithToken(token)
}

// cookieKeeper sends requests and keeps the cookies the answers set.
type cookieKeeper struct {
	next    client.Doer
	cookies []*http.Cookie
}

func (k *cookieKeeper) Do(req *http.Request) (*http.Response, error) {
	res, err := k.next.Do(req)
	if err == nil {
		k.cookies = append(k.cookies, res.Cookies()...)
	}
	return res, err
}

// unreachable sends requests, a transport failure becoming errUnreachable.
type unreachable struct{ http *http.Client }

func (u unreachable) Do(req *http.Request) (*http.Response, error) {
	res, err := u.http.Do(req)
	if err != nil {
		if ctx := req.Context(); ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %s %s: %v", errUnreachable, req.Method, req.URL.Path, err)
	}
	return res, nil
}

// newTransport keeps enough idle connections for a busy frontend and never
// decompresses, so proxied bytes reach the browser unchanged.
func newTransport() *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
	}
}

// apiCall is one request to the API.
type apiCall struct {
	Method string
	// Path is the API path with its query ("/api/courses?page=2").
	Path  string
	Host  string // tenant host
	Token string // empty: anonymous
	Body  io.Reader
	// Header is copied onto the request (Content-Type, Idempotency-Key...).
	Header http.Header
	// ContentLength is the body's length when known (-1: unknown).
	ContentLength int64
}

func (c *apiClient) url(path string) string {
	return c.base.Scheme + "://" + c.base.Host + strings.TrimSuffix(c.base.Path, "/") + path
}

// do sends the call. A transport failure is errUnreachable; any answer,
// whatever its status, is returned for the caller to read and close.
func (c *apiClient) do(ctx context.Context, call apiCall) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, call.Method, c.url(call.Path), call.Body)
	if err != nil {
		return nil, err
	}
	for k, vs := range call.Header {
		req.Header[k] = vs
	}
	if call.ContentLength > 0 {
		req.ContentLength = call.ContentLength
	}
	req.Host = call.Host
	if call.Token != "" {
		req.Header.Set("Authorization", "Bearer "+call.Token)
	}
	return unreachable{c.http}.Do(req)
}

// maxJSON caps what the frontend reads of a JSON answer it decodes.
const maxJSON = 16 << 20

// readAnswer reads the answer of a raw call as the typed client would: an
// *client.Error unless it is 2xx.
func readAnswer(res *http.Response) error {
	body, err := io.ReadAll(io.LimitReader(res.Body, maxJSON))
	if err != nil {
		return fmt.Errorf("%w: reading the answer: %v", errUnreachable, err)
	}
	_, err = client.Decode(res.StatusCode, res.Header, body, nil)
	return err
}
