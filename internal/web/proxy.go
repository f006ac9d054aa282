package web

import (
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/lms-platform/lms/internal/content"
)

// h5pStripped are request headers the content origin's H5P proxy never
// forwards: the browser's cookies, credentials only the parts hold, and
// forwarding headers the proxy sets itself.
var h5pStripped = []string{"Cookie", "X-Internal-Token", "X-Forwarded-Host", "X-Forwarded-For",
	"X-Forwarded-Proto", "Forwarded", "X-Lms-Session-Proxy", "X-Lms-Embed-Origin"}

// frontParam names the frontend's origin on an embed page's link: the
// page talks (postMessage) to that origin only.
const frontParam = "lms_front"

// h5pContent is the content origin's proxy to {base_url}/h5p/{path}: the
// embed page, its scripts, its AJAX calls and the content and library
// files. It holds no session: the only credential it forwards is an H5P
// grant that a frontend page handed to the embed page by postMessage: a
// play grant (POST /api/courses/progress/{topic}/h5p/grant) that the
// player sends as Authorization, or an authoring page's edit grant (POST
// /h5p/contents/{id}/edit-grant), sent as Authorization or, by the H5P
// editor client, as _token. The H5P service takes either for one content
// and one user only. Bodies pass unchanged both ways.
//
// Two headers tell the H5P service about the proxy: X-Lms-Session-Proxy: 1
// (leave the credential out of the play model's URLs: the player sends it
// as a header) and X-Lms-Embed-Origin: <frontend origin> (the embed page's
// allowed origins are narrowed to exactly the frontend, for postMessage and
// for frame-ancestors).
func (h *Handler) h5pContent(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	tenant, _ := ctx.Value(contentKey{}).(string)
	hdr := r.Header.Clone()
	for k := range hopHeaders {
		hdr.Del(k)
	}
	for _, k := range h5pStripped {
		hdr.Del(k)
	}
	if a, ok := strings.CutPrefix(hdr.Get("Authorization"), "Bearer "); !ok || !content.IsH5PGrant(a) {
		hdr.Del("Authorization")
	}
	hdr.Set("X-Lms-Session-Proxy", "1")
	q := r.URL.Query()
	if front := h.frontOrigin(tenant, q.Get(frontParam)); front != "" {
		hdr.Set("X-Lms-Embed-Origin", front)
	}
	hdr.Set("X-Forwarded-Proto", h.scheme(r))
	path := r.URL.EscapedPath()
	if q.Has(frontParam) {
		q.Del(frontParam)
		r.URL.RawQuery = q.Encode()
	}
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	var body io.Reader
	if r.ContentLength != 0 {
		body = r.Body
	}
	res, err := h.api.do(ctx, apiCall{Method: r.Method, Path: path, Host: h.apiHost(r),
		Body: body, ContentLength: r.ContentLength, Header: hdr})
	if err != nil {
		h.log.Warn("web: h5p proxy", "path", r.URL.Path, "err", err)
		writeJSONError(w, http.StatusBadGateway, "The H5P service is unavailable.")
		return
	}
	defer res.Body.Close()
	copyHeaders(w.Header(), res.Header)
	if strings.HasPrefix(r.URL.Path, "/h5p/content/") && activeType(res.Header.Get("Content-Type")) {
		// A content file of a package that would run script when opened
		// on its own (SVG, XML, HTML) runs none, whatever the H5P service
		// sent.
		w.Header().Add("Content-Security-Policy", "sandbox")
	}
	if loc := res.Header.Get("Location"); loc != "" {
		w.Header().Set("Location", h.rewriteLocation(r, loc))
	}
	w.WriteHeader(res.StatusCode)
	streamBody(w, res.Body)
}

