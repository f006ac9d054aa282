// Package web is the reference frontend: server-rendered pages for
// learners, the backend-for-frontend route (/bff/) their scripts call, the
// same-origin H5P proxy (/h5p/), the LTI landing and a cache of public API
// data. It reaches the API only over HTTP, at its base URL, naming the
// tenant with the Host header the browser sent the frontend: a frontend
// request for Host X calls the API with Host X. See docs/web.md.
package web

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
)

// Options configure the frontend; zero values take the defaults.
type Options struct {
	// APIURL is the API's base URL (LMS_API_URL).
	APIURL string
	// PlatformHost is the platform tenant's host: only it serves the
	// platform landing at /, /pl/ and /zh/.
	PlatformHost string
	// TrustProxy honours X-Forwarded-Host and X-Forwarded-Proto.
	TrustProxy bool
	// CacheFresh is how long public API data is served without asking
	// again: default 45 s, minimum 5 s.
	CacheFresh time.Duration
	Clock      clock.Clock
	Log        *slog.Logger
	// Client calls the API (default: a pooled client that never
	// decompresses or follows redirects).
	Client *http.Client
	// ContentOrigin is the content origin's URL template, {host} standing
	// for the tenant's host (LMS_CONTENT_ORIGIN, e.g.
	// https://content.{host}): the origin package content is played from.
	// "": no content origin, and packages are not played.
	ContentOrigin string
	// WebURL is the frontend's public URL template (LMS_WEB_URL): the
	// content origin lets only it frame its pages ("": the tenant's host
	// on any port).
	WebURL string
	// HLSPlayer is the file of hls.js's browser build, served as
	// /assets/hls.min.js to play HLS videos where the browser has no
	// native HLS ("": those browsers get the original file).
	HLSPlayer string
	// Editor is the folder of the Markdown editor's browser build (npm
	// tiny-markdown-editor's dist), served as /assets/editor/ to the
	// authoring pages ("": a plain text area).
	Editor string
}

// Handler is the frontend.
type Handler struct {
	opts    Options
	clock   clock.Clock
	log     *slog.Logger
	api     *apiClient
	cache   *publicCache
	pages   *pages
	refresh refresher
	keeper  keeper
	// navRoles remembers which sessions are admins' (the Admin link).
	navRoles navRoleMemo
	memo     pageMemo
	handler  http.Handler
	// content is the content origin's template (nil: none) and
	// contentHandler the handler of its listener.
	content        *contentTemplate
	contentHandler http.Handler
}

