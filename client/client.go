// Package client is a typed Go client of the LMS API.
//
// The operations (api.gen.go) are generated from the API's OpenAPI
// document by internal/clientgen: one method per operation, with path
// parameters as arguments, query parameters in a Params struct, the
// request body as a typed struct (a Form struct for multipart uploads)
// and the envelope's data decoded into the answer's type. Regenerate with
// `make client` (or `go generate ./client`) after changing a route.
//
// This file is the hand-written part the generated methods stand on:
// the connection, the envelope and the error.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:generate go run ../internal/clientgen -o api.gen.go

// Doer sends HTTP requests; *http.Client is one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Client calls one API server. Its With methods return changed copies, so
// one Client can serve many tenants and callers at once.
type Client struct {
	base   string // scheme://host[:port][/prefix], without trailing slash
	doer   Doer
	host   string
	token  string
	header http.Header
}

// New returns a client of the API at baseURL (http(s)://host[:port]);
// doer nil is http.DefaultClient.
func New(baseURL string, doer Doer) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: API URL %q must be http(s)://host[:port]", baseURL)
	}
	if doer == nil {
		doer = http.DefaultClient
	}
	return &Client{base: u.String(), doer: doer}, nil
}

// WithHost sends host as the Host header: the API chooses the tenant by it.
func (c *Client) WithHost(host string) *Client {
	cp := *c
	cp.host = host
	return &cp
}

// WithToken authenticates the calls with a bearer token ("": anonymous).
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// WithHeader adds a header to every call (Idempotency-Key, X-Forwarded-For...).
func (c *Client) WithHeader(key, value string) *Client {
	cp := *c
	cp.header = c.header.Clone()
	if cp.header == nil {
		cp.header = http.Header{}
	}
	cp.header.Set(key, value)
	return &cp
}

// Token is the bearer token the client sends.
func (c *Client) Token() string { return c.token }

// Error is an answer other than 2xx, read from the error envelope.
type Error struct {
	Status int
	// Message is the API's message, safe to show to the caller.
	Message string
	// Code is the envelope's "error" code ("rate_limited"), when given.
	Code string
	// Errors lists validation messages by field (422).
	Errors map[string][]string
	// Problems lists what the H5P service found wrong in a refused package
	// (422 or 413; its errors are a list, not by field).
	Problems []Problem
	// Details holds the envelope's "details" object, when given.
	Details map[string]any
	// RetryAfter is the Retry-After header of a 429 or 503.
	RetryAfter time.Duration
	// RequestID is the X-Request-Id header, to find the call in the log.
	RequestID string
}

// Problem is one problem of a refused H5P package.
type Problem struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// File is the path of the entry inside the archive.
	File string `json:"file,omitempty"`
	// Library is the library directory ("H5P.Foo-1.2") or missing library.
	Library string `json:"library,omitempty"`
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("API %d: %s", e.Status, e.Message)
	if len(e.Errors) > 0 {
		fields := make([]string, 0, len(e.Errors))
		for k, v := range e.Errors {
			fields = append(fields, k+": "+strings.Join(v, " "))
		}
		slices.Sort(fields)
		msg += " (" + strings.Join(fields, "; ") + ")"
	}
	return msg
}

// RateLimited says whether the call was refused by a rate limit; RetryAfter
// says when to try again.
func (e *Error) RateLimited() bool { return e.Status == http.StatusTooManyRequests }

// StatusOf is the API status of err (an *Error), or 0.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// Page is one page of a list and its position.
type Page[T any] struct {
	Items []T
	Meta  PageMeta
}

// PageMeta is the envelope's "meta" of a list.
type PageMeta struct {
	CurrentPage int `json:"current_page"`
	PerPage     int `json:"per_page"`
	Total       int `json:"total"`
	LastPage    int `json:"last_page"`
}

// File is a file of a multipart upload.
type File struct {
	Name    string // file name, with the extension the API checks
	Content io.Reader
}

// Ptr returns a pointer to v, for the optional fields of bodies and params.
func Ptr[T any](v T) *T { return &v }

// maxAnswer caps what the client reads of one JSON answer.
const maxAnswer = 64 << 20

// request is one call as a generated method describes it.
type request struct {
	method string
	path   string // escaped
	query  url.Values
	header http.Header
	body   func() (io.Reader, string, error) // body and its Content-Type; nil: none
	ok     []int                             // the 2xx statuses the API documents; empty: any 2xx
}

// Do sends a request and returns the answer when it is 2xx (the caller
// closes its body); any other answer is an *Error. Generated methods go
// through it; it also serves calls the document does not describe.
func (c *Client) Do(ctx context.Context, method, pathAndQuery string, body io.Reader, contentType string) (*http.Response, error) {
	req := request{method: method, path: pathAndQuery}
	if body != nil {
		req.body = rawBody(body, contentType)
	}
	return c.send(ctx, req)
}

