package pdf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/lms-platform/lms/internal/httpx"
)

// Service serves the PDF routes behind the internal token:
//
//	POST /pdf/documents  {title, lines}  -> application/pdf
//	GET  /pdf/health                     -> {"ok": bool, "error": "..."}
//
// A request without the right X-Internal-Token answers 401: browsers never
// reach it.
type Service struct {
	// Fonts are nil when they could not be loaded; FontsErr says why, and
	// documents answer 503 until the fonts are installed.
	Fonts       *Fonts
	FontsErr    error
	InternalKey string
	Log         *slog.Logger
}

// maxRequest bounds a document request (40 lines of 300 characters).
const maxRequest = 64 << 10

// Handler serves the service's routes.
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /pdf/documents", s.document)
	mux.HandleFunc("GET /pdf/health", s.health)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpx.InternalTokenValid(r, s.InternalKey) {
			plain(w, http.StatusUnauthorized, "Invalid internal token.")
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func (s *Service) document(w http.ResponseWriter, r *http.Request) {
	var doc Document
	dec := json.NewDecoder(io.LimitReader(r.Body, maxRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		plain(w, http.StatusUnprocessableEntity, "The document is not valid JSON of title and lines.")
		return
	}
	if s.Fonts == nil {
		plain(w, http.StatusServiceUnavailable, "The PDF fonts are missing: "+s.FontsErr.Error())
		return
	}
	out, err := s.Fonts.Render(doc)
	if errors.Is(err, ErrInvalid) {
		plain(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	if err != nil {
		s.Log.Error("pdf: render", "error", err)
		plain(w, http.StatusInternalServerError, "The document could not be rendered.")
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Write(out)
}

func (s *Service) health(w http.ResponseWriter, _ *http.Request) {
	body := map[string]any{"ok": s.Fonts != nil}
	status := http.StatusOK
	if s.Fonts == nil {
		body["error"] = s.FontsErr.Error()
		status = http.StatusServiceUnavailable
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

func plain(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, msg)
}

// Client calls a PDF service over HTTP with the internal token.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// InProcess is a client of a service in this process: its requests go
// through the service's handler, token check included, without a socket.
func InProcess(s *Service) *Client {
	return &Client{BaseURL: "http://pdf.internal", Token: s.InternalKey,
		HTTP: &http.Client{Transport: handlerTransport{s.Handler()}}}
}

// Render asks the service for doc as PDF.
func (c *Client) Render(ctx context.Context, doc Document) ([]byte, error) {
	body, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(c.BaseURL, "/")+"/pdf/documents", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Internal-Token", c.Token)
	res, err := c.HTTP.Do(req)
	if err != nil {
		return nil, fmt.Errorf("pdf: call the PDF service: %w", err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("pdf: read the PDF service's answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("pdf: the PDF service answered %d: %s", res.StatusCode, out)
	}
	return out, nil
}

// handlerTransport answers requests with a handler in this process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	t.h.ServeHTTP(rec, r)
	return &http.Response{StatusCode: rec.status, Status: http.StatusText(rec.status), Header: rec.header,
		Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Request: r,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}
func (r *recorder) Write(p []byte) (int, error) {
	r.wrote = true
	return r.body.Write(p)
}
