package h5p

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
)

// multipartSlack is what a multipart body may carry beyond the package
// itself (boundaries, part headers, small fields).
const multipartSlack = 64 << 10

var errNotFound = apperr.New(apperr.NotFound, "Content not found.")

var h5pTags = []string{"H5P"}

// contentRoutes registers the content and library administration routes.
func (s *Service) contentRoutes(api huma.API) {
	user := func(method, path, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Summary: summary, Tags: h5pTags, Who: httpx.User,
			Scope: scopeOf(method)}
	}
	anyone := func(method, path, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Summary: summary, Tags: h5pTags, Who: httpx.Anyone,
			Scope: scopeOf(method)}
	}
	created := func(r httpx.Route) httpx.Route { r.Status = http.StatusCreated; return r }

	httpx.Handle(api, created(user("POST", "/h5p/contents/upload",
		"Upload an .h5p package as new content (h5p_create; installs its libraries with h5p_library_install or h5p_library_update)")),
		s.uploadContent)
	describe(api, "POST", "/h5p/contents/upload", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.RequestBody = packageBody("h5p_file")
		packageErrors(op, schema)
	})
	httpx.Handle(api, user("GET", "/h5p/contents", "List contents (all with h5p_list, own with h5p_author_list)"), s.listContents)
	httpx.Handle(api, created(user("POST", "/h5p/contents", "Create content from editor parameters (h5p_create)")), s.createContent)
	describe(api, "POST", "/h5p/contents", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.RequestBody = jsonBody(schema(contentBody{}))
	})
	orphans := user("POST", "/h5p/contents/orphans/delete",
		"Delete the files of content ids without a row in the tenant (internal token only)")
	orphans.Scope = httpx.NoTokens
	httpx.Handle(api, orphans, s.deleteOrphans)
	describe(api, "POST", "/h5p/contents/orphans/delete", func(op *huma.Operation, _ func(any) *huma.Schema) {
		op.Security = []map[string][]string{{internalScheme: {}}}
	})
	httpx.Handle(api, anyone("GET", "/h5p/contents/{id}", "Get a content's summary, metadata and parameters"), s.getContent)
	describe(api, "GET", "/h5p/contents/{id}", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.Responses["200"] = &huma.Response{Description: "OK", Content: map[string]*huma.MediaType{
			"application/json": {Schema: schema(httpx.Envelope[contentDetail]{})}}}
	})
	httpx.Handle(api, user("PATCH", "/h5p/contents/{id}",
		"Save editor parameters of a content (h5p_update, or h5p_author_update on own content)"), s.updateContent)
	describe(api, "PATCH", "/h5p/contents/{id}", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.RequestBody = jsonBody(schema(contentBody{}))
	})
	httpx.Handle(api, user("DELETE", "/h5p/contents/{id}",
		"Delete a content with its files, user states and results (h5p_delete, or h5p_author_delete on own content)"), s.deleteContent)
	httpx.Handle(api, anyone("GET", "/h5p/contents/{id}/download", "Download a content as an .h5p package"), s.downloadContent)
	describe(api, "GET", "/h5p/contents/{id}/download", func(op *huma.Operation, _ func(any) *huma.Schema) {
		op.Responses["200"] = &huma.Response{Description: "The .h5p package, as an attachment; ranges are served.",
			Content: map[string]*huma.MediaType{"application/zip": {Schema: &huma.Schema{Type: "string", ContentEncoding: "binary"}}}}
	})
	// The H5P client's own download link: the same answer, outside the
	// REST description.
	download := anyone("GET", "/h5p/download/{id}", "Download a content as an .h5p package")
	download.Hidden = true
	httpx.Handle(api, download, s.downloadContent)

	httpx.Handle(api, user("GET", "/h5p/libraries", "List installed libraries (h5p_library_list)"), s.listLibraries)
	httpx.Handle(api, user("POST", "/h5p/libraries",
		"Install or update the libraries of an .h5p package (h5p_library_upload or h5p_library_install)"), s.uploadLibraries)
	describe(api, "POST", "/h5p/libraries", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.RequestBody = packageBody("file")
		packageErrors(op, schema)
	})
	httpx.Handle(api, user("GET", "/h5p/libraries/{uber}", "Get a library with its library.json (h5p_library_read)"), s.getLibrary)
	httpx.Handle(api, user("PATCH", "/h5p/libraries/{uber}", "Restrict or release a library (h5p_library_update)"), s.patchLibrary)
	describe(api, "PATCH", "/h5p/libraries/{uber}", func(op *huma.Operation, schema func(any) *huma.Schema) {
		op.RequestBody = jsonBody(schema(restrictedBody{}))
	})
	httpx.Handle(api, user("DELETE", "/h5p/libraries/{uber}", "Delete a library no content or library uses (h5p_library_delete)"), s.deleteLibrary)
}

