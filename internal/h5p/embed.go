package h5p

import (
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"html/template"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

// The embed pages are what a parent page puts in an iframe: a small HTML
// shell whose script talks to the parent by postMessage (the "H5P embed
// message protocol" of the spec) and only then, holding the token the
// parent handed over, loads the content.

//go:embed embed/*
var embedFiles embed.FS

var embedPage = template.Must(template.ParseFS(embedFiles, "embed/page.html"))

// Timings of the protocol, from the spec's limits.
const (
	readyIntervalMS = 500
	readyMax        = 20
	tokenWaitMS     = 5000
)

// EmbedOriginHeader lets a same-origin proxy (the reference frontend)
// narrow the origins allowed to frame the page and talk to it to its own
// origin. A browser cannot set it on a frame navigation, and the value
// replaces the configured list rather than adding to it.
const EmbedOriginHeader = "X-Lms-Embed-Origin"

// embedConfig is what the embed pages take from the configuration.
type embedConfig struct {
	coreDir   string
	editorDir string
	// origins are the allowed origins; wildcard is set when one is "*".
	origins  []string
	wildcard bool
	// assetVersion busts browser caches of the embedded scripts when the
	// binary changes.
	assetVersion string
}

func newEmbedConfig(coreDir, editorDir string, origins []string) embedConfig {
	c := embedConfig{coreDir: coreDir, editorDir: editorDir}
	for _, o := range origins {
		if o == "*" {
			c.wildcard = true
			continue
		}
		if n, ok := normalOrigin(o); ok {
			c.origins = append(c.origins, n)
		}
	}
	h := sha256.New()
	for _, name := range []string{"embed/protocol.js", "embed/player.js", "embed/editor.js", "embed/embed.css"} {
		b, _ := embedFiles.ReadFile(name)
		h.Write(b)
	}
	c.assetVersion = hex.EncodeToString(h.Sum(nil))[:12]
	return c
}

// normalOrigin returns scheme://host[:port] of an http(s) origin.
func normalOrigin(raw string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
		return "", false
	}
	return strings.ToLower(u.Scheme + "://" + u.Host), true
}

// installed reports whether dir holds file.
func installed(dir, file string) bool {
	if dir == "" {
		return false
	}
	st, err := os.Stat(path.Join(dir, file))
	return err == nil && st.Mode().IsRegular()
}

// coreScript is the H5P core player script of h5p-standalone's dist.
const coreScript = "frame.bundle.js"

// embedRoutes registers the embed pages as operations of api, answering
// HTML, and the files they load.
func (s *Service) embedRoutes(mux *http.ServeMux, api huma.API) {
	httpx.Handle(api, httpx.Route{Method: "GET", Path: "/h5p/embed/play/{id}", Tags: h5pTags, Who: httpx.Anyone, Scope: scopeOf("GET"),
		Summary: "The player page of a content for an iframe (HTML)"}, s.embedPlay)
	describe(api, "GET", "/h5p/embed/play/{id}", htmlPage)
	httpx.Handle(api, httpx.Route{Method: "GET", Path: "/h5p/embed/edit/{id}", Tags: h5pTags, Who: httpx.Anyone, Scope: scopeOf("GET"),
		Summary: "The editor page of a content, or of a new one with id new, for an iframe (HTML)"}, s.embedEdit)
	describe(api, "GET", "/h5p/embed/edit/{id}", htmlPage)
	mux.Handle("GET /h5p/embed/assets/{name}", s.tenancy(false, http.HandlerFunc(s.embedAsset)))
	mux.Handle("GET /h5p/core/{file...}", s.tenancy(false, http.HandlerFunc(s.coreFile)))
	mux.Handle("GET /h5p/editor/{file...}", s.tenancy(false, http.HandlerFunc(s.editorFile)))
}

// pageConfig is handed to the page script as JSON.
type pageConfig struct {
	Mode            string            `json:"mode"`
	ContentID       string            `json:"contentId"`
	AllowedOrigins  []string          `json:"allowedOrigins"`
	AnyOrigin       bool              `json:"anyOrigin"`
	Query           map[string]string `json:"query"`
	CoreURL         string            `json:"coreUrl"`
	CoreInstalled   bool              `json:"coreInstalled"`
	EditorURL       string            `json:"editorUrl,omitempty"`
	EditorInstalled bool              `json:"editorInstalled"`
	EditorScripts   []string          `json:"editorScripts,omitempty"`
	EditorStyles    []string          `json:"editorStyles,omitempty"`
	ReadyInterval   int               `json:"readyInterval"`
	ReadyMax        int               `json:"readyMax"`
	TokenWait       int               `json:"tokenWait"`
	SaveFreq        int               `json:"saveFreq"`
	L10n            map[string]string `json:"l10n"`
}

