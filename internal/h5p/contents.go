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

// contentRoutes registers the content and library administration routes.
func (s *Service) contentRoutes(mux *http.ServeMux) {
	h := func(pattern string, f http.HandlerFunc) { mux.Handle(pattern, s.user(f)) }
	h("POST /h5p/contents/upload", s.uploadContent)
	h("GET /h5p/contents", s.listContents)
	h("POST /h5p/contents", s.createContent)
	h("POST /h5p/contents/orphans/delete", s.deleteOrphans)
	h("GET /h5p/contents/{id}", s.getContent)
	h("PATCH /h5p/contents/{id}", s.updateContent)
	h("DELETE /h5p/contents/{id}", s.deleteContent)
	h("GET /h5p/contents/{id}/download", s.downloadContent)
	h("GET /h5p/download/{id}", s.downloadContent)
	h("GET /h5p/libraries", s.listLibraries)
	h("POST /h5p/libraries", s.uploadLibraries)
	h("GET /h5p/libraries/{uber}", s.getLibrary)
	h("PATCH /h5p/libraries/{uber}", s.patchLibrary)
	h("DELETE /h5p/libraries/{uber}", s.deleteLibrary)
}

// allowed checks that the caller holds one of perms: 401 for an anonymous
// caller, 403 for a user without any of them.
func allowed(w http.ResponseWriter, r *http.Request, perms ...access.Permission) bool {
	u := UserFrom(r.Context())
	if !u.LoggedIn() {
		writeError(w, r, apperr.New(apperr.Unauthorized, "Log in to do this."))
		return false
	}
	for _, p := range perms {
		if u.Can(string(p)) {
			return true
		}
	}
	writeError(w, r, apperr.New(apperr.Forbidden, "You are not allowed to do this."))
	return false
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

func contentID(r *http.Request) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	return id, err == nil && id > 0
}

type contentSummary struct {
	ID             string    `json:"id"`
	Title          string    `json:"title"`
	MainLibrary    string    `json:"mainLibrary"`
	LibraryVersion string    `json:"libraryVersion"`
	UserID         string    `json:"userId"`
	CreatedAt      time.Time `json:"createdAt"`
	UpdatedAt      time.Time `json:"updatedAt"`
}