// New builds the frontend.
func New(opts Options) (*Handler, error) {
	h := &Handler{opts: opts, clock: opts.Clock, log: opts.Log}
	if h.clock == nil {
		h.clock = clock.System{}
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	h.opts.PlatformHost = normalizeHost(opts.PlatformHost)
	var err error
	if h.api, err = newAPIClient(opts.APIURL, opts.Client); err != nil {
		return nil, err
	}
	if h.pages, err = loadPages(); err != nil {
		return nil, err
	}
	if h.content, err = parseContentTemplate(opts.ContentOrigin); err != nil {
		return nil, err
	}
	h.cache = newPublicCache(h.clock, opts.CacheFresh, h.loadPublic)
	h.handler = h.observe(h.guard(h.routes()), true)
	h.contentHandler = h.observe(h.contentGuard(h.contentRoutes()), false)
	return h, nil
}

// routes lists every route of the frontend: the spec's "Reference
// frontend routes" first, then the pages.
func (h *Handler) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/bff/", h.bff)
	mux.HandleFunc("/h5p/", h.h5pGone)
	mux.HandleFunc("GET /lti/launch", h.ltiLaunch)
	mux.HandleFunc("POST /lti/launch/confirm", h.csrfForms(4<<10, h.ltiConfirm))
	mux.HandleFunc("GET /healthz", h.healthz)

	// Signed file links of the program (/api/files/...?signature=) are
	// fetched by <img>, <audio>, <video> and the PDF viewer: passed
	// through without any token (a file that would run script is sent
	// as a sandboxed download).
	mux.HandleFunc("GET /api/files/", h.files)
	// cmi5: the launch and the page an AU returns to. The SCORM player,
	// package files of SCORM and cmi5, the LRS, interactive apps and
	// LiaScript courses are served by the content origin only (see
	// content.go): here they are 404.
	h.cmi5Routes(mux)
	mux.HandleFunc("GET /assets/hls.min.js", h.hlsPlayer)
	// CSP reports of apps played before the move still arrive here.
	mux.HandleFunc("POST /api/csp-report", h.cspReport)
	mux.HandleFunc("GET /assets/", h.assets)
	mux.HandleFunc("GET /favicon.ico", h.favicon)

	mux.HandleFunc("GET /{$}", h.home)
	mux.HandleFunc("GET /pl/{$}", h.landing("pl"))
	mux.HandleFunc("GET /zh/{$}", h.landing("zh"))
	mux.HandleFunc("GET /pl", h.slashRedirect)
	mux.HandleFunc("GET /zh", h.slashRedirect)
	mux.HandleFunc("GET /courses", h.catalogue)
	mux.HandleFunc("GET /courses/{course}", h.coursePage)
	mux.HandleFunc("GET /learn/{course}", h.learn)
	mux.HandleFunc("GET /learn/{course}/{topic}", h.topicPage)
	mux.HandleFunc("POST /learn/{course}/{topic}/complete", h.csrfForms(16<<10, h.completeTopic))
	mux.HandleFunc("POST /learn/{course}/{topic}/project", h.csrfForms(maxProject, h.submitProject))
	mux.HandleFunc("POST /learn/{course}/{topic}/lti", h.csrfForms(16<<10, h.launchTool))
	mux.HandleFunc("GET /my", h.myProgress)
	mux.HandleFunc("GET /certificates", h.certificates)
	mux.HandleFunc("POST /certificates/{id}/regenerate", h.csrfForms(16<<10, h.regenerateCertificate))
	mux.HandleFunc("GET /profile", h.profile)
	mux.HandleFunc("POST /profile", h.csrfForms(64<<10, h.saveProfile))
	mux.HandleFunc("GET /device", h.devicePage)
	mux.HandleFunc("POST /device/approve", h.deviceDecide(true))
	mux.HandleFunc("POST /device/deny", h.deviceDecide(false))
	mux.HandleFunc("GET /login", h.loginPage)
	mux.HandleFunc("POST /login", h.csrfForms(16<<10, h.login))
	mux.HandleFunc("POST /login/demo", h.csrfForms(4<<10, h.demoLogin))
	// Social login: the API's start and callback on this origin, the
	// landing of the callback and the form of missing data.
	mux.HandleFunc("GET /api/auth/social/{provider}", h.socialPass)
	mux.HandleFunc("GET /api/auth/social/{provider}/callback", h.socialPass)
	mux.HandleFunc("GET /auth/social", h.socialLanding)
	mux.HandleFunc("POST /auth/social", h.csrfForms(16<<10, h.socialForm))
	mux.HandleFunc("POST /logout", h.csrfForms(16<<10, h.logout))
	// Authoring: tutors' and admins' pages (teach.go), their gradebook
	// (gradebook.go); the admin pages (admin.go).
	h.teachRoutes(mux)
	h.gradebookRoutes(mux)
	h.adminRoutes(mux)
	mux.HandleFunc("/", h.notFound)
	return mux
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.handler.ServeHTTP(w, r) }

// Serve runs handler on ln until ctx ends, then shuts down gracefully.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler) error {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// requestHost is the host the browser asked for, with its port: the
// Host header, or X-Forwarded-Host behind a trusted proxy.
func (h *Handler) requestHost(r *http.Request) string {
	if fwd := r.Header.Get("X-Forwarded-Host"); h.opts.TrustProxy && fwd != "" {
		first, _, _ := strings.Cut(fwd, ",")
		return strings.TrimSpace(first)
	}
	return r.Host
}

// apiHost is the tenant host the API is called with: the request's host
// without its port. The frontend is served at the tenants' own host
// names, so Host: school.example on the frontend is the tenant
// school.example on the API.
func (h *Handler) apiHost(r *http.Request) string {
	if tenant, ok := r.Context().Value(contentKey{}).(string); ok {
		return tenant
	}
	return normalizeHost(h.requestHost(r))
}

func (h *Handler) scheme(r *http.Request) string {
	if h.opts.TrustProxy {
		if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
			return p
		}
	}
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// origin is the frontend's own origin for this request.
func (h *Handler) origin(r *http.Request) string { return h.scheme(r) + "://" + h.requestHost(r) }

func (h *Handler) isPlatformHost(r *http.Request) bool {
	return h.opts.PlatformHost != "" && h.apiHost(r) == h.opts.PlatformHost
}

func normalizeHost(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if hh, _, err := net.SplitHostPort(host); err == nil {
		host = hh
	}
	return strings.TrimSuffix(host, ".")
}

