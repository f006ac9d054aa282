package lmsctl

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/ops"
)

// maxWaits bounds how often --wait retries one call after a 429.
const maxWaits = 5

// Caller sends registry operations for one profile. The command line and
// the MCP tools both call through it, so they check input, retry and
// report errors alike.
type Caller struct {
	Client *client.Client
	// Wait retries a call refused with 429 after its Retry-After.
	Wait bool
	// Sleep waits d or until ctx ends (time.Sleep with a context by default).
	Sleep func(ctx context.Context, d time.Duration) error
	// Notify tells a person what is happening (waiting for a limit); nil: quiet.
	Notify func(msg string)
	// Progress follows the upload of form data (bytes sent of all); nil: quiet.
	Progress func(sent, total int64)
}

// Input is an operation's input: parameters by name and the JSON body.
type Input struct {
	Params map[string]string
	Body   map[string]any
}

// Result is the envelope of a successful answer: its data, and its meta
// for pages of a list.
type Result struct {
	Data json.RawMessage `json:"data"`
	Meta json.RawMessage `json:"meta,omitempty"`
}

// Check refuses input the operation cannot take, before anything is sent.
func Check(op ops.Operation, in Input) error {
	for _, p := range op.Params {
		if v, ok := in.Params[p.Name]; ok {
			if err := checkScalar(p.Type(), v); err != nil {
				return usagef("%s: parameter %s: %v", op.Name, p.Name, err)
			}
		} else if p.Required {
			return usagef("%s: parameter %s is required", op.Name, p.Name)
		}
	}
	for name := range in.Params {
		if !hasParam(op, name) {
			return usagef("%s: unknown parameter %s", op.Name, name)
		}
	}
	if op.Body == nil {
		if in.Body != nil {
			return usagef("%s takes no body", op.Name)
		}
		return nil
	}
	if in.Body == nil && op.BodyRequired {
		return usagef("%s: a JSON body is required", op.Name)
	}
	for _, p := range op.BodyProperties() {
		if _, ok := in.Body[p.Name]; p.Required && in.Body != nil && !ok {
			return usagef("%s: body field %s is required", op.Name, p.Name)
		}
	}
	return nil
}

func hasParam(op ops.Operation, name string) bool {
	for _, p := range op.Params {
		if p.Name == name {
			return true
		}
	}
	return false
}

func checkScalar(typ, v string) error {
	var err error
	switch typ {
	case "integer":
		_, err = strconv.ParseInt(v, 10, 64)
	case "number":
		_, err = strconv.ParseFloat(v, 64)
	case "boolean":
		_, err = strconv.ParseBool(v)
	}
	if err != nil {
		return fmt.Errorf("%q is not a valid %s", v, typ)
	}
	return nil
}

// Call checks the input and sends the operation. A write carries one
// Idempotency-Key, the same on each retry, so a retry never repeats it.
func (c *Caller) Call(ctx context.Context, op ops.Operation, in Input) (Result, error) {
	if err := Check(op, in); err != nil {
		return Result{}, err
	}
	var b body
	if in.Body != nil {
		raw, err := json.Marshal(in.Body)
		if err != nil {
			return Result{}, usagef("%s: body: %v", op.Name, err)
		}
		b = jsonBody(raw)
	}
	return c.send(ctx, op.Method, target(op, in), b, "application/json")
}

// CallForm sends an operation that takes form data: the fields, and the
// files at the paths given per field.
func (c *Caller) CallForm(ctx context.Context, op ops.Operation, in Input, fields map[string]any, files map[string]string) (Result, error) {
	if err := Check(op, in); err != nil {
		return Result{}, err
	}
	for _, f := range op.FormFields() {
		_, isField := fields[f.Name]
		_, isFile := files[f.Name]
		if f.Required && !isField && !isFile {
			return Result{}, usagef("%s: form field %s is required", op.Name, f.Name)
		}
	}
	form, ctype, err := multipartForm(fields, files)
	if err != nil {
		return Result{}, err
	}
	return c.send(ctx, op.Method, target(op, in), form, ctype)
}

// target is the operation's path with its parameters filled in and its
// query.
func target(op ops.Operation, in Input) string {
	target := op.Path
	query := url.Values{}
	for _, p := range op.Params {
		v, ok := in.Params[p.Name]
		if !ok {
			continue
		}
		if p.In == "path" {
			target = strings.Replace(target, "{"+p.Name+"}", url.PathEscape(v), 1)
		} else {
			query.Set(p.Name, v)
		}
	}
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	return target
}

// send sends one request (a body of contentType, or none) with the
// retries --wait allows, and reads the envelope.
func (c *Caller) send(ctx context.Context, method, target string, b body, contentType string) (Result, error) {
	res, err := c.do(ctx, method, target, b, contentType)
	if err != nil {
		return Result{}, err
	}
	return readResult(res)
}

// do sends one request with the retries --wait allows and returns the
// answer unread, for callers that need its headers too.
func (c *Caller) do(ctx context.Context, method, target string, b body, contentType string) (*http.Response, error) {
	cl := c.Client
	if method != http.MethodGet {
		cl = cl.WithHeader("Idempotency-Key", newKey())
	}
	for attempt := 0; ; attempt++ {
		var rd io.Reader
		if b != nil {
			rc, size, err := b.open()
			if err != nil {
				return nil, err
			}
			defer rc.Close()
			rd = rc
			if c.Progress != nil && contentType != "application/json" {
				rd = &progressReader{r: rd, total: size, report: c.Progress}
			}
		}
		res, err := cl.Do(ctx, method, target, rd, contentType)
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.RateLimited() && c.Wait && attempt < maxWaits {
			wait := max(apiErr.RetryAfter, time.Second)
			if c.Notify != nil {
				c.Notify(fmt.Sprintf("rate limited: retrying in %s", wait))
			}
			if err := c.sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		}
		return res, err
	}
}

func (c *Caller) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func readResult(res *http.Response) (Result, error) {
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return Result{}, err
	}
	var env struct {
		Data json.RawMessage `json:"data"`
		Meta json.RawMessage `json:"meta"`
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &env); err != nil {
			return Result{}, fmt.Errorf("the answer is not the API's JSON envelope: %w", err)
		}
	}
	if len(env.Data) == 0 {
		env.Data = json.RawMessage("null")
	}
	return Result{Data: env.Data, Meta: env.Meta}, nil
}

func newKey() string {
	b := make([]byte, 16)
	rand.Read(b)
	return "lmsctl-" + hex.EncodeToString(b)
}

// progressReader reports how much of a body has been read (sent).
type progressReader struct {
	r      io.Reader
	sent   int64
	total  int64
	report func(sent, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.sent += int64(n)
		p.report(p.sent, p.total)
	}
	return n, err
}
