package h5p

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
)

// envelope is the body of the successful answers of the plain handlers
// (the AJAX endpoints); the REST routes answer httpx's Envelope.
type envelope struct {
	Success bool   `json:"success"`
	Data    any    `json:"data"`
	Message string `json:"message"`
}

func writeData(w http.ResponseWriter, status int, data any) {
	httpx.WriteJSON(w, status, envelope{Success: true, Data: data})
}

// rawField is a JSON value written as it is stored: content parameters
// may be megabytes, which encoding again would copy several times over
// for every reader.
type rawField struct {
	name  string
	value string
}

// writeDataRaw answers the envelope whose data is the object v with the
// raw fields added to it.
func writeDataRaw(w http.ResponseWriter, r *http.Request, status int, v any, raw ...rawField) {
	head, err := json.Marshal(v)
	if err != nil || len(head) < 2 || head[0] != '{' {
		writeError(w, r, fmt.Errorf("h5p: encode %T: %v", v, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, `{"success":true,"message":"","data":`)
	w.Write(head[:len(head)-1])
	// Large raw fields (content parameters of up to 4 MB) stream: sent
	// now, what is written so far is not held back by the request log's
	// writer, which would otherwise keep a copy of their first part.
	size := 0
	for _, f := range raw {
		size += len(f.value)
	}
	if size > streamRawOver {
		http.NewResponseController(w).Flush()
	}
	comma := len(head) > 2
	for _, f := range raw {
		if comma {
			io.WriteString(w, ",")
		}
		comma = true
		name, _ := json.Marshal(f.name)
		w.Write(name)
		io.WriteString(w, ":")
		if f.value == "" {
			io.WriteString(w, "null")
		} else {
			writeChunked(w, f.value)
		}
	}
	io.WriteString(w, "}}\n")
}

// streamRawOver is the size of raw fields above which an answer streams.
const streamRawOver = 64 << 10

// writeChunked writes s through a small buffer: the response writers of
// the middleware have no WriteString, and io.WriteString would copy all of
// s at once.
func writeChunked(w io.Writer, s string) {
	buf := make([]byte, min(len(s), 32<<10))
	for len(s) > 0 {
		n := copy(buf, s)
		if _, err := w.Write(buf[:n]); err != nil {
			return // the client is gone
		}
		s = s[n:]
	}
}

// writeError answers {success: false, message} with the status of the
// error's kind.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	httpx.WriteError(w, r, err)
}

// routes lists the service's routes in the order of the spec's table.
// The REST routes are described in doc.
func (s *Service) routes(doc huma.API) http.Handler {
	mux := http.NewServeMux()
	doc.OpenAPI().Components.SecuritySchemes[internalScheme] = &huma.SecurityScheme{
		Type: "apiKey", In: "header", Name: "X-Internal-Token",
		Description: "The secret the platform's own parts share (LMS_INTERNAL_KEY).",
	}
	s.healthRoutes(restAPI(doc, mux, func(h http.Handler) http.Handler { return s.tenancy(true, h) }))
	api := restAPI(doc, mux, s.user)
	s.contentRoutes(api)
	// The player's and editor's models and states are never stored.
	private := restAPI(doc, mux, func(h http.Handler) http.Handler { return s.user(noStore(h)) })
	// Diagnostic route, not in the spec: the caller's own identity as the
	// service sees it. It shows nothing the caller does not already hold.
	// Hidden, it is described in a document of its own, which keeps its
	// schemas out of the API's.
	undescribed := restAPI(ownDocument(), mux, func(h http.Handler) http.Handler { return s.user(noStore(h)) })
	httpx.Handle(undescribed, httpx.Route{Method: "GET", Path: "/h5p/whoami", Tags: h5pTags, Who: httpx.Anyone, Scope: scopeOf("GET"),
		Summary: "The caller as the H5P service sees it", Hidden: true}, s.whoami)
	s.runtimeRoutes(private)
	s.fileRoutes(mux)
	s.editorRoutes(mux, api, private)
	s.embedRoutes(mux, api)
	// Unknown paths and methods answer in the envelope, after the tenant
	// check: an unknown host is "Unknown tenant." on every path.
	return httpx.Unmatched(mux, func(h http.Handler) http.Handler { return s.tenancy(false, h) })
}

// user is the chain of every route but the health check: tenant, then
// caller.
func (s *Service) user(h http.Handler) http.Handler {
	if s.scoped != nil {
		h = s.scoped(h)
	}
	return s.tenancy(false, s.authenticate(h))
}

// caller is the User as whoami shows it, under a name of its own in the
// document's schemas (other packages have a User).
type caller User

func (s *Service) whoami(ctx context.Context, _ *struct{}) (*ajaxAnswer[*caller], error) {
	return ajaxOK((*caller)(UserFrom(ctx)))
}