func summary(c h5pstore.Content) contentSummary {
	return contentSummary{
		ID: h5pstore.FormatID(c.ID), Title: c.Title, MainLibrary: c.MainLibrary,
		LibraryVersion: c.LibraryVersion, UserID: strconv.FormatInt(c.UserID, 10),
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

// writePackageError answers a package that failed to open or validate:
// 413 when it is too large, else 422, naming every problem.
func writePackageError(w http.ResponseWriter, r *http.Request, err error) {
	var perr *h5ppackage.Error
	if !errors.As(err, &perr) {
		writeError(w, r, err)
		return
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
	httpx.WriteJSON(w, status, struct {
		Success bool                 `json:"success"`
		Message string               `json:"message"`
		Errors  []h5ppackage.Problem `json:"errors"`
	}{false, "The H5P package is invalid: " + strings.Join(msgs, " "), problems})
}

var errTooLarge = apperr.New(apperr.TooLarge, "The upload is too large.")

// receivePackage streams the first multipart field named one of fields to
// a temporary file within the upload cap, then opens and validates it. The
// caller runs cleanup once done with the package.
func (s *Service) receivePackage(w http.ResponseWriter, r *http.Request, t *platform.Tenant, librariesOnly bool, fields ...string) (*h5ppackage.Package, func(), error) {
	field := fields[0]
	limit := s.maxUpload.Load()
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

func (s *Service) uploadContent(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PCreate) {
		return
	}
	ctx, t, u := r.Context(), httpx.TenantFrom(r.Context()), UserFrom(r.Context())
	p, cleanup, err := s.receivePackage(w, r, t, false, "h5p_file")
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	defer cleanup()
	installed, err := s.installPackage(ctx, t, u, p)
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	c, err := s.Store.SaveContent(ctx, t, p, creatorID(r, u))
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, map[string]any{
		"contentId": h5pstore.FormatID(c.ID), "metadata": c.Metadata, "installedLibraries": installed,
	})
}

func (s *Service) listContents(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PList, access.H5PAuthorList) {
		return
	}
	u := UserFrom(r.Context())
	var owner int64
	if !u.Can(string(access.H5PList)) {
		owner = userID(u)
	}
	q := r.URL.Query()
	page, perPage := 1, 20
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		page = v
	}
	if v, err := strconv.Atoi(q.Get("perPage")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	list, total, err := s.Store.ListContents(r.Context(), httpx.TenantFrom(r.Context()), q.Get("q"), owner, (page-1)*perPage, perPage)
	if err != nil {
		writeError(w, r, err)
		return
	}
	data := make([]contentSummary, len(list))
	for i, c := range list {
		data[i] = summary(c)
	}
	httpx.WriteJSON(w, http.StatusOK, map[string]any{
		"success": true, "data": data, "message": "",
		"meta": map[string]int{"current_page": page, "per_page": perPage, "total": total,
			"last_page": max(1, (total+perPage-1)/perPage)},
	})
}

// contentBody is the body of POST and PATCH /h5p/contents.
type contentBody struct {
	Library string `json:"library"`
	Params  struct {
		Params   json.RawMessage `json:"params"`
		Metadata json.RawMessage `json:"metadata"`
	} `json:"params"`
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

func (s *Service) createContent(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PCreate) {
		return
	}
	b, err := readContentBody(w, r, s.Store.Settings().MaxParamsSize)
	if err != nil {
		writeError(w, r, err)
		return
	}
	machine, major, minor, err := h5pstore.ParseLibrary(b.Library)
	if err != nil {
		writeError(w, r, err)
		return
	}
	desc := map[string]any{}
	if len(b.Params.Metadata) > 0 && string(b.Params.Metadata) != "null" {
		if err := json.Unmarshal(b.Params.Metadata, &desc); err != nil {
			writeError(w, r, apperr.Field("params.metadata", "Must be a JSON object."))
			return
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
		writeError(w, r, err)
		return
	}
	p := &h5ppackage.Package{H5PRaw: raw, Content: b.Params.Params}
	if err := json.Unmarshal(raw, &p.H5P); err != nil {
		writeError(w, r, apperr.Field("params.metadata", "The metadata does not describe H5P content."))
		return
	}
	c, err := s.saveNewContent(r.Context(), httpx.TenantFrom(r.Context()), UserFrom(r.Context()), p, b)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusCreated, map[string]any{"contentId": h5pstore.FormatID(c.ID), "metadata": c.Metadata})
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

// loadContent finds the content of the {id} path value, answering 404
// when there is none.
func (s *Service) loadContent(w http.ResponseWriter, r *http.Request) (h5pstore.Content, bool) {
	id, ok := contentID(r)
	if !ok {
		writeError(w, r, errNotFound)
		return h5pstore.Content{}, false
	}
	c, err := s.Store.Content(r.Context(), httpx.TenantFrom(r.Context()), id)
	if err != nil {
		writeError(w, r, err)
		return h5pstore.Content{}, false
	}
	return c, true
}

func (s *Service) getContent(w http.ResponseWriter, r *http.Request) {
	c, ok := s.loadContent(w, r)
	if !ok {
		return
	}
	writeDataRaw(w, r, http.StatusOK, summary(c), rawField{"metadata", string(c.Metadata)}, rawField{"parameters", c.Parameters})
}

// mayChange checks the edit or delete permission on c: any content with
// all, own content with own.
func mayChange(w http.ResponseWriter, r *http.Request, c h5pstore.Content, all, own access.Permission) bool {
	u := UserFrom(r.Context())
	if u.Can(string(all)) || u.Can(string(own)) && owns(u, c) {
		return true
	}
	writeError(w, r, apperr.New(apperr.Forbidden, "You are not allowed to change this content."))
	return false
}

func (s *Service) updateContent(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PUpdate, access.H5PAuthorUpdate) {
		return
	}
	c, ok := s.loadContent(w, r)
	if !ok || !mayChange(w, r, c, access.H5PUpdate, access.H5PAuthorUpdate) {
		return
	}
	b, err := readContentBody(w, r, s.Store.Settings().MaxParamsSize)
	if err != nil {
		writeError(w, r, err)
		return
	}
	c, err = s.saveContentEdit(r.Context(), httpx.TenantFrom(r.Context()), UserFrom(r.Context()), c.ID, b)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"contentId": h5pstore.FormatID(c.ID), "metadata": c.Metadata})
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

func (s *Service) deleteContent(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PDelete, access.H5PAuthorDelete) {
		return
	}
	c, ok := s.loadContent(w, r)
	if !ok || !mayChange(w, r, c, access.H5PDelete, access.H5PAuthorDelete) {
		return
	}
	if err := s.Store.DeleteContent(r.Context(), httpx.TenantFrom(r.Context()), c.ID); err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"contentId": h5pstore.FormatID(c.ID)})
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