type pageData struct {
	Lang    string
	Title   string
	Script  string
	Version string
	Config  pageConfig
}

var languagePattern = regexp.MustCompile(`^[a-zA-Z]{2,3}([-_][a-zA-Z0-9]{2,8})*$`)

// htmlPage describes the answers of an embed page: the page, or a page
// that tells the parent the content is not found.
func htmlPage(op *huma.Operation, _ func(any) *huma.Schema) {
	page := &huma.MediaType{Schema: &huma.Schema{Type: "string",
		Description: "The page, framed only by the allowed origins (Content-Security-Policy frame-ancestors)."}}
	op.Responses["200"] = &huma.Response{Description: "The page.", Content: map[string]*huma.MediaType{"text/html": page}}
	notFound := op.Responses["404"]
	if notFound == nil {
		notFound = &huma.Response{Description: "Not Found"}
		op.Responses["404"] = notFound
	}
	if notFound.Content == nil {
		notFound.Content = map[string]*huma.MediaType{}
	}
	notFound.Content["text/html"] = page
	notFound.Description += " An unknown content is a page that still tells the parent why nothing loads."
}

// queryParam is one query parameter of an embed page.
type queryParam struct{ name, value string }

// pageQuery keeps the embed page's query parameters the page passes on to
// the play and edit models, after checking them.
func pageQuery(params ...queryParam) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range params {
		n, v := p.name, p.value
		if v == "" {
			continue
		}
		switch n {
		case "language":
			if !languagePattern.MatchString(v) {
				return nil, apperr.Field("language", "Must be a language code such as en or pt-BR.")
			}
		case "contextId":
			if len(v) > maxContextID {
				return nil, apperr.Field("contextId", "Must be at most 255 characters.")
			}
		case "readOnlyState":
			if v != "yes" {
				continue
			}
		case "hideActions":
			if v != "1" {
				continue
			}
		}
		out[n] = v
	}
	return out, nil
}

// allowedOrigins are the page's allowed origins: the configured list, or
// only the proxy's origin when a same-origin proxy narrows it (h, the
// EmbedOriginHeader).
func (s *Service) allowedOrigins(h string) (origins []string, any bool) {
	if h != "" {
		if o, ok := normalOrigin(h); ok {
			return []string{o}, false
		}
	}
	return append([]string{}, s.embed.origins...), s.embed.wildcard
}

// writePage answers an embed page with the protocol's security headers.
func (s *Service) writePage(w http.ResponseWriter, r *http.Request, status int, d pageData) {
	h := w.Header()
	ancestors := "'self'"
	if d.Config.AnyOrigin {
		ancestors = "*"
	} else if len(d.Config.AllowedOrigins) > 0 {
		ancestors += " " + strings.Join(d.Config.AllowedOrigins, " ")
	}
	h.Set("Content-Security-Policy", "frame-ancestors "+ancestors)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := embedPage.Execute(w, d); err != nil {
		s.log.ErrorContext(r.Context(), "h5p: render embed page", "error", err)
	}
}

func (s *Service) basePage(embedOrigin, mode, id string, query map[string]string) pageData {
	origins, anyOrigin := s.allowedOrigins(embedOrigin)
	lang := query["language"]
	if lang == "" {
		lang = "en"
	}
	return pageData{
		Lang:    lang,
		Title:   "H5P",
		Script:  map[string]string{"play": "player", "edit": "editor"}[mode],
		Version: s.embed.assetVersion,
		Config: pageConfig{
			Mode:           mode,
			ContentID:      id,
			AllowedOrigins: origins,
			AnyOrigin:      anyOrigin,
			Query:          query,
			CoreURL:        "/h5p/core",
			CoreInstalled:  installed(s.embed.coreDir, coreScript),
			ReadyInterval:  readyIntervalMS,
			ReadyMax:       readyMax,
			TokenWait:      tokenWaitMS,
			SaveFreq:       SaveFrequency,
			L10n:           coreStrings,
		},
	}
}

// pageAnswer streams an embed page (writePage).
func (s *Service) pageAnswer(ctx context.Context, status int, d pageData) *huma.StreamResponse {
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		r, w := humago.Unwrap(hctx)
		s.writePage(w, r.WithContext(ctx), status, d)
	}}
}

type embedPlayInput struct {
	ID            string `path:"id" doc:"Content id."`
	Language      string `query:"language" doc:"The player's language, as en or pt-BR."`
	ContextID     string `query:"contextId" doc:"The context the state belongs to (at most 255 characters)."`
	ReadOnlyState string `query:"readOnlyState" doc:"yes: the state is shown but not saved."`
	HideActions   string `query:"hideActions" doc:"1: the player hides its action bar."`
	EmbedOrigin   string `header:"X-Lms-Embed-Origin" doc:"Set by a same-origin proxy: the only origin allowed to frame the page."`
}