// Call sends a JSON body (nil: none) and decodes the envelope's data into
// out (nil: ignored); any answer other than 2xx is an *Error. It serves
// routes the document does not describe yet, and callers that read an
// answer into a view of their own (only the fields they show).
func (c *Client) Call(ctx context.Context, method, pathAndQuery string, in, out any) error {
	req := request{method: method, path: pathAndQuery}
	if in != nil {
		req.body = jsonBody(in)
	}
	return c.call(ctx, req, out)
}

func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	var body io.Reader
	ctype := ""
	if r.body != nil {
		var err error
		if body, ctype, err = r.body(); err != nil {
			return nil, err
		}
	}
	target := c.base + r.path
	if len(r.query) > 0 {
		target += "?" + r.query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, body)
	if err != nil {
		return nil, err
	}
	for k, vs := range c.header {
		req.Header[k] = vs
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	if c.host != "" {
		req.Host = c.host
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := c.doer.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		defer res.Body.Close()
		return nil, readError(res)
	}
	if len(r.ok) > 0 && !slices.Contains(r.ok, res.StatusCode) {
		res.Body.Close()
		return nil, &Error{Status: res.StatusCode, Code: "undocumented_status", RequestID: res.Header.Get("X-Request-Id"),
			Message: fmt.Sprintf("%s %s answered %d; the API documents %v", r.method, r.path, res.StatusCode, r.ok)}
	}
	return res, nil
}

// readError reads a non-2xx answer as the error envelope.
func readError(res *http.Response) *Error {
	raw, _ := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	return decodeError(res.StatusCode, res.Header, raw)
}

func decodeError(status int, header http.Header, raw []byte) *Error {
	e := &Error{Status: status, RequestID: header.Get("X-Request-Id")}
	if s, err := strconv.Atoi(header.Get("Retry-After")); err == nil {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	var env struct {
		Message string          `json:"message"`
		Code    string          `json:"error"`
		Errors  json.RawMessage `json:"errors"`
		Details map[string]any  `json:"details"`
	}
	if json.Unmarshal(raw, &env) == nil {
		e.Message, e.Code, e.Details = env.Message, env.Code, env.Details
		// Errors by field, or the H5P service's list of package problems.
		if len(env.Errors) > 0 && json.Unmarshal(env.Errors, &e.Errors) != nil {
			json.Unmarshal(env.Errors, &e.Problems)
		}
	}
	if e.Message == "" {
		e.Message = http.StatusText(status)
	}
	return e
}

// envelope is a 2xx answer: {success, message, data, meta}.
type envelope struct {
	Data json.RawMessage `json:"data"`
	Meta PageMeta        `json:"meta"`
}

// decodeData reads a 2xx answer's envelope, its data into out (nil:
// ignored).
func decodeData(raw []byte, out any) (*envelope, error) {
	var env envelope
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("answer is not the JSON envelope: %w", err)
	}
	if out != nil && len(env.Data) > 0 && !bytes.Equal(env.Data, []byte("null")) {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return nil, fmt.Errorf("decoding data: %w", err)
		}
	}
	return &env, nil
}

// Decode reads an answer that reached the caller some other way (a cache
// of raw answers, a streamed proxy call) as the generated methods do: the
// data into out (nil: ignored) and the page meta of a list, or an *Error
// for a status other than 2xx. header may be nil.
func Decode(status int, header http.Header, body []byte, out any) (PageMeta, error) {
	if status/100 != 2 {
		return PageMeta{}, decodeError(status, header, body)
	}
	env, err := decodeData(body, out)
	if err != nil {
		return PageMeta{}, fmt.Errorf("client: %w", err)
	}
	return env.Meta, nil
}

// call sends the request and decodes the envelope's data into out (nil:
// ignored).
func (c *Client) call(ctx context.Context, r request, out any) error {
	_, err := c.callEnvelope(ctx, r, out)
	return err
}

func (c *Client) callEnvelope(ctx context.Context, r request, out any) (*envelope, error) {
	res, err := c.send(ctx, r)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
	if err != nil {
		return nil, err
	}
	env, err := decodeData(raw, out)
	if err != nil {
		return nil, fmt.Errorf("client: %s %s: %w", r.method, r.path, err)
	}
	return env, nil
}

// callPage sends a list request and returns its page.
func callPage[T any](ctx context.Context, c *Client, r request) (*Page[T], error) {
	p := &Page[T]{}
	env, err := c.callEnvelope(ctx, r, &p.Items)
	if err != nil {
		return nil, err
	}
	p.Meta = env.Meta
	return p, nil
}

// rawBody is a request body sent as it is.
func rawBody(body io.Reader, contentType string) func() (io.Reader, string, error) {
	return func() (io.Reader, string, error) { return body, contentType, nil }
}