// contentPath names a content in the path.
type contentPath struct {
	ID string `path:"id" doc:"Content id."`
}

// libraryPath names a library in the path.
type libraryPath struct {
	Uber string `path:"uber" doc:"Library with major and minor version, as H5P.Foo-1.2."`
}

// permit checks that the caller holds one of perms: Unauthorized for an
// anonymous caller, Forbidden for a user without any of them.
func permit(ctx context.Context, perms ...access.Permission) error {
	u := UserFrom(ctx)
	if !u.LoggedIn() {
		return apperr.New(apperr.Unauthorized, "Log in to do this.")
	}
	for _, p := range perms {
		if u.Can(string(p)) {
			return nil
		}
	}
	return apperr.New(apperr.Forbidden, "You are not allowed to do this.")
}

// allowed is permit for plain handlers, answering the refusal.
func allowed(w http.ResponseWriter, r *http.Request, perms ...access.Permission) bool {
	if err := permit(r.Context(), perms...); err != nil {
		writeError(w, r, err)
		return false
	}
	return true
}

// userID is the caller's numeric id; 0 for the system and anonymous.
func userID(u *User) int64 {
	id, err := strconv.ParseInt(u.ID, 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// ActingUserHeader names, on a call with the internal token, the user the
// platform acts for (a tutor creating an H5P topic through the API): the
// content it uploads belongs to that user. Without the internal token the
// header is ignored.
const ActingUserHeader = "X-Lms-Acting-User"

// creatorID is the owner of a content the caller creates: the caller, or
// for the platform the user it acts for (0 when none).
func creatorID(r *http.Request, u *User) int64 {
	if !u.System {
		return userID(u)
	}
	id, err := strconv.ParseInt(r.Header.Get(ActingUserHeader), 10, 64)
	if err != nil || id < 0 {
		return 0
	}
	return id
}

// owns reports whether the logged-in user created the content.
func owns(u *User, c h5pstore.Content) bool {
	id := userID(u)
	return id != 0 && id == c.UserID
}

// ContentSummary is a content in a list. It is exported because huma
// leaves an unexported embedded struct's fields out of the schemas of the
// answers embedding it (contentDetail).
type ContentSummary struct {
	ID             string    `json:"id"`
	Title          string    `json:"title"`
	MainLibrary    string    `json:"mainLibrary"`
	LibraryVersion string    `json:"libraryVersion"`
	UserID         string    `json:"userId"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

// contentDetail is the data of GET /h5p/contents/{id}. It describes the
// answer; the answer itself is written with the stored metadata and
// parameters as they are (writeDataRaw).
type contentDetail struct {
	ContentSummary
	Metadata   json.RawMessage `json:"metadata" doc:"The package descriptor (h5p.json)."`
	Parameters json.RawMessage `json:"parameters" doc:"The content parameters (content.json)."`
}

func summary(c h5pstore.Content) ContentSummary {
	return ContentSummary{
		ID: h5pstore.FormatID(c.ID), Title: c.Title, MainLibrary: c.MainLibrary,
		LibraryVersion: c.LibraryVersion, UserID: strconv.FormatInt(c.UserID, 10),
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

// packageErrorBody is the answer to a package that failed to open or
// validate: the envelope with every problem listed.
type packageErrorBody struct {
	status  int
	Success bool                 `json:"success"`
	Message string               `json:"message"`
	Errors  []h5ppackage.Problem `json:"errors"`
}

func (e *packageErrorBody) Error() string  { return e.Message }
func (e *packageErrorBody) GetStatus() int { return e.status }

// packageError turns a package's failure into its answer: 413 when it is
// too large, else 422, naming every problem. Other errors are returned as
// they are.
func packageError(err error) error {
	var perr *h5ppackage.Error
	if !errors.As(err, &perr) {
		return err
	}
	status := http.StatusUnprocessableEntity
	if perr.Kind == h5ppackage.TooLarge {
		status = http.StatusRequestEntityTooLarge
	}
	msgs := make([]string, 0, len(perr.Problems))
	for i, p := range perr.Problems {
		if i == 10 {
			msgs = append(msgs, fmt.Sprintf("and %d more", len(perr.Problems)-i))
			break
		}
		msgs = append(msgs, p.Message)
	}
	problems := perr.Problems
	if problems == nil {
		problems = []h5ppackage.Problem{}
	}
	return &packageErrorBody{status: status, Message: "The H5P package is invalid: " + strings.Join(msgs, " "), Errors: problems}
}

// writePackageError answers packageError(err) for plain handlers.
func writePackageError(w http.ResponseWriter, r *http.Request, err error) {
	var body *packageErrorBody
	if errors.As(packageError(err), &body) {
		httpx.WriteJSON(w, body.status, body)
		return
	}
	writeError(w, r, err)
}

var errTooLarge = apperr.New(apperr.TooLarge, "The upload is too large.")

// receivePackage streams the first multipart field named one of fields to
// a temporary file within the upload cap, then opens and validates it. The
// caller runs cleanup once done with the package. w may be nil; it only
// lets an oversized body close the connection.
func (s *Service) receivePackage(w http.ResponseWriter, r *http.Request, t *platform.Tenant, librariesOnly bool, fields ...string) (*h5ppackage.Package, func(), error) {
	field := fields[0]
	limit := s.maxUpload
	if r.ContentLength > limit+multipartSlack {
		return nil, nil, errTooLarge
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit+multipartSlack)
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, nil, apperr.Field(field, "Send the package as multipart/form-data.")
	}
	for {
		part, err := mr.NextPart()
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, nil, errTooLarge
			}
			return nil, nil, apperr.Field(field, "The field "+field+" with an .h5p package is required.")
		}
		if !slices.Contains(fields, part.FormName()) {
			part.Close()
			continue
		}
		f, n, cleanup, err := spoolPackage(part, limit)
		if err != nil {
			return nil, nil, err
		}
		if err := scan.Check(r.Context(), s.scanner, io.NewSectionReader(f, 0, n), field); err != nil {
			cleanup()
			return nil, nil, err
		}
		p, err := s.openPackage(r.Context(), t, f, n, limit, librariesOnly)
		if err != nil {
			cleanup()
			return nil, nil, err
		}
		return p, cleanup, nil
	}
}

// spoolPackage copies a package of at most limit bytes from src to a
// temporary file; errTooLarge when src holds more. The caller runs cleanup
// once done with the file.
func spoolPackage(src io.Reader, limit int64) (f *os.File, n int64, cleanup func(), err error) {
	f, err = os.CreateTemp("", "h5p-upload-*.h5p")
	if err != nil {
		return nil, 0, nil, fmt.Errorf("h5p: temporary file: %w", err)
	}
	cleanup = func() {
		f.Close()
		os.Remove(f.Name())
	}
	n, err = io.Copy(f, io.LimitReader(src, limit+1))
	if err != nil {
		cleanup()
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, 0, nil, errTooLarge
		}
		return nil, 0, nil, apperr.Wrap(apperr.BadRequest, err, "The upload was interrupted.")
	}
	if n > limit {
		cleanup()
		return nil, 0, nil, errTooLarge
	}
	return f, n, cleanup, nil
}

// openPackage opens the package file f of n bytes with the archive limits
// of a package cap and validates it against the tenant's installed
// libraries and the supported core API.
func (s *Service) openPackage(ctx context.Context, t *platform.Tenant, f io.ReaderAt, n, limit int64, librariesOnly bool) (*h5ppackage.Package, error) {
	limits := h5ppackage.Limits{MaxContentSize: s.Store.Settings().MaxParamsSize}
	if limit < h5ppackage.DefaultMaxTotalSize {
		limits.MaxTotalSize = limit
		if limit < h5ppackage.DefaultMaxFileSize {
			limits.MaxFileSize = limit
		}
	}
	p, err := h5ppackage.Open(f, n, limits)
	if err != nil {
		return nil, err
	}
	err = h5ppackage.Validate(p, h5ppackage.Options{
		CoreAPI:       s.Store.CoreAPI(),
		Installed:     s.Store.Installed(ctx, t),
		LibrariesOnly: librariesOnly,
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// installPackage installs the libraries of p when u may install or update
// libraries; otherwise every library the content needs must already be
// installed, and the error names those that are not.
func (s *Service) installPackage(ctx context.Context, t *platform.Tenant, u *User, p *h5ppackage.Package) ([]h5pstore.LibraryRef, error) {
	mayInstall := u.Can(string(access.H5PLibraryInstall)) || u.Can(string(access.H5PLibraryUpdate))
	installed, err := s.Store.Install(ctx, t, p, mayInstall)
	if installed == nil {
		installed = []h5pstore.LibraryRef{}
	}
	return installed, err
}

// SavedContent is the data of a content save. It is exported because
// huma leaves an unexported embedded struct's fields out of the schemas
// of the answers embedding it (uploadedContent).
type SavedContent struct {
	ContentID string          `json:"contentId"`
	Metadata  json.RawMessage `json:"metadata" doc:"The package descriptor (h5p.json)."`
}

// uploadedContent is the data of a package upload.
type uploadedContent struct {
	SavedContent
	InstalledLibraries []h5pstore.LibraryRef `json:"installedLibraries" doc:"Libraries the package installed or updated."`
}

// uploadInput is a request whose body is read as a stream.
type uploadInput struct {
	Raw rawRequest
}

func (s *Service) uploadContent(ctx context.Context, in *uploadInput) (*httpx.Response[uploadedContent], error) {
	if err := permit(ctx, access.H5PCreate); err != nil {
		return nil, err
	}
	t, u := httpx.TenantFrom(ctx), UserFrom(ctx)
	p, cleanup, err := s.receivePackage(nil, in.Raw.r, t, false, "h5p_file")
	if err != nil {
		return nil, packageError(err)
	}
	defer cleanup()
	installed, err := s.installPackage(ctx, t, u, p)
	if err != nil {
		return nil, packageError(err)
	}
	c, err := s.Store.SaveContent(ctx, t, p, creatorID(in.Raw.r, u))
	if err != nil {
		return nil, packageError(err)
	}
	return httpx.Created(uploadedContent{SavedContent{h5pstore.FormatID(c.ID), c.Metadata}, installed}, "")
}

type listContentsInput struct {
	Q       string `query:"q" doc:"Only contents whose title contains this."`
	Page    int    `query:"page" doc:"Page number, from 1."`
	PerPage int    `query:"perPage" doc:"Items per page: 20 unless given, at most 100."`
}

func (s *Service) listContents(ctx context.Context, in *listContentsInput) (*httpx.PageResponse[ContentSummary], error) {
	if err := permit(ctx, access.H5PList, access.H5PAuthorList); err != nil {
		return nil, err
	}
	u := UserFrom(ctx)
	var owner int64
	if !u.Can(string(access.H5PList)) {
		owner = userID(u)
	}
	// Values out of range fall back to the defaults rather than failing,
	// as the H5P client sends them.
	q := httpx.PageQuery{Page: 1, PerPage: 20}
	if in.Page > 0 {
		q.Page = in.Page
	}
	if in.PerPage > 0 {
		q.PerPage = min(in.PerPage, 100)
	}
	list, total, err := s.Store.ListContents(ctx, httpx.TenantFrom(ctx), in.Q, owner, q.Offset(), q.PerPage)
	if err != nil {
		return nil, err
	}
	data := make([]ContentSummary, len(list))
	for i, c := range list {
		data[i] = summary(c)
	}
	return httpx.Paged(data, q, int64(total))
}

// contentBody is the body of POST and PATCH /h5p/contents.
type contentBody struct {
	Library string        `json:"library" doc:"The main library, as '<machine_name> <major>.<minor>'."`
	Params  contentParams `json:"params"`
}

type contentParams struct {
	Params   json.RawMessage `json:"params" doc:"The content parameters."`
	Metadata json.RawMessage `json:"metadata,omitempty" doc:"The content's metadata (title, license...)."`
}

// readContentBody reads the body of an editor save, whose parameters may
// have at most limit bytes.
func readContentBody(w http.ResponseWriter, r *http.Request, limit int64) (contentBody, error) {
	var b contentBody
	tooLarge := paramsTooLarge(limit)
	err := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit+multipartSlack)).Decode(&b)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return b, tooLarge
	}
	if err != nil {
		return b, apperr.New(apperr.BadRequest, "The body must be JSON {library, params: {params, metadata}}.")
	}
	if int64(len(b.Params.Params)) > limit {
		return b, tooLarge
	}
	if strings.TrimSpace(b.Library) == "" {
		return b, apperr.Field("library", "The library is required.")
	}
	if len(b.Params.Params) == 0 {
		return b, apperr.Field("params.params", "The content parameters are required.")
	}
	return b, nil
}

func paramsTooLarge(limit int64) error {
	return apperr.New(apperr.TooLarge, fmt.Sprintf("The content parameters may have at most %d bytes.", limit))
}

func (s *Service) createContent(ctx context.Context, in *uploadInput) (*httpx.Response[SavedContent], error) {
	if err := permit(ctx, access.H5PCreate); err != nil {
		return nil, err
	}
	b, err := readContentBody(nil, in.Raw.r, s.Store.Settings().MaxParamsSize)
	if err != nil {
		return nil, err
	}
	machine, major, minor, err := h5pstore.ParseLibrary(b.Library)
	if err != nil {
		return nil, err
	}
	desc := map[string]any{}
	if len(b.Params.Metadata) > 0 && string(b.Params.Metadata) != "null" {
		if err := json.Unmarshal(b.Params.Metadata, &desc); err != nil {
			return nil, apperr.Field("params.metadata", "Must be a JSON object.")
		}
	}
	if title, _ := desc["title"].(string); strings.TrimSpace(title) == "" {
		desc["title"] = "Untitled"
	}
	if _, ok := desc["language"].(string); !ok {
		desc["language"] = "und"
	}
	if _, ok := desc["embedTypes"]; !ok {
		desc["embedTypes"] = []string{"iframe"}
	}
	desc["mainLibrary"] = machine
	desc["preloadedDependencies"] = []h5ppackage.Dependency{{MachineName: machine, MajorVersion: major, MinorVersion: minor}}
	raw, err := json.Marshal(desc)
	if err != nil {
		return nil, err
	}
	p := &h5ppackage.Package{H5PRaw: raw, Content: b.Params.Params}
	if err := json.Unmarshal(raw, &p.H5P); err != nil {
		return nil, apperr.Field("params.metadata", "The metadata does not describe H5P content.")
	}
	c, err := s.saveNewContent(ctx, httpx.TenantFrom(ctx), UserFrom(ctx), p, b)
	if err != nil {
		return nil, err
	}
	return httpx.Created(SavedContent{h5pstore.FormatID(c.ID), c.Metadata}, "")
}

// saveNewContent stores the content of an editor save and moves the
// editor uploads it names into it. The uploads are checked (they exist and
// are the caller's) before the row is created; if anything fails after,
// the new content is removed with its files, so no half-made content stays.
func (s *Service) saveNewContent(ctx context.Context, t *platform.Tenant, u *User, p *h5ppackage.Package, b contentBody) (h5pstore.Content, error) {
	promo, err := s.Store.PrepareTempFiles(ctx, t, userID(u), b.Params.Params)
	if err != nil {
		return h5pstore.Content{}, err
	}
	c, err := s.Store.SaveContent(ctx, t, p, userID(u))
	if err != nil || !promo.Changed() {
		return c, err
	}
	params, err := promo.Apply(ctx, c.ID)
	if err == nil {
		c, err = s.Store.UpdateContent(ctx, t, c.ID, b.Library, params, nil)
	}
	if err != nil {
		if derr := s.Store.DeleteContent(context.WithoutCancel(ctx), t, c.ID); derr != nil {
			s.log.ErrorContext(ctx, "h5p: roll back content", "content", c.ID, "error", derr)
		}
		return h5pstore.Content{}, err
	}
	if err := promo.Commit(context.WithoutCancel(ctx)); err != nil {
		s.log.WarnContext(ctx, "h5p: forget temporary files", "content", c.ID, "error", err)
	}
	return c, nil
}

// content finds the content of the id text; errNotFound when there is
// none.
func (s *Service) content(ctx context.Context, idText string) (h5pstore.Content, error) {
	id, err := strconv.ParseInt(idText, 10, 64)
	if err != nil || id <= 0 {
		return h5pstore.Content{}, errNotFound
	}
	return s.Store.Content(ctx, httpx.TenantFrom(ctx), id)
}

// getContent streams the stored metadata and parameters into the answer
// (see contentDetail for its shape).
func (s *Service) getContent(ctx context.Context, in *contentPath) (*huma.StreamResponse, error) {
	c, err := s.content(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	return rawAnswer(ctx, summary(c), rawField{"metadata", string(c.Metadata)}, rawField{"parameters", c.Parameters}), nil
}

// changeAllowed checks the edit or delete permission on c: any content with
// all, own content with own; a grant's holder only its own content, the
// routes it opens already being confined to it (grantAllows).
func changeAllowed(ctx context.Context, c h5pstore.Content, all, own access.Permission) error {
	u := UserFrom(ctx)
	if err := u.confined(c.ID); err != nil {
		return err
	}
	if u.Can(string(all)) || u.Can(string(own)) && owns(u, c) {
		return nil
	}
	return apperr.New(apperr.Forbidden, "You are not allowed to change this content.")
}

// changeContent finds the content of id and checks the caller may change
// it with all or own.
func (s *Service) changeContent(ctx context.Context, id string, all, own access.Permission) (h5pstore.Content, error) {
	if err := permit(ctx, all, own); err != nil {
		return h5pstore.Content{}, err
	}
	c, err := s.content(ctx, id)
	if err != nil {
		return c, err
	}
	return c, changeAllowed(ctx, c, all, own)
}

type updateContentInput struct {
	ID  string `path:"id" doc:"Content id."`
	Raw rawRequest
}

func (s *Service) updateContent(ctx context.Context, in *updateContentInput) (*httpx.Response[SavedContent], error) {
	c, err := s.changeContent(ctx, in.ID, access.H5PUpdate, access.H5PAuthorUpdate)
	if err != nil {
		return nil, err
	}
	b, err := readContentBody(nil, in.Raw.r, s.Store.Settings().MaxParamsSize)
	if err != nil {
		return nil, err
	}
	c, err = s.saveContentEdit(ctx, httpx.TenantFrom(ctx), UserFrom(ctx), c.ID, b)
	if err != nil {
		return nil, err
	}
	return httpx.OK(SavedContent{h5pstore.FormatID(c.ID), c.Metadata})
}

// saveContentEdit stores an editor save of content id and moves the editor
// uploads it names into it; when the save fails, the copies are removed
// and the uploads stay for another try.
func (s *Service) saveContentEdit(ctx context.Context, t *platform.Tenant, u *User, id int64, b contentBody) (h5pstore.Content, error) {
	promo, err := s.Store.PrepareTempFiles(ctx, t, userID(u), b.Params.Params)
	if err != nil {
		return h5pstore.Content{}, err
	}
	params := b.Params.Params
	if promo.Changed() {
		if params, err = promo.Apply(ctx, id); err != nil {
			return h5pstore.Content{}, err
		}
	}
	c, err := s.Store.UpdateContent(ctx, t, id, b.Library, params, b.Params.Metadata)
	if err != nil {
		promo.Abort(context.WithoutCancel(ctx))
		return h5pstore.Content{}, err
	}
	if err := promo.Commit(context.WithoutCancel(ctx)); err != nil {
		s.log.WarnContext(ctx, "h5p: forget temporary files", "content", id, "error", err)
	}
	return c, nil
}

// deletedContent is the data of a content deletion.
type deletedContent struct {
	ContentID string `json:"contentId"`
}

func (s *Service) deleteContent(ctx context.Context, in *contentPath) (*httpx.Response[deletedContent], error) {
	c, err := s.changeContent(ctx, in.ID, access.H5PDelete, access.H5PAuthorDelete)
	if err != nil {
		return nil, err
	}
	if err := s.Store.DeleteContent(ctx, httpx.TenantFrom(ctx), c.ID); err != nil {
		return nil, err
	}
	return httpx.OK(deletedContent{h5pstore.FormatID(c.ID)})
}

// packageFilename is the download name of a content: its title reduced to
// safe characters, then its id.
func packageFilename(c h5pstore.Content) string {
	var b strings.Builder
	dash := false
	for _, ch := range strings.ToLower(c.Title) {
		switch {
		case ch >= 'a' && ch <= 'z', ch >= '0' && ch <= '9':
			b.WriteRune(ch)
			dash = false
		case !dash && b.Len() > 0 && b.Len() < 60:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 60 {
			break
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		name = "content"
	}
	return name + "-" + h5pstore.FormatID(c.ID) + ".h5p"
}

func (s *Service) downloadContent(ctx context.Context, in *contentPath) (*huma.StreamResponse, error) {
	c, err := s.content(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "h5p-download-*.h5p")
	if err != nil {
		return nil, err
	}
	cleanup := func() {
		f.Close()
		os.Remove(f.Name())
	}
	// The archive is built before the answer starts, so a failure is an
	// error answer rather than a truncated file.
	if err := s.Store.Package(ctx, httpx.TenantFrom(ctx), c.ID, f); err != nil {
		cleanup()
		return nil, err
	}
	return &huma.StreamResponse{Body: func(hctx huma.Context) {
		defer cleanup()
		r, w := humago.Unwrap(hctx)
		w.Header().Set("Content-Type", "application/zip")
		w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": packageFilename(c)}))
		w.Header().Set("Cache-Control", "no-store")
		http.ServeContent(w, r, "", c.UpdatedAt, f)
	}}, nil
}

// deletedOrphans is the data of an orphan clean-up.
type deletedOrphans struct {
	ContentIDs []string `json:"contentIds" doc:"Content ids whose files were deleted."`
	Files      int      `json:"files" doc:"Number of files deleted."`
}

// deleteOrphans removes the files of content ids that have no row in the
// request's tenant. Only the system (internal token) may call it.
func (s *Service) deleteOrphans(ctx context.Context, _ *struct{}) (*httpx.Response[deletedOrphans], error) {
	u := UserFrom(ctx)
	if !u.System {
		if !u.LoggedIn() {
			return nil, apperr.New(apperr.Unauthorized, "The internal token is required.")
		}
		return nil, apperr.New(apperr.Forbidden, "Only the platform may delete orphaned files.")
	}
	t := httpx.TenantFrom(ctx)
	const prefix = "h5p/content/"
	files := map[int64]int{}
	var order []int64
	err := t.Blob.List(ctx, prefix, func(info blob.Info) error {
		idText, _, ok := strings.Cut(strings.TrimPrefix(info.Key, prefix), "/")
		id, err := strconv.ParseInt(idText, 10, 64)
		if !ok || err != nil {
			return nil
		}
		if _, seen := files[id]; !seen {
			order = append(order, id)
		}
		files[id]++
		return nil
	})
	if err != nil {
		return nil, err
	}
	ids := []string{}
	deleted := 0
	for _, id := range order {
		_, err := s.Store.Content(ctx, t, id)
		if err == nil {
			continue
		}
		if !apperr.Is(err, apperr.NotFound) {
			return nil, err
		}
		if err := t.Blob.DeletePrefix(ctx, prefix+strconv.FormatInt(id, 10)+"/"); err != nil {
			return nil, err
		}
		ids = append(ids, strconv.FormatInt(id, 10))
		deleted += files[id]
	}
	return httpx.OK(deletedOrphans{ids, deleted})
}

type librarySummary struct {
	Uber         string          `json:"uber"`
	MachineName  string          `json:"machineName"`
	MajorVersion int             `json:"majorVersion"`
	MinorVersion int             `json:"minorVersion"`
	PatchVersion int             `json:"patchVersion"`
	Title        string          `json:"title"`
	Runnable     bool            `json:"runnable"`
	Restricted   bool            `json:"restricted"`
	CreatedAt    time.Time       `json:"createdAt"`
	UpdatedAt    time.Time       `json:"updatedAt"`
	LibraryJSON  json.RawMessage `json:"libraryJson,omitempty"`
}

func libSummary(l h5pstore.Library) librarySummary {
	return librarySummary{
		Uber: l.Ref().Dir(), MachineName: l.MachineName, MajorVersion: l.Major, MinorVersion: l.Minor,
		PatchVersion: l.Patch, Title: l.Title, Runnable: l.Runnable, Restricted: l.Restricted,
		CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt,
	}
}

// parseUber reads "H5P.Foo-1.2".
func parseUber(uber string) (machine string, major, minor int, ok bool) {
	i := strings.LastIndexByte(uber, '-')
	if i <= 0 {
		return "", 0, 0, false
	}
	machine, major, minor, err := h5pstore.ParseLibrary(uber[:i] + " " + uber[i+1:])
	return machine, major, minor, err == nil
}

var errLibraryNotFound = apperr.New(apperr.NotFound, "Library not found.")

func (s *Service) listLibraries(ctx context.Context, _ *struct{}) (*httpx.Response[[]librarySummary], error) {
	if err := permit(ctx, access.H5PLibraryList); err != nil {
		return nil, err
	}
	libs, err := s.Store.Libraries(ctx, httpx.TenantFrom(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]librarySummary, len(libs))
	for i, l := range libs {
		out[i] = libSummary(l)
	}
	return httpx.OK(out)
}

// library checks the caller holds perm and parses the library of the
// path; errLibraryNotFound when it names none.
func library(ctx context.Context, uber string, perm access.Permission) (machine string, major, minor int, err error) {
	if err := permit(ctx, perm); err != nil {
		return "", 0, 0, err
	}
	machine, major, minor, ok := parseUber(uber)
	if !ok {
		return "", 0, 0, errLibraryNotFound
	}
	return machine, major, minor, nil
}

func (s *Service) getLibrary(ctx context.Context, in *libraryPath) (*httpx.Response[librarySummary], error) {
	machine, major, minor, err := library(ctx, in.Uber, access.H5PLibraryRead)
	if err != nil {
		return nil, err
	}
	l, err := s.Store.Library(ctx, httpx.TenantFrom(ctx), machine, major, minor)
	if err != nil {
		return nil, err
	}
	sum := libSummary(l)
	sum.LibraryJSON = l.JSON
	return httpx.OK(sum)
}

// installedLibraries is the data of a library upload.
type installedLibraries struct {
	InstalledLibraries []h5pstore.LibraryRef `json:"installedLibraries" doc:"Libraries installed or updated."`
}

func (s *Service) uploadLibraries(ctx context.Context, in *uploadInput) (*httpx.Response[installedLibraries], error) {
	if err := permit(ctx, access.H5PLibraryUpload, access.H5PLibraryInstall); err != nil {
		return nil, err
	}
	t := httpx.TenantFrom(ctx)
	p, cleanup, err := s.receivePackage(nil, in.Raw.r, t, true, "file")
	if err != nil {
		return nil, packageError(err)
	}
	defer cleanup()
	installed, err := s.Store.Install(ctx, t, p, true)
	if err != nil {
		return nil, packageError(err)
	}
	if installed == nil {
		installed = []h5pstore.LibraryRef{}
	}
	return httpx.OK(installedLibraries{installed})
}

// restrictedBody is the body of PATCH /h5p/libraries/{uber}.
type restrictedBody struct {
	Restricted *bool `json:"restricted" doc:"Whether the library is restricted (authors without h5p_library_update may not use it)."`
}

// patchLibraryInput reads its body itself, after the permission check, so
// that a caller without the permission learns nothing from validation.
type patchLibraryInput struct {
	Uber string `path:"uber" doc:"Library with major and minor version, as H5P.Foo-1.2."`
	Raw  rawRequest
}

func (s *Service) patchLibrary(ctx context.Context, in *patchLibraryInput) (*httpx.Response[librarySummary], error) {
	machine, major, minor, err := library(ctx, in.Uber, access.H5PLibraryUpdate)
	if err != nil {
		return nil, err
	}
	var body restrictedBody
	if err := json.NewDecoder(io.LimitReader(in.Raw.r.Body, 1<<20)).Decode(&body); err != nil || body.Restricted == nil {
		return nil, apperr.Field("restricted", "restricted (boolean) is required.")
	}
	l, err := s.Store.SetRestricted(ctx, httpx.TenantFrom(ctx), machine, major, minor, *body.Restricted)
	if err != nil {
		return nil, err
	}
	return httpx.OK(libSummary(l))
}

// deletedLibrary is the data of a library deletion.
type deletedLibrary struct {
	Uber string `json:"uber"`
}

func (s *Service) deleteLibrary(ctx context.Context, in *libraryPath) (*httpx.Response[deletedLibrary], error) {
	machine, major, minor, err := library(ctx, in.Uber, access.H5PLibraryDelete)
	if err != nil {
		return nil, err
	}
	if err := s.Store.DeleteLibrary(ctx, httpx.TenantFrom(ctx), machine, major, minor); err != nil {
		return nil, err
	}
	return httpx.OK(deletedLibrary{fmt.Sprintf("%s-%d.%d", machine, major, minor)})
}