// frontOrigin is the frontend origin an embed page may talk to: the
// frontend's public URL (LMS_WEB_URL) when set, else the origin the link
// names if it is the tenant's host (on any port, as frontSource allows).
func (h *Handler) frontOrigin(tenant, named string) string {
	if h.opts.WebURL != "" {
		if u, err := url.Parse(strings.ReplaceAll(h.opts.WebURL, "{host}", tenant)); err == nil && u.Host != "" {
			return u.Scheme + "://" + u.Host
		}
		return ""
	}
	u, err := url.Parse(named)
	if named == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.RawQuery != "" ||
		u.User != nil || normalizeHost(u.Host) != tenant {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// h5pGone answers the frontend's former /h5p/ proxy: H5P content is
// played on the content origin only.
func (h *Handler) h5pGone(w http.ResponseWriter, r *http.Request) {
	writeJSONError(w, http.StatusNotFound, "Not found: H5P content is played on the content origin.")
}

// rewriteLocation points a redirect that names the API's own address (or
// the tenant host on the API's scheme) at the frontend's origin. Relative
// locations already resolve against the frontend.
func (h *Handler) rewriteLocation(r *http.Request, loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return loc
	}
	if !strings.EqualFold(u.Host, h.api.base.Host) && normalizeHost(u.Host) != h.apiHost(r) {
		return loc
	}
	return onOrigin(h.origin(r), u)
}

// onOrigin is u's path, query and fragment on origin.
func onOrigin(origin string, u *url.URL) string {
	out := origin + u.EscapedPath()
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	if u.Fragment != "" {
		out += "#" + u.EscapedFragment()
	}
	return out
}

// streamBody copies a proxied body, flushing as it goes so long answers
// (media, event streams) reach the browser without waiting for the end.
func streamBody(w http.ResponseWriter, body io.Reader) {
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// fileHeaders are the request headers a signed file fetch forwards: the
// ones range requests and revalidation need.
var fileHeaders = []string{"Range", "If-Range", "If-None-Match", "If-Modified-Since", "Accept"}

// files passes a signed file link through to the API. The link carries
// its own signature and expiry, so no token is ever sent.
func (h *Handler) files(w http.ResponseWriter, r *http.Request) {
	hdr := http.Header{}
	for _, k := range fileHeaders {
		if v := r.Header.Get(k); v != "" {
			hdr.Set(k, v)
		}
	}
	path := r.URL.EscapedPath()
	if r.URL.RawQuery != "" {
		path += "?" + r.URL.RawQuery
	}
	res, err := h.api.do(r.Context(), apiCall{Method: r.Method, Path: path, Host: h.apiHost(r), Header: hdr})
	if err != nil {
		h.plainError(w, http.StatusBadGateway, "The file service is unavailable.")
		return
	}
	defer res.Body.Close()
	copyHeaders(w.Header(), res.Header)
	if strings.HasPrefix(r.URL.Path, "/api/files/") && activeType(res.Header.Get("Content-Type")) {
		// An uploaded file that would run script (HTML, SVG, XML) runs
		// none: sandboxed to an opaque origin, and on the frontend's
		// origin a download rather than a page. The API's files route
		// does so already; this holds whatever answers behind it.
		w.Header().Add("Content-Security-Policy", "sandbox")
		_, content := r.Context().Value(contentKey{}).(string)
		if d := w.Header().Get("Content-Disposition"); !content && !strings.HasPrefix(d, "attachment") {
			w.Header().Set("Content-Disposition", "attachment")
		}
	}
	w.WriteHeader(res.StatusCode)
	streamBody(w, res.Body)
}

// cspReport passes a browser's Content-Security-Policy report of a played
// interactive app to the API: no token, the body capped as the API caps it.
func (h *Handler) cspReport(w http.ResponseWriter, r *http.Request) {
	hdr := http.Header{}
	hdr.Set("Content-Type", r.Header.Get("Content-Type"))
	res, err := h.api.do(r.Context(), apiCall{Method: http.MethodPost, Path: r.URL.EscapedPath() + "?" + r.URL.RawQuery,
		Host: h.apiHost(r), Header: hdr, Body: http.MaxBytesReader(w, r.Body, 16<<10), ContentLength: -1})
	if err != nil {
		h.plainError(w, http.StatusBadGateway, "The API is unavailable.")
		return
	}
	defer res.Body.Close()
	copyHeaders(w.Header(), res.Header)
	w.WriteHeader(res.StatusCode)
	streamBody(w, res.Body)
}
