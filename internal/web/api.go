package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// errUnreachable wraps a failure to reach the API at all (refused
// connection, timeout before an answer): the frontend answers 502.
var errUnreachable = errors.New("web: the API cannot be reached")

// apiClient calls the API over HTTP at its base URL, naming the tenant by
// the Host header, exactly as a frontend deployed on another machine would.
type apiClient struct {
	base *url.URL
	http *http.Client
}

func newAPIClient(base string, client *http.Client) (*apiClient, error) {
	u, err := url.Parse(strings.TrimSuffix(base, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web: API URL %q must be http(s)://host[:port]", base)
	}
	if client == nil {
		client = &http.Client{Transport: newTransport()}
	}
	// The frontend follows no redirect itself: proxied answers reach the
	// browser as they are (with Location rewritten).
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &apiClient{base: u, http: &c}, nil
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
	res, err := c.http.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %s %s: %v", errUnreachable, call.Method, call.Path, err)
	}
	return res, nil
}

// envelope is the API's answer: {success, message, data, errors, meta}.
type envelope struct {
	Success bool                `json:"success"`
	Message string              `json:"message"`
	Data    json.RawMessage     `json:"data"`
	Errors  map[string][]string `json:"errors"`
	Meta    *pageMeta           `json:"meta"`
}

type pageMeta struct {
	CurrentPage int `json:"current_page"`
	PerPage     int `json:"per_page"`
	Total       int `json:"total"`
	LastPage    int `json:"last_page"`
}

// apiError is an API answer other than 2xx, with the message the API
// deems safe to show.
type apiError struct {
	Status  int
	Message string
	Fields  map[string][]string
}

func (e *apiError) Error() string { return fmt.Sprintf("API %d: %s", e.Status, e.Message) }

// maxJSON caps what the frontend reads of a JSON answer it decodes.
const maxJSON = 16 << 20

// jsonCall sends a JSON body (nil: none) and decodes the envelope's data
// into out (nil: ignored). A non-2xx answer is an *apiError.
func (c *apiClient) jsonCall(ctx context.Context, call apiCall, in any, out any) (*envelope, error) {
	if in != nil {
		raw, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		call.Body = bytes.NewReader(raw)
		call.ContentLength = int64(len(raw))
		if call.Header == nil {
			call.Header = http.Header{}
		}
		call.Header.Set("Content-Type", "application/json")
	}
	if call.Header == nil {
		call.Header = http.Header{}
	}
	call.Header.Set("Accept", "application/json")
	res, err := c.do(ctx, call)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	return decodeEnvelope(res, out)
}

// decodeEnvelope reads an answer as the envelope, data into out.
func decodeEnvelope(res *http.Response, out any) (*envelope, error) {
	body, err := io.ReadAll(io.LimitReader(res.Body, maxJSON))
	if err != nil {
		return nil, fmt.Errorf("%w: reading the answer: %v", errUnreachable, err)
	}
	return parseEnvelope(res.StatusCode, body, out)
}

func parseEnvelope(status int, body []byte, out any) (*envelope, error) {
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		if status/100 != 2 {
			return nil, &apiError{Status: status, Message: http.StatusText(status)}
		}
		return nil, fmt.Errorf("web: API answer is not JSON: %w", err)
	}
	if status/100 != 2 {
		msg := env.Message
		if msg == "" {
			msg = http.StatusText(status)
		}
		return &env, &apiError{Status: status, Message: msg, Fields: env.Errors}
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return nil, fmt.Errorf("web: API data: %w", err)
		}
	}
	return &env, nil
}

// statusOf is the API status of err, or 0.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}
