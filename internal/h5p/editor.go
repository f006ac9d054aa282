package h5p

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // image sizes of uploads
	_ "image/jpeg"
	_ "image/png"
	"io"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
)

// TempSweepJob is the name of the job deleting stale editor uploads.
const TempSweepJob = "h5p-temp-sweep"

const (
	// TempFileTTL is how long an editor upload not saved into content is
	// kept.
	TempFileTTL = 120 * time.Minute
	// tempSweepPeriod is how often the sweep runs.
	tempSweepPeriod = 30 * time.Minute
	// maxTempFileSize caps one editor upload.
	maxTempFileSize = 64 << 20
)

// editorRoutes registers the editor's AJAX endpoint and the temporary
// files it uploads.
func (s *Service) editorRoutes(mux *http.ServeMux, api, private huma.API) {
	mux.Handle("GET /h5p/ajax", s.user(http.HandlerFunc(s.editorAjax)))
	mux.Handle("POST /h5p/ajax", s.user(http.HandlerFunc(s.editorAjax)))
	mux.Handle("GET /h5p/temp-files/{path...}", s.user(http.HandlerFunc(s.tempFile)))
	s.hubRoutes(api)
	httpx.Handle(private, httpx.Route{Method: "GET", Path: "/h5p/contents/{id}/edit", Tags: h5pTags, Who: httpx.User, Scope: scopeOf("GET"),
		Summary: "Get the editor model of a content (its edit permission), or of a new one with id new (h5p_create)"},
		s.editModel)
	describe(private, "GET", "/h5p/contents/{id}/edit", jsonAnswer[editAnswer])
	httpx.Handle(private, httpx.Route{Method: "POST", Path: "/h5p/contents/{id}/edit-grant", Tags: h5pTags, Who: httpx.User,
		Scope: scopeOf("POST"), Status: http.StatusCreated,
		Summary: "Issue an edit grant: the caller's editor of a content (its edit permission), or of a new one with id new " +
			"(h5p_create), for the embed page on another origin"}, s.editGrant)
}

// EditGrantTTL is how long an edit grant lasts: an editing sitting.
const EditGrantTTL = 2 * time.Hour

// EditGrant is an edit grant (content.H5PGrant) with what it opens.
type EditGrant struct {
	Grant     string    `json:"grant" doc:"Hand it to the editor page (GET /h5p/embed/edit/{contentId}) in lms-h5p:token. It opens only that page, its model, the editor's AJAX actions and uploads (not those that install libraries), the content's files and saving it: PATCH /h5p/contents/{contentId}, or POST /h5p/contents for new. It is taken as Authorization: Bearer or as _token."`
	ContentID string    `json:"contentId" doc:"The content the grant edits, or new."`
	ExpiresAt time.Time `json:"expiresAt"`
}

// editGrant issues the caller's edit grant of a content, after the checks
// of the editor model: the grant then holds only what editing needs, for
// that content, for EditGrantTTL. A page on another origin that runs the
// editor (and the libraries' code in it) is handed the grant, never the
// caller's token. Only a user gets one: a grant names who edits.
func (s *Service) editGrant(ctx context.Context, in *contentPath) (*httpx.Response[EditGrant], error) {
	isNew := in.ID == content.NewContent
	if err := mayOpenEditor(ctx, isNew); err != nil {
		return nil, err
	}
	u := UserFrom(ctx)
	userID, err := strconv.ParseInt(u.ID, 10, 64)
	if err != nil || u.System {
		return nil, apperr.New(apperr.Forbidden, "An edit grant is issued to a user.")
	}
	id := content.NewContent
	if !isNew {
		c, err := s.content(ctx, in.ID)
		if err == nil {
			err = changeAllowed(ctx, c, access.H5PUpdate, access.H5PAuthorUpdate)
		}
		if err != nil {
			return nil, err
		}
		id = h5pstore.FormatID(c.ID)
	}
	g := content.H5PGrant{UserID: userID, ContentID: id, Expires: s.clock.Now().Add(EditGrantTTL).Unix(), Edit: true}
	return httpx.Created(EditGrant{Grant: content.SignH5PGrant(httpx.TenantFrom(ctx).URLKey, g), ContentID: id,
		ExpiresAt: time.Unix(g.Expires, 0).UTC()}, "")
}