func (s *Service) downloadContent(w http.ResponseWriter, r *http.Request) {
	c, ok := s.loadContent(w, r)
	if !ok {
		return
	}
	f, err := os.CreateTemp("", "h5p-download-*.h5p")
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer os.Remove(f.Name())
	defer f.Close()
	// The archive is built before the answer starts, so a failure is an
	// error answer rather than a truncated file.
	if err := s.Store.Package(r.Context(), httpx.TenantFrom(r.Context()), c.ID, f); err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": packageFilename(c)}))
	w.Header().Set("Cache-Control", "no-store")
	http.ServeContent(w, r, "", c.UpdatedAt, f)
}

// deleteOrphans removes the files of content ids that have no row in the
// request's tenant. Only the system (internal token) may call it.
func (s *Service) deleteOrphans(w http.ResponseWriter, r *http.Request) {
	u := UserFrom(r.Context())
	if !u.System {
		if !u.LoggedIn() {
			writeError(w, r, apperr.New(apperr.Unauthorized, "The internal token is required."))
		} else {
			writeError(w, r, apperr.New(apperr.Forbidden, "Only the platform may delete orphaned files."))
		}
		return
	}
	ctx, t := r.Context(), httpx.TenantFrom(r.Context())
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
		writeError(w, r, err)
		return
	}
	ids := []string{}
	deleted := 0
	for _, id := range order {
		var n int
		if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM h5p_contents WHERE id = $1`, id).Scan(&n); err != nil {
			writeError(w, r, err)
			return
		}
		if n > 0 {
			continue
		}
		if err := t.Blob.DeletePrefix(ctx, prefix+strconv.FormatInt(id, 10)+"/"); err != nil {
			writeError(w, r, err)
			return
		}
		ids = append(ids, strconv.FormatInt(id, 10))
		deleted += files[id]
	}
	writeData(w, http.StatusOK, map[string]any{"contentIds": ids, "files": deleted})
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

func (s *Service) listLibraries(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PLibraryList) {
		return
	}
	libs, err := s.Store.Libraries(r.Context(), httpx.TenantFrom(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]librarySummary, len(libs))
	for i, l := range libs {
		out[i] = libSummary(l)
	}
	writeData(w, http.StatusOK, out)
}

func (s *Service) getLibrary(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PLibraryRead) {
		return
	}
	machine, major, minor, ok := parseUber(r.PathValue("uber"))
	if !ok {
		writeError(w, r, errLibraryNotFound)
		return
	}
	l, err := s.Store.Library(r.Context(), httpx.TenantFrom(r.Context()), machine, major, minor)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sum := libSummary(l)
	sum.LibraryJSON = l.JSON
	writeData(w, http.StatusOK, sum)
}

func (s *Service) uploadLibraries(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PLibraryUpload, access.H5PLibraryInstall) {
		return
	}
	t := httpx.TenantFrom(r.Context())
	p, cleanup, err := s.receivePackage(w, r, t, true, "file")
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	defer cleanup()
	installed, err := s.Store.Install(r.Context(), t, p, true)
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	if installed == nil {
		installed = []h5pstore.LibraryRef{}
	}
	writeData(w, http.StatusOK, map[string]any{"installedLibraries": installed})
}

func (s *Service) patchLibrary(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PLibraryUpdate) {
		return
	}
	machine, major, minor, ok := parseUber(r.PathValue("uber"))
	if !ok {
		writeError(w, r, errLibraryNotFound)
		return
	}
	var body struct {
		Restricted *bool `json:"restricted"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil || body.Restricted == nil {
		writeError(w, r, apperr.Field("restricted", "restricted (boolean) is required."))
		return
	}
	l, err := s.Store.SetRestricted(r.Context(), httpx.TenantFrom(r.Context()), machine, major, minor, *body.Restricted)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, libSummary(l))
}

func (s *Service) deleteLibrary(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PLibraryDelete) {
		return
	}
	machine, major, minor, ok := parseUber(r.PathValue("uber"))
	if !ok {
		writeError(w, r, errLibraryNotFound)
		return
	}
	if err := s.Store.DeleteLibrary(r.Context(), httpx.TenantFrom(r.Context()), machine, major, minor); err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"uber": fmt.Sprintf("%s-%d.%d", machine, major, minor)})
}
