package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// The content origin. Package content written by tutors (SCORM SCOs, cmi5
// AUs, interactive apps, LiaScript courses, uploaded HTML) runs scripts of
// its own; on the frontend's origin those scripts would reach the session
// cookie's routes (/bff/, the forms) as the learner who opened the topic.
// So the frontend serves that content from a second listener, the content
// origin: another host (content.{host}, or the tenant's host on another
// port on a developer's machine) that holds no session, sets no cookie,
// forwards none, and serves only the content, player and tracking paths,
// which carry their own authority (tracking tokens, signed links, the
// AU's auth token). Everything else is 404 there. See docs/web.md.

// contentMarker stands for {host} while a content origin template is
// parsed.
const contentMarker = "tenant-host.invalid"

// contentTemplate is the parsed content origin template.
type contentTemplate struct {
	raw string
	// prefix and suffix surround the tenant host in the content
	// origin's host name (no port): "content." and "" for
	// https://content.{host}.
	prefix, suffix string
}

func parseContentTemplate(raw string) (*contentTemplate, error) {
	raw = strings.TrimSuffix(strings.TrimSpace(raw), "/")
	if raw == "" {
		return nil, nil
	}
	if strings.Count(raw, "{host}") != 1 {
		return nil, errors.New("web: the content origin must name the tenant's host once as {host}, e.g. https://content.{host}")
	}
	u, err := url.Parse(strings.ReplaceAll(raw, "{host}", contentMarker))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Path != "" || u.RawQuery != "" {
		return nil, errors.New("web: the content origin must be an origin such as https://content.{host}")
	}
	prefix, suffix, ok := strings.Cut(strings.ToLower(u.Hostname()), contentMarker)
	if !ok {
		return nil, errors.New("web: {host} must be in the host name of the content origin")
	}
	return &contentTemplate{raw: raw, prefix: prefix, suffix: suffix}, nil
}

// contentKey carries the tenant host of a content origin request.
type contentKey struct{}

// contentOrigin is the content origin of the request's tenant, "" when
// the frontend has none (packages are then not played).
func (h *Handler) contentOrigin(r *http.Request) string {
	if h.content == nil {
		return ""
	}
	return strings.ReplaceAll(h.content.raw, "{host}", h.apiHost(r))
}

// onContent moves a root-relative API path (a player page, a signed
// link) onto the content origin; "" when there is no content origin.
func (h *Handler) onContent(r *http.Request, path string) string {
	origin := h.contentOrigin(r)
	if origin == "" || !strings.HasPrefix(path, "/") || strings.HasPrefix(path, "//") {
		return ""
	}
	return origin + path
}

// contentTenant is the tenant host a content origin request names: its
// host name without the template's prefix and suffix.
func (h *Handler) contentTenant(r *http.Request) string {
	host := normalizeHost(h.requestHost(r))
	rest, ok := strings.CutPrefix(host, h.content.prefix)
	if !ok {
		return ""
	}
	if rest, ok = strings.CutSuffix(rest, h.content.suffix); !ok || rest == "" {
		return ""
	}
	return rest
}

// frontSource is the CSP source of the tenant's frontend, the only page
// besides the content origin itself that may frame its content.
func (h *Handler) frontSource(tenant string) string {
	if h.opts.WebURL != "" {
		if u, err := url.Parse(strings.ReplaceAll(h.opts.WebURL, "{host}", tenant)); err == nil && u.Host != "" {
			return u.Scheme + "://" + u.Host
		}
	}
	// Any port of the tenant's host, on the content origin's scheme (or
	// its secure form).
	return tenant + ":*"
}

// Content is the handler of the content origin's listener.
func (h *Handler) Content() http.Handler { return h.contentHandler }

func (h *Handler) contentRoutes() http.Handler {
	mux := http.NewServeMux()
	// The SCORM player, its runtime, the package files and the tracking
	// routes: one origin, so the SCO reaches the runtime in its parent.
	mux.HandleFunc("/api/scorm/", h.scormProxy)
	// cmi5: the AU's files, its one-time fetch URL and the LRS.
	mux.HandleFunc("/api/cmi5/", h.cmi5Proxy)
	mux.HandleFunc("/api/xapi/", h.cmi5Proxy)
	// Interactive apps and LiaScript courses: signed links, played in
	// sandboxed frames; their CSP reports come without credentials.
	mux.HandleFunc("GET /api/interactive/play/", h.files)
	mux.HandleFunc("GET /api/liascript/play/", h.files)
	mux.HandleFunc("GET /api/liascript/runtime/", h.files)
	// H5P: the embed page, the core, the content and library files and
	// the player's calls with the play grant.
	mux.HandleFunc("/h5p/", h.h5pContent)
	mux.HandleFunc("POST /api/csp-report", h.cspReport)
	// Signed file links, uploaded HTML among them.
	mux.HandleFunc("GET /api/files/", h.files)
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		h.plainError(w, http.StatusNotFound, "Not found: the content origin serves package content only.")
	})
	return mux
}

// contentGuard names the tenant of a content origin request (404 when the
// host is not one of the template), drops the browser's cookies, and makes every answer cookie-free and framable
// only by the tenant's frontend and the content origin itself.
func (h *Handler) contentGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenant := h.contentTenant(r)
		if tenant == "" {
			h.plainError(w, http.StatusNotFound, "Not found.")
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), contentKey{}, tenant))
		// The browser may send the frontend's cookies here (a host's
		// cookies ignore the port): they are dropped before any handler
		// sees them. Authorization stays: it is the AU's own token.
		r.Header.Del("Cookie")
		cw := &contentWriter{ResponseWriter: w, ancestors: "frame-ancestors 'self' " + h.frontSource(tenant)}
		next.ServeHTTP(cw, r)
	})
}

// contentWriter sets the content origin's headers on every answer,
// whatever the API sent: no cookie, no credentials, framing only by the
// frontend.
type contentWriter struct {
	http.ResponseWriter
	ancestors string
	wrote     bool
}

func (c *contentWriter) WriteHeader(code int) {
	if !c.wrote {
		c.wrote = true
		hdr := c.ResponseWriter.Header()
		hdr.Del("Set-Cookie")
		hdr.Del("Access-Control-Allow-Credentials")
		hdr.Del("X-Frame-Options")
		hdr.Set("X-Content-Type-Options", "nosniff")
		if hdr.Get("Referrer-Policy") == "" {
			hdr.Set("Referrer-Policy", "no-referrer")
		}
		// A second policy: browsers enforce every one they are sent.
		hdr.Add("Content-Security-Policy", c.ancestors)
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *contentWriter) Write(b []byte) (int, error) {
	if !c.wrote {
		c.WriteHeader(http.StatusOK)
	}
	return c.ResponseWriter.Write(b)
}

func (c *contentWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// activeType tells whether a file of this media type runs script when a
// browser opens it: HTML, SVG, XML.
func activeType(ctype string) bool {
	ct := strings.ToLower(strings.TrimSpace(strings.Split(ctype, ";")[0]))
	return ct == "" || ct == "text/html" || ct == "application/xhtml+xml" || ct == "image/svg+xml" ||
		ct == "text/xml" || ct == "application/xml" || strings.HasSuffix(ct, "+xml")
}