// Jobs are the scheduled jobs of the H5P service: the sweep of editor
// uploads every 30 minutes.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{{Name: TempSweepJob, Schedule: jobs.Every(tempSweepPeriod), Run: s.SweepTempFiles}}
}

// SweepTempFiles deletes the tenant's editor uploads older than
// TempFileTTL.
func (s *Service) SweepTempFiles(ctx context.Context, t *platform.Tenant, now time.Time) error {
	n, err := s.Store.SweepTempFiles(ctx, t, now.Add(-TempFileTTL))
	if n > 0 {
		s.log.InfoContext(ctx, "h5p temporary files swept", "tenant", t.Name, "count", n)
	}
	return err
}

// mayEdit checks the editor permissions: a logged-in user with
// h5p_create, h5p_update or h5p_author_update.
func mayEdit(w http.ResponseWriter, r *http.Request) bool {
	return allowed(w, r, access.H5PCreate, access.H5PUpdate, access.H5PAuthorUpdate)
}

func (s *Service) editorAjax(w http.ResponseWriter, r *http.Request) {
	if !mayEdit(w, r) {
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	q := r.URL.Query()
	switch action := q.Get("action"); {
	case action == "libraries" && r.Method == http.MethodGet && q.Get("machineName") != "":
		s.editorLibrary(w, r)
	case action == "libraries" && r.Method == http.MethodGet:
		s.editorLibraries(w, r, nil)
	case action == "libraries":
		if names, ok := postedLibraries(w, r); ok {
			s.editorLibraries(w, r, names)
		}
	case action == "translations" && r.Method == http.MethodPost:
		s.translations(w, r)
	case action == "content-type-cache" && r.Method == http.MethodGet:
		s.contentTypeCache(w, r)
	case action == "files" && r.Method == http.MethodPost:
		s.uploadTempFile(w, r)
	case action == "filter" && r.Method == http.MethodPost:
		s.filterParameters(w, r)
	case action == "library-upload" && r.Method == http.MethodPost:
		s.libraryUpload(w, r)
	case action == "library-install" && r.Method == http.MethodPost:
		s.libraryInstall(w, r)
	default:
		writeError(w, r, apperr.New(apperr.NotFound, "Unknown editor action."))
	}
}

// EditModel is what the editor page needs to edit a content, or to create
// one when id is "new", but for the content's parameters and metadata,
// which are written as stored. It is exported because huma leaves an
// unexported embedded struct's fields out of the schemas (editAnswer).
type EditModel struct {
	ContentID string       `json:"contentId"`
	Library   string       `json:"library"`
	Editor    editorConfig `json:"editor"`
}

// editorConfig is the H5P editor's integration object.
type editorConfig struct {
	AjaxPath      string     `json:"ajaxPath"`
	FilesPath     string     `json:"filesPath"`
	LibraryURL    string     `json:"libraryUrl"`
	ContentRelURL string     `json:"contentRelUrl"`
	Language      string     `json:"language"`
	APIVersion    apiVersion `json:"apiVersion"`
}

type apiVersion struct {
	Major int `json:"majorVersion"`
	Minor int `json:"minorVersion"`
}

// languageCodeRe matches the language codes the editor loads translations
// for: "en", "pt-br", "zh-Hant".
var languageCodeRe = regexp.MustCompile(`^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{1,8}){0,2}$`)

// editAnswer describes the data of GET /h5p/contents/{id}/edit: the model
// with the stored metadata and parameters.
type editAnswer struct {
	EditModel
	Metadata json.RawMessage `json:"metadata" doc:"The package descriptor (h5p.json); {} for a new content."`
	Params   json.RawMessage `json:"params" doc:"The content parameters (content.json); {} for a new content."`
}

type editInput struct {
	ID       string `path:"id" doc:"Content id, or new."`
	Language string `query:"language" doc:"The editor's language, as en or pt-br; en when not given."`
}

// editModel answers the editor model: a new content needs h5p_create, an
// existing one the edit permission on it.
func (s *Service) editModel(ctx context.Context, in *editInput) (*huma.StreamResponse, error) {
	isNew := in.ID == "new"
	if err := mayOpenEditor(ctx, isNew); err != nil {
		return nil, err
	}
	lang, err := editorLanguage(in.Language)
	if err != nil {
		return nil, err
	}
	m := s.newEditModel(lang)
	if isNew {
		return rawAnswer(ctx, m, rawField{"metadata", "{}"}, rawField{"params", "{}"}), nil
	}
	c, err := s.content(ctx, in.ID)
	if err == nil {
		err = changeAllowed(ctx, c, access.H5PUpdate, access.H5PAuthorUpdate)
	}
	if err != nil {
		return nil, err
	}
	m.ContentID = h5pstore.FormatID(c.ID)
	m.Library = c.MainLibrary + " " + c.LibraryVersion
	m.Editor.FilesPath = "/h5p/content/" + m.ContentID
	return rawAnswer(ctx, m, rawField{"metadata", string(c.Metadata)}, rawField{"params", c.Parameters}), nil
}

// mayOpenEditor checks the permission to open the editor: h5p_create for
// a new content, an edit permission for another.
func mayOpenEditor(ctx context.Context, isNew bool) error {
	if isNew {
		return permit(ctx, access.H5PCreate)
	}
	return permit(ctx, access.H5PUpdate, access.H5PAuthorUpdate)
}

// editorLanguage is the language the editor loads, en when none is given.
func editorLanguage(lang string) (string, error) {
	if lang == "" {
		return "en", nil
	}
	if !languageCodeRe.MatchString(lang) {
		return "", apperr.Field("language", "Must be a language code such as en or pt-br.")
	}
	return lang, nil
}

// newEditModel is the editor model of a new content.
func (s *Service) newEditModel(lang string) EditModel {
	core := s.Store.CoreAPI()
	return EditModel{ContentID: "new", Library: "",
		Editor: editorConfig{AjaxPath: "/h5p/ajax?action=", FilesPath: "/h5p/temp-files", LibraryURL: "/h5p/editor/",
			ContentRelURL: "../content/", Language: lang, APIVersion: apiVersion{Major: core.Major, Minor: core.Minor}}}
}

// editorLibrary is a library as the editor's library list shows it.
type editorLibrary struct {
	UberName         string          `json:"uberName"`
	Name             string          `json:"name"`
	MajorVersion     int             `json:"majorVersion"`
	MinorVersion     int             `json:"minorVersion"`
	PatchVersion     int             `json:"patchVersion"`
	Title            string          `json:"title"`
	Runnable         bool            `json:"runnable"`
	Restricted       bool            `json:"restricted"`
	TutorialURL      string          `json:"tutorialUrl"`
	MetadataSettings json.RawMessage `json:"metadataSettings"`
}

func toEditorLibrary(l h5pstore.Library) editorLibrary {
	var j h5ppackage.LibraryJSON
	_ = json.Unmarshal(l.JSON, &j)
	meta := j.MetadataSettings
	if len(meta) == 0 {
		meta = json.RawMessage("null")
	}
	return editorLibrary{
		UberName: fmt.Sprintf("%s %d.%d", l.MachineName, l.Major, l.Minor), Name: l.MachineName,
		MajorVersion: l.Major, MinorVersion: l.Minor, PatchVersion: l.Patch, Title: l.Title,
		Runnable: l.Runnable, Restricted: l.Restricted, MetadataSettings: meta,
	}
}

// editorLibraries lists the runnable libraries, or with names ("H5P.Foo
// 1.2" or "H5P.Foo-1.2") those of them that are installed.
func (s *Service) editorLibraries(w http.ResponseWriter, r *http.Request, names []string) {
	libs, err := s.Store.Libraries(r.Context(), httpx.TenantFrom(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	want := map[string]bool{}
	for _, n := range names {
		if m, maj, min, ok := parseUber(n); ok {
			want[fmt.Sprintf("%s %d.%d", m, maj, min)] = true
		} else if m, maj, min, err := h5pstore.ParseLibrary(n); err == nil {
			want[fmt.Sprintf("%s %d.%d", m, maj, min)] = true
		}
	}
	out := []editorLibrary{}
	for _, l := range libs {
		e := toEditorLibrary(l)
		if names == nil && l.Runnable || names != nil && want[e.UberName] {
			out = append(out, e)
		}
	}
	httpx.WriteJSON(w, http.StatusOK, out)
}

// editorLibrary answers one library's semantics, language and the scripts
// and styles the editor loads for it.
func (s *Service) editorLibrary(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	t := httpx.TenantFrom(ctx)
	q := r.URL.Query()
	major, e1 := strconv.Atoi(q.Get("majorVersion"))
	minor, e2 := strconv.Atoi(q.Get("minorVersion"))
	if e1 != nil || e2 != nil {
		writeError(w, r, errLibraryNotFound)
		return
	}
	l, err := s.Store.Library(ctx, t, q.Get("machineName"), major, minor)
	if err != nil {
		writeError(w, r, err)
		return
	}
	semantics, err := s.readLibraryFile(ctx, t, l, "semantics.json")
	if err != nil {
		writeError(w, r, err)
		return
	}
	lang := q.Get("languageCode")
	if lang == "" {
		lang = "en"
	}
	var language json.RawMessage
	if safeFile(lang) && !strings.Contains(lang, "/") {
		if language, err = s.readLibraryFile(ctx, t, l, "language/"+lang+".json"); err != nil {
			writeError(w, r, err)
			return
		}
	}
	scripts, styles, err := s.libraryAssets(ctx, t, l)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if semantics == nil {
		semantics = json.RawMessage("[]")
	}
	if language == nil {
		language = json.RawMessage("null")
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"name": l.MachineName, "version": map[string]int{"major": l.Major, "minor": l.Minor, "patch": l.Patch},
		"title": l.Title, "semantics": semantics, "language": language, "defaultLanguage": lang,
		"javascript": scripts, "css": styles, "translations": map[string]any{},
	})
}

// readLibraryFile reads a JSON file of the installed version of a library;
// nil when it is absent or not JSON.
func (s *Service) readLibraryFile(ctx context.Context, t *platform.Tenant, l h5pstore.Library, file string) (json.RawMessage, error) {
	dir := l.Ref().Dir()
	rc, _, err := t.Blob.Get(ctx, l.Ref().FilesPrefix()+file)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("h5p: read %s/%s: %w", dir, file, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("h5p: read %s/%s: %w", dir, file, err)
	}
	if !json.Valid(b) {
		return nil, nil
	}
	return b, nil
}

// libraryAssets lists the script and style URLs of l and of the libraries
// it needs (preloaded and editor dependencies, dependencies first).
func (s *Service) libraryAssets(ctx context.Context, t *platform.Tenant, root h5pstore.Library) (scripts, styles []string, err error) {
	scripts, styles = []string{}, []string{}
	seen := map[string]bool{}
	var visit func(l h5pstore.Library) error
	visit = func(l h5pstore.Library) error {
		dir := l.Ref().Dir()
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		var j h5ppackage.LibraryJSON
		_ = json.Unmarshal(l.JSON, &j)
		for _, d := range slices.Concat(j.PreloadedDependencies, j.EditorDependencies) {
			dl, err := s.Store.Library(ctx, t, d.MachineName, d.MajorVersion, d.MinorVersion)
			var ae *apperr.Error
			if errors.As(err, &ae) && ae.Kind == apperr.NotFound {
				continue
			}
			if err != nil {
				return err
			}
			if err := visit(dl); err != nil {
				return err
			}
		}
		for _, p := range j.PreloadedJS {
			scripts = append(scripts, libraryURL(h5pstore.Asset{Dir: dir, Path: p.Path}))
		}
		for _, p := range j.PreloadedCSS {
			styles = append(styles, libraryURL(h5pstore.Asset{Dir: dir, Path: p.Path}))
		}
		return nil
	}
	return scripts, styles, visit(root)
}

// contentTypeCache answers the content-type cache (see cacheModel) in the
// raw form the H5P editor's hub client reads, without calling the hub.
func (s *Service) contentTypeCache(w http.ResponseWriter, r *http.Request) {
	m, err := s.cacheModel(r.Context(), httpx.TenantFrom(r.Context()), UserFrom(r.Context()), false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	httpx.WriteJSON(w, http.StatusOK, m)
}

// uploadTempFile stores the editor's upload as a temporary file and
// answers its path with the "#tmp" suffix the editor saves.
func (s *Service) uploadTempFile(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength > maxTempFileSize+multipartSlack {
		writeError(w, r, errTooLarge)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxTempFileSize+multipartSlack)
	if err := r.ParseMultipartForm(8 << 20); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeError(w, r, errTooLarge)
			return
		}
		writeError(w, r, apperr.Field("file", "Send the file as multipart/form-data."))
		return
	}
	defer r.MultipartForm.RemoveAll()
	if f := r.FormValue("field"); f != "" && !json.Valid([]byte(f)) {
		writeError(w, r, apperr.Field("field", "Must be JSON."))
		return
	}
	f, hdr, err := r.FormFile("file")
	if err != nil {
		writeError(w, r, apperr.Field("file", "The field file is required."))
		return
	}
	defer f.Close()
	if hdr.Size > maxTempFileSize {
		writeError(w, r, errTooLarge)
		return
	}
	name := path.Base(strings.ReplaceAll(hdr.Filename, "\\", "/"))
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(name)), ".")
	if name == "" || name == "." || name == "/" || !slices.Contains(h5ppackage.DefaultContentExtensions(), ext) {
		writeError(w, r, apperr.Field("file", "This file type is not allowed."))
		return
	}
	mimeType := fileType(name)
	res := map[string]any{"mime": mimeType}
	if strings.HasPrefix(mimeType, "image/") {
		if cfg, _, err := image.DecodeConfig(f); err == nil {
			res["width"], res["height"] = cfg.Width, cfg.Height
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			writeError(w, r, fmt.Errorf("h5p: rewind upload: %w", err))
			return
		}
	}
	t := httpx.TenantFrom(r.Context())
	p, err := s.Store.SaveTempFile(r.Context(), t, userID(UserFrom(r.Context())), name, f, hdr.Size, mimeType)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res["path"] = p + h5pstore.TempSuffix
	httpx.WriteJSON(w, http.StatusOK, res)
}

// filterParameters checks that the posted libraryParameters parse and
// echoes them.
func (s *Service) filterParameters(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 16<<20)
	if err := r.ParseForm(); err != nil {
		writeError(w, r, apperr.New(apperr.BadRequest, "Send libraryParameters as a form."))
		return
	}
	raw := r.PostForm.Get("libraryParameters")
	if raw == "" || !json.Valid([]byte(raw)) {
		writeError(w, r, apperr.Field("libraryParameters", "Must be JSON."))
		return
	}
	writeData(w, http.StatusOK, json.RawMessage(raw))
}

// tempFile serves a temporary file to the user who uploaded it.
func (s *Service) tempFile(w http.ResponseWriter, r *http.Request) {
	u := UserFrom(r.Context())
	p := r.PathValue("path")
	if !u.LoggedIn() || !safeFile(p) {
		writeError(w, r, errFileNotFound)
		return
	}
	owner, found, err := s.Store.TempFileOwner(r.Context(), httpx.TenantFrom(r.Context()), p)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !found || owner != userID(u) {
		writeError(w, r, errFileNotFound)
		return
	}
	s.serveFile(w, r, h5pstore.TempPrefix, p, "private, no-store")
}