// jsonBody is a JSON request body.
func jsonBody(v any) func() (io.Reader, string, error) {
	return func() (io.Reader, string, error) {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, "", err
		}
		return bytes.NewReader(raw), "application/json", nil
	}
}

// form is a generated multipart form.
type form interface {
	writeForm(w *multipart.Writer) error
}

// formBody streams a multipart form, so large uploads are not held in
// memory.
func formBody(f form) func() (io.Reader, string, error) {
	return func() (io.Reader, string, error) {
		pr, pw := io.Pipe()
		w := multipart.NewWriter(pw)
		go func() {
			err := f.writeForm(w)
			if err == nil {
				err = w.Close()
			}
			pw.CloseWithError(err)
		}()
		return pr, w.FormDataContentType(), nil
	}
}

// formField is one field of a generated form, in the order sent.
type formField struct {
	name  string
	value any
}

func writeFields(w *multipart.Writer, fields []formField) error {
	for _, f := range fields {
		if err := writeField(w, f.name, f.value); err != nil {
			return err
		}
	}
	return nil
}

// writeField writes one form field; unset (nil) values are left out.
func writeField(w *multipart.Writer, name string, v any) error {
	switch v := v.(type) {
	case *File:
		if v == nil {
			return nil
		}
		return writeFile(w, name, *v)
	case []File:
		for _, f := range v {
			if err := writeFile(w, name, f); err != nil {
				return err
			}
		}
		return nil
	case map[string]string:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := w.WriteField(k, v[k]); err != nil {
				return err
			}
		}
		return nil
	case map[string]File:
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if err := writeFile(w, k, v[k]); err != nil {
				return err
			}
		}
		return nil
	}
	for _, s := range values(v) {
		if err := w.WriteField(name, s); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(w *multipart.Writer, name string, f File) error {
	part, err := w.CreateFormFile(name, f.Name)
	if err != nil {
		return err
	}
	if f.Content == nil {
		return nil
	}
	_, err = io.Copy(part, f.Content)
	return err
}

// addQuery adds a query parameter; unset (nil) values are left out.
func addQuery(q url.Values, name string, v any) {
	for _, s := range values(v) {
		q.Add(name, s)
	}
}

// addQueryList adds a list parameter as one comma-separated value (a
// query parameter the document declares with explode false).
//
//lint:ignore U1000 the generated api.gen.go calls it whenever the OpenAPI document has such a parameter (none today); clientgen's tests cover it.
func addQueryList(q url.Values, name string, v any) {
	if s := values(v); len(s) > 0 {
		q.Add(name, strings.Join(s, ","))
	}
}

// values is the text of a parameter or form value: nothing for nil,
// one per element for a list, JSON for anything else structured.
func values(v any) []string {
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		return []string{v}
	case *string:
		if v == nil {
			return nil
		}
		return []string{*v}
	case int64:
		return []string{strconv.FormatInt(v, 10)}
	case *int64:
		if v == nil {
			return nil
		}
		return []string{strconv.FormatInt(*v, 10)}
	case float64:
		return []string{strconv.FormatFloat(v, 'f', -1, 64)}
	case *float64:
		if v == nil {
			return nil
		}
		return []string{strconv.FormatFloat(*v, 'f', -1, 64)}
	case bool:
		return []string{strconv.FormatBool(v)}
	case *bool:
		if v == nil {
			return nil
		}
		return []string{strconv.FormatBool(*v)}
	case time.Time:
		return []string{v.Format(time.RFC3339Nano)}
	case *time.Time:
		if v == nil {
			return nil
		}
		return []string{v.Format(time.RFC3339Nano)}
	case []string:
		return v
	case []int64:
		out := make([]string, len(v))
		for i, n := range v {
			out[i] = strconv.FormatInt(n, 10)
		}
		return out
	}
	raw, err := json.Marshal(v)
	if err != nil || string(raw) == "null" {
		return nil
	}
	return []string{string(raw)}
}

// setHeader sets a header parameter unless it is unset (nil).
func setHeader(h http.Header, name string, v any) {
	if s := values(v); len(s) > 0 {
		h.Set(name, s[0])
	}
}

// pathParam is a path parameter, escaped.
func pathParam(v any) string {
	s := values(v)
	if len(s) == 0 {
		return ""
	}
	return url.PathEscape(s[0])
}

// withExtra marshals a body with its additional fields beside the listed
// ones (the listed ones win).
func withExtra(listed any, extra map[string]any) ([]byte, error) {
	raw, err := json.Marshal(listed)
	if err != nil || len(extra) == 0 {
		return raw, err
	}
	merged := map[string]json.RawMessage{}
	if err := json.Unmarshal(raw, &merged); err != nil {
		return nil, err
	}
	for k, v := range extra {
		if _, listed := merged[k]; listed {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		merged[k] = b
	}
	return json.Marshal(merged)
}