// guard answers 403 to state-changing requests from another site: with
// Sec-Fetch-Site, only same-origin (or none: typed by the user) passes;
// without it, an Origin header must name this very origin. Requests with
// neither header come from non-browser clients, which carry no ambient
// cookie to abuse. Same-site is refused too: sibling hosts of one domain
// are other tenants.
func (h *Handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
			// CSP reports come from sandboxed frames, whose origin is
			// opaque, so the browser sends them as cross-site; the
			// frontend passes them on with no credentials at all.
			if r.Method == http.MethodPost && r.URL.Path == "/api/csp-report" {
				break
			}
			if !h.sameOrigin(r) {
				h.log.Info("web: cross-site request refused", "method", r.Method, "path", r.URL.Path,
					"origin", r.Header.Get("Origin"), "sec_fetch_site", r.Header.Get("Sec-Fetch-Site"))
				if strings.HasPrefix(r.URL.Path, "/bff/") || strings.HasPrefix(r.URL.Path, "/h5p/") {
					writeJSONError(w, http.StatusForbidden, "Cross-site requests are not allowed.")
				} else {
					h.plainError(w, http.StatusForbidden, "Cross-site requests are not allowed.")
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) sameOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "same-origin", "none":
		return true
	case "":
	default:
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	scheme, host, ok := strings.Cut(origin, "://")
	if !ok || (scheme != "http" && scheme != "https") {
		return false
	}
	return strings.EqualFold(host, h.requestHost(r))
}

// statusWriter remembers the status for the request log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// observe logs one line per request (never a query string: LTI codes
// ride in it) and sets the headers every answer carries; front is the
// frontend's listener (the content origin sets its own).
func (h *Handler) observe(next http.Handler, front bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		hdr := w.Header()
		hdr.Set("X-Content-Type-Options", "nosniff")
		if front && !strings.HasPrefix(r.URL.Path, "/h5p/") {
			// The H5P service sets its own framing and referrer rules for
			// its embed pages; everything else is the frontend's.
			hdr.Set("Referrer-Policy", "same-origin")
			hdr.Set("X-Frame-Options", "SAMEORIGIN")
		}
		next.ServeHTTP(sw, r)
		if h.log.Enabled(r.Context(), slog.LevelDebug) || sw.status >= 500 {
			h.log.Log(r.Context(), levelFor(sw.status), "web request", "host", h.apiHost(r), "method", r.Method,
				"path", r.URL.Path, "status", sw.status, "duration_ms", time.Since(start).Milliseconds())
		}
	})
}

func levelFor(status int) slog.Level {
	if status >= 500 {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

func (h *Handler) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Write([]byte("ok\n"))
}

func (h *Handler) slashRedirect(w http.ResponseWriter, r *http.Request) {
	if !h.isPlatformHost(r) {
		h.notFound(w, r)
		return
	}
	http.Redirect(w, r, r.URL.Path+"/", http.StatusMovedPermanently)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	b, _ := jsonMarshal(map[string]any{"success": false, "message": msg})
	w.Write(b)
}

func (h *Handler) plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write([]byte(msg + "\n"))
}

// Start builds the frontend from the process configuration and serves it
// on cfg.WebAddr in the background until ctx ends. It answers the URL to
// open (the platform host on the frontend's port), or "" when
// LMS_WEB_ADDR is empty.
func Start(ctx context.Context, cfg *config.Config, log *slog.Logger) (string, error) {
	if cfg.WebAddr == "" {
		return "", nil
	}
	// The content origin listens first: its template names its port.
	var contentLn net.Listener
	contentOrigin := cfg.ContentOrigin
	if cfg.ContentAddr != "" {
		var err error
		if contentLn, err = net.Listen("tcp", cfg.ContentAddr); err != nil {
			return "", fmt.Errorf("web: listen on %s (LMS_CONTENT_ADDR): %w", cfg.ContentAddr, err)
		}
		if contentOrigin == "" {
			contentOrigin = "http://{host}:" + portOf(contentLn)
		}
	} else if contentOrigin == "" {
		log.Warn("web: LMS_CONTENT_ADDR is empty: SCORM, cmi5, interactive and LiaScript topics are not played")
	}
	h, err := New(Options{APIURL: cfg.APIURL, PlatformHost: cfg.PlatformHost, TrustProxy: cfg.TrustProxy,
		CacheFresh: cfg.WebCacheFresh, Log: log, HLSPlayer: cfg.HLSPlayer, Editor: cfg.Editor, ContentOrigin: contentOrigin, WebURL: cfg.WebURL})
	if err != nil {
		if contentLn != nil {
			contentLn.Close()
		}
		return "", err
	}
	ln, err := net.Listen("tcp", cfg.WebAddr)
	if err != nil {
		if contentLn != nil {
			contentLn.Close()
		}
		return "", fmt.Errorf("web: listen on %s: %w", cfg.WebAddr, err)
	}
	go func() {
		if err := Serve(ctx, ln, h); err != nil {
			log.Error("web: serve", "err", err)
		}
	}()
	if contentLn != nil {
		go func() {
			if err := Serve(ctx, contentLn, h.Content()); err != nil {
				log.Error("web: serve the content origin", "err", err)
			}
		}()
	}
	host := cfg.PlatformHost
	if host == "" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, portOf(ln)) + "/", nil
}

func portOf(ln net.Listener) string {
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
