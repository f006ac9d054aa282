package demo

import (
	"bytes"
	"io"
	"net/http"

	"github.com/lms-platform/lms/client"
)

// apiClient is the typed API client serving its calls in process, as a
// signed-in author would over HTTP: the seed goes through the same
// validation, events and storage as any client.
func apiClient(handler http.Handler, host, token string) (*client.Client, error) {
	// The base URL only names the host: nothing is dialled.
	c, err := client.New("http://"+host, handlerDoer{handler})
	if err != nil {
		return nil, err
	}
	return c.WithHost(host).WithToken(token), nil
}

// handlerDoer answers the client's requests with the API handler.
type handlerDoer struct{ handler http.Handler }

func (d handlerDoer) Do(req *http.Request) (*http.Response, error) {
	// As a server would see it: from the loopback, and a streamed body
	// of unknown length.
	req.RemoteAddr = "127.0.0.1:0"
	if req.Body != nil && req.Body != http.NoBody && req.ContentLength == 0 {
		req.ContentLength = -1
	}
	rec := &recorder{header: http.Header{}}
	d.handler.ServeHTTP(rec, req)
	if req.Body != nil {
		// As the HTTP server does: a handler that answered before reading
		// the whole body must not leave the client's writer waiting.
		req.Body.Close()
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{StatusCode: rec.status, Status: http.StatusText(rec.status), Header: rec.header,
		Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Request: req}, nil
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
