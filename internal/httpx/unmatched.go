package httpx

import (
	"net/http"
	"strings"
)

// Unmatched serves mux, answering in the envelope where the ServeMux would
// answer in plain text: a path no pattern matches is 404 "Not found.", a
// path matched only under other methods is 405 "Method not allowed." with
// the ServeMux's Allow header. wrap, when not nil, runs before those
// answers (the H5P service resolves the tenant first, so an unknown host
// still answers "Unknown tenant."). Redirects to a cleaned path pass
// through.
func Unmatched(mux *http.ServeMux, wrap Middleware) http.Handler {
	var miss http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h, _ := mux.Handler(r)
		answer := &muxAnswer{header: http.Header{}}
		h.ServeHTTP(answer, r)
		switch answer.status {
		case http.StatusMethodNotAllowed:
			w.Header().Set("Allow", answer.header.Get("Allow"))
			WriteJSON(w, http.StatusMethodNotAllowed, &ErrorBody{Message: "Method not allowed."})
		case http.StatusNotFound:
			writeNotFound(w)
		default:
			// A redirect of the ServeMux's own, which is not plain text
			// meant for a reader: serve it as the ServeMux does.
			h.ServeHTTP(w, r)
		}
	})
	if wrap != nil {
		miss = wrap(miss)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The ServeMux names no pattern exactly when it answers itself.
		if _, pattern := mux.Handler(r); pattern == "" {
			miss.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func writeNotFound(w http.ResponseWriter) {
	WriteJSON(w, http.StatusNotFound, &ErrorBody{Message: "Not found."})
}

// muxAnswer keeps the status and headers of the ServeMux's own answer and
// drops its plain-text body.
type muxAnswer struct {
	header http.Header
	status int
}

func (a *muxAnswer) Header() http.Header { return a.header }

func (a *muxAnswer) WriteHeader(status int) {
	if a.status == 0 {
		a.status = status
	}
}

func (a *muxAnswer) Write(b []byte) (int, error) {
	a.WriteHeader(http.StatusOK)
	return len(b), nil
}

// NoNUL answers 404 "Not found." to a request whose path holds a NUL
// byte (%00): no route serves such a name, and file systems and stores
// refuse it with errors that would otherwise surface as 500s. It stands
// before every part of the listener (API, H5P, PDF), so no file-serving
// route needs its own check.
func NoNUL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.IndexByte(r.URL.Path, 0) >= 0 {
			writeNotFound(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}
