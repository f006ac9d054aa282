package httpx

import (
	"net/http"
	"strconv"
	"sync"
)

// heldBody is how much of an answer the recorder holds back. An answer
// that fits goes out in one write with its Content-Length; left to
// net/http, anything over 2 KB is sent chunked, in several system calls,
// which cost a program or catalogue answer more than building it.
const heldBody = 256 << 10

var bodyBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

// recorder remembers the status and size of a response and holds its body
// back (up to heldBody) until the handler returns. A larger body, or a
// handler that flushes, streams through as before.
type recorder struct {
	http.ResponseWriter
	status int
	size   int
	body   *[]byte
	sent   bool // the status line went out: writes pass straight through
}

func newRecorder(w http.ResponseWriter) *recorder {
	return &recorder{ResponseWriter: w, body: bodyBuffers.Get().(*[]byte)}
}

func (r *recorder) WriteHeader(status int) {
	if status < 200 {
		r.ResponseWriter.WriteHeader(status) // informational: not the answer's status
		return
	}
	if r.status == 0 {
		r.status = status
	}
	if r.sent {
		r.ResponseWriter.WriteHeader(status)
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.size += len(b)
	if r.sent {
		return r.ResponseWriter.Write(b)
	}
	if len(*r.body)+len(b) <= heldBody {
		*r.body = append(*r.body, b...)
		return len(b), nil
	}
	if err := r.send(); err != nil {
		return 0, err
	}
	return r.ResponseWriter.Write(b)
}

// send writes the status and what is held, and lets the rest through.
func (r *recorder) send() error {
	if r.sent {
		return nil
	}
	r.sent = true
	if r.status != 0 {
		r.ResponseWriter.WriteHeader(r.status)
	}
	if len(*r.body) == 0 {
		return nil
	}
	_, err := r.ResponseWriter.Write(*r.body)
	*r.body = (*r.body)[:0]
	return err
}

// Flush sends what is held, then flushes: a streaming handler's writes
// arrive in order.
func (r *recorder) Flush() {
	r.send()
	http.NewResponseController(r.ResponseWriter).Flush()
}

// reset drops what is held, for an error answer to replace it.
func (r *recorder) reset() {
	r.status, r.size = 0, 0
	*r.body = (*r.body)[:0]
	for _, h := range []string{"Content-Type", "Content-Length", "Content-Disposition", "Content-Encoding"} {
		r.Header().Del(h)
	}
}

// finish sends the answer when the handler has returned: in one write with
// its length when it was held whole. A HEAD answer's length is the GET
// body's, which is not here, so it is left to the handler.
func (r *recorder) finish(req *http.Request) {
	if !r.sent {
		if r.status == 0 {
			r.status = http.StatusOK
		}
		h := r.Header()
		if req.Method != http.MethodHead && bodyAllowed(r.status) && h.Get("Content-Length") == "" &&
			h.Get("Transfer-Encoding") == "" {
			h.Set("Content-Length", strconv.Itoa(len(*r.body)))
		}
		r.send()
	}
	if cap(*r.body) <= heldBody {
		*r.body = (*r.body)[:0]
		bodyBuffers.Put(r.body)
	}
	r.body = nil
}

func bodyAllowed(status int) bool {
	return status != http.StatusNoContent && status != http.StatusNotModified
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
