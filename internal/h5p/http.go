package h5p

import (
	"net/http"

	"github.com/lms-platform/lms/internal/httpx"
)

// envelope is the body of the H5P service's successful REST answers.
type envelope struct {
	Success bool   `json:"success"`
	Data    any    `json:"data"`
	Message string `json:"message"`
}

func writeData(w http.ResponseWriter, status int, data any) {
	httpx.WriteJSON(w, status, envelope{Success: true, Data: data})
}

// writeError answers {success: false, message} with the status of the
// error's kind.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	httpx.WriteError(w, r, err)
}

// routes lists the service's routes in the order of the spec's table.
func (s *Service) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /h5p/health", s.tenancy(true, http.HandlerFunc(s.health)))
	// Diagnostic route, not in the spec: the caller's own identity as the
	// service sees it. It shows nothing the caller does not already hold.
	mux.Handle("GET /h5p/whoami", s.user(http.HandlerFunc(s.whoami)))
	s.contentRoutes(mux)
	s.runtimeRoutes(mux)
	s.editorRoutes(mux)
	s.embedRoutes(mux)
	// Unknown paths and methods answer in the envelope, after the tenant
	// check: an unknown host is "Unknown tenant." on every path.
	return httpx.Unmatched(mux, func(h http.Handler) http.Handler { return s.tenancy(false, h) })
}

// user is the chain of every route but the health check: tenant, then
// caller.
func (s *Service) user(h http.Handler) http.Handler {
	return s.tenancy(false, s.authenticate(h))
}

func (s *Service) whoami(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	writeData(w, http.StatusOK, UserFrom(r.Context()))
}