func (s *Service) embedPlay(ctx context.Context, in *embedPlayInput) (*huma.StreamResponse, error) {
	query, err := pageQuery(queryParam{"language", in.Language}, queryParam{"contextId", in.ContextID},
		queryParam{"readOnlyState", in.ReadOnlyState}, queryParam{"hideActions", in.HideActions})
	if err != nil {
		return nil, err
	}
	c, err := s.content(ctx, in.ID)
	if apperr.Is(err, apperr.NotFound) {
		return s.notFoundPage(ctx, in.EmbedOrigin, "play", in.ID, query), nil
	}
	if err != nil {
		return nil, err
	}
	d := s.basePage(in.EmbedOrigin, "play", in.ID, query)
	if c.Title != "" {
		d.Title = c.Title
	}
	return s.pageAnswer(ctx, http.StatusOK, d), nil
}

type embedEditInput struct {
	ID          string `path:"id" doc:"Content id, or new."`
	Language    string `query:"language" doc:"The editor's language, as en or pt-BR."`
	EmbedOrigin string `header:"X-Lms-Embed-Origin" doc:"Set by a same-origin proxy: the only origin allowed to frame the page."`
}

func (s *Service) embedEdit(ctx context.Context, in *embedEditInput) (*huma.StreamResponse, error) {
	query, err := pageQuery(queryParam{"language", in.Language})
	if err != nil {
		return nil, err
	}
	if in.ID != "new" {
		_, err := s.content(ctx, in.ID)
		if apperr.Is(err, apperr.NotFound) {
			return s.notFoundPage(ctx, in.EmbedOrigin, "edit", in.ID, query), nil
		}
		if err != nil {
			return nil, err
		}
	}
	d := s.basePage(in.EmbedOrigin, "edit", in.ID, query)
	d.Title = "H5P editor"
	if installed(s.embed.editorDir, editorMainScript) {
		d.Config.EditorInstalled = true
		d.Config.EditorURL = "/h5p/editor"
		d.Config.EditorScripts, d.Config.EditorStyles = editorAssets(s.embed.editorDir)
	}
	return s.pageAnswer(ctx, http.StatusOK, d), nil
}

// notFoundPage answers 404 with a page that still speaks the protocol, so
// the parent learns why nothing loads.
func (s *Service) notFoundPage(ctx context.Context, embedOrigin, mode, id string, query map[string]string) *huma.StreamResponse {
	d := s.basePage(embedOrigin, mode, id, query)
	d.Title = "Content not found"
	d.Config.ContentID = ""
	return s.pageAnswer(ctx, http.StatusNotFound, d)
}

// embedAsset serves the pages' own scripts and styles.
func (s *Service) embedAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	switch name {
	case "protocol.js", "player.js", "editor.js", "embed.css":
	default:
		writeError(w, r, errFileNotFound)
		return
	}
	b, err := embedFiles.ReadFile("embed/" + name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", fileType(name))
	h.Set("X-Content-Type-Options", "nosniff")
	// Pages ask for ?v=<hash of the assets>, so a long lifetime is safe.
	h.Set("Cache-Control", "public, max-age=86400")
	h.Set("ETag", `"`+s.embed.assetVersion+`"`)
	if match := r.Header.Get("If-None-Match"); match == `"`+s.embed.assetVersion+`"` {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(b)
}

func (s *Service) coreFile(w http.ResponseWriter, r *http.Request) {
	serveDirFile(w, r, s.embed.coreDir, r.PathValue("file"), "The H5P player is not installed on this server (run make build).")
}

func (s *Service) editorFile(w http.ResponseWriter, r *http.Request) {
	serveDirFile(w, r, s.embed.editorDir, r.PathValue("file"), "The H5P editor is not installed on this server (set LMS_H5P_EDITOR_DIR).")
}

// serveDirFile serves file from dir with Range support; missing says why
// the whole directory is absent.
func serveDirFile(w http.ResponseWriter, r *http.Request, dir, file, missing string) {
	if dir == "" {
		writeError(w, r, apperr.New(apperr.NotFound, missing))
		return
	}
	if !safeFile(file) {
		writeError(w, r, apperr.New(apperr.BadRequest, "Invalid path."))
		return
	}
	f, err := os.DirFS(dir).Open(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !installed(dir, coreScript) && !installed(dir, editorMainScript) {
			writeError(w, r, apperr.New(apperr.NotFound, missing))
			return
		}
		writeError(w, r, errFileNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		writeError(w, r, errFileNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", fileType(file))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=3600")
	rs, ok := f.(io.ReadSeeker)
	if !ok {
		writeError(w, r, errFileNotFound)
		return
	}
	http.ServeContent(w, r, "", st.ModTime(), rs)
}
