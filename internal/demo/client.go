package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"sort"
	"strings"
)

// apiClient calls the API in process, as a signed-in author would over
// HTTP: the seed goes through the same validation, events and storage as
// any client.
type apiClient struct {
	handler http.Handler
	host    string
	token   string
}

// envelope is the API's answer.
type envelope struct {
	Success bool                `json:"success"`
	Message string              `json:"message"`
	Data    json.RawMessage     `json:"data"`
	Errors  map[string][]string `json:"errors"`
}

// recorder is the response writer of an in-process call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(b)
}

// send makes one call and decodes data into out (when not nil).
func (c *apiClient) send(ctx context.Context, method, path, contentType string, body io.Reader, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+c.host+path, body)
	if err != nil {
		return err
	}
	req.Host = c.host
	req.RemoteAddr = "127.0.0.1:0"
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	rec := &recorder{header: http.Header{}}
	c.handler.ServeHTTP(rec, req)
	var env envelope
	_ = json.Unmarshal(rec.body.Bytes(), &env)
	if rec.status < 200 || rec.status >= 300 {
		return fmt.Errorf("demo: %s %s: %d %s%s", method, path, rec.status, env.Message, fieldErrors(env.Errors))
	}
	if out != nil && len(env.Data) > 0 {
		if err := json.Unmarshal(env.Data, out); err != nil {
			return fmt.Errorf("demo: %s %s: decode answer: %w", method, path, err)
		}
	}
	return nil
}

func fieldErrors(errs map[string][]string) string {
	if len(errs) == 0 {
		return ""
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ": " + strings.Join(errs[k], " ")
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// json sends a JSON body.
func (c *apiClient) json(ctx context.Context, method, path string, body, out any) error {
	var r io.Reader
	ctype := ""
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r, ctype = bytes.NewReader(raw), "application/json"
	}
	return c.send(ctx, method, path, ctype, r, out)
}

// upload is a file of a multipart form.
type upload struct {
	field, name string
	data        []byte
}

// form sends multipart form data with text fields and one file.
func (c *apiClient) form(ctx context.Context, method, path string, fields map[string]string, file upload, out any) error {
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := w.WriteField(k, fields[k]); err != nil {
			return err
		}
	}
	part, err := w.CreateFormFile(file.field, file.name)
	if err != nil {
		return err
	}
	if _, err := part.Write(file.data); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.send(ctx, method, path, w.FormDataContentType(), &b, out)
}
