package web

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// bffRule is one allowed method and path of /bff/: literal segments, and
// {id} for a positive integer.
type bffRule struct {
	method string
	segs   []string
}

func rule(method, path string) bffRule {
	return bffRule{method: method, segs: strings.Split(strings.TrimPrefix(path, "/"), "/")}
}

// bffAllow is everything the pages' scripts may ask of the API: the
// caller's profile, course progress reads and writes, time pings, H5P
// statements, quiz attempts and answers, and practice checks. Anything else answers 404,
// so a script (or an injected one) cannot reach admin routes with the
// learner's cookie.
var bffAllow = []bffRule{
	rule(http.MethodGet, "/api/profile/me"),
	rule(http.MethodPut, "/api/profile/me"),
	rule(http.MethodGet, "/api/profile/settings"),
	rule(http.MethodPut, "/api/profile/settings"),
	rule(http.MethodGet, "/api/courses/progress"),
	rule(http.MethodGet, "/api/courses/progress/paginated"),
	rule(http.MethodGet, "/api/courses/progress/{id}"),
	rule(http.MethodPatch, "/api/courses/progress/{id}"),
	rule(http.MethodPut, "/api/courses/progress/{id}/ping"),
	rule(http.MethodPost, "/api/courses/progress/{id}/h5p"),
	rule(http.MethodPost, "/api/courses/progress/{id}/h5p/grant"),
	// Quiz attempts and answers (the quiz topic kind's learner routes).
	rule(http.MethodGet, "/api/quiz-attempts"),
	rule(http.MethodPost, "/api/quiz-attempts"),
	rule(http.MethodGet, "/api/quiz-attempts/{id}"),
	rule(http.MethodPost, "/api/quiz-attempts/{id}/answer"),
	rule(http.MethodPost, "/api/quiz-attempts/{id}/end"),
	// Checks of a layout topic's practice questions, whose answers are
	// not in the page.
	rule(http.MethodPost, "/api/topics/{id}/practice/check"),
	// What interactive apps and LiaScript courses report of the learner.
	rule(http.MethodPost, "/api/interactive/progress/{id}"),
	rule(http.MethodPost, "/api/liascript/progress/{id}"),
}

// bffAllowed matches the escaped path: an escaped character never
// matches a literal or a number, so no encoding slips past the list.
func bffAllowed(method, path string) bool {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	for _, ru := range bffAllow {
		if ru.method != method || len(ru.segs) != len(segs) {
			continue
		}
		ok := true
		for i, s := range ru.segs {
			if s == "{id}" {
				ok = isID(segs[i])
			} else {
				ok = s == segs[i]
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

func isID(s string) bool {
	if s == "" || len(s) > 16 || s[0] == '0' {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// bffMaxBody caps what a script may send through /bff/ (an xAPI
// statement, a page of answers); the body is kept for the one retry.
const bffMaxBody = 1 << 20

// bffRequestHeaders are the request headers forwarded to the API.
var bffRequestHeaders = []string{"Content-Type", "Accept", "Accept-Language", "Idempotency-Key"}

// bff forwards an allowed call to the API with the session's token.
func (h *Handler) bff(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/bff")
	if !bffAllowed(r.Method, path) {
		writeJSONError(w, http.StatusNotFound, "Not found.")
		return
	}
	s := h.readSession(r)
	if s == nil {
		writeJSONError(w, http.StatusUnauthorized, "You are not signed in.")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, bffMaxBody))
	if err != nil {
		writeJSONError(w, http.StatusRequestEntityTooLarge, "The request is too large.")
		return
	}
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	hdr := http.Header{}
	for _, k := range bffRequestHeaders {
		if v := r.Header.Get(k); v != "" {
			hdr.Set(k, v)
		}
	}
	ctx := r.Context()
	h.maybeRefresh(ctx, w, r, s)
	send := func() (*http.Response, error) {
		return h.api.do(ctx, apiCall{Method: r.Method, Path: path, Host: h.apiHost(r), Token: s.token,
			Body: bytes.NewReader(body), ContentLength: int64(len(body)), Header: hdr.Clone()})
	}
	res, err := send()
	// An API 401 in a demo student session is the hourly demo reset:
	// log the demo student in again and retry, once.
	if err == nil && res.StatusCode == http.StatusUnauthorized && h.demoRelogin(ctx, w, r, s) {
		res.Body.Close()
		res, err = send()
	}
	if err != nil {
		h.log.Warn("web: bff", "path", r.URL.Path, "err", err)
		writeJSONError(w, http.StatusBadGateway, "The service is unavailable. Please try again in a moment.")
		return
	}
	defer res.Body.Close()
	if res.StatusCode == http.StatusUnauthorized {
		h.clearSession(w, r)
	}
	copyHeaders(w.Header(), res.Header)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(res.StatusCode)
	io.Copy(w, res.Body)
}

// hopHeaders are connection-level headers never copied by a proxy, with
// Set-Cookie: the API sets no cookie the browser should keep for the
// frontend's origin.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true, "Set-Cookie": true,
	"Proxy-Connection": true,
}

func copyHeaders(dst, src http.Header) {
	for k, vs := range src {
		if hopHeaders[k] {
			continue
		}
		dst[k] = append([]string(nil), vs...)
	}
}
