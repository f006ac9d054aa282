package h5p

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// This file holds the editor AJAX actions that change what is installed
// or read translations: translations, library-upload and library-install.
// The routing is editorAjax's (editor.go), which has already checked the
// editor permissions.

// maxHubPackage caps a content-type package downloaded from the hub.
const maxHubPackage = 256 << 20

// maxLibraryForm bounds the form body of the libraries and translations
// actions: a list of library names.
const maxLibraryForm = 1 << 20

const msgInstallHubDown = "The H5P hub could not be reached; upload the content type as a package instead."

// hubInstallIDRe is what a machine name must look like to be fetched from
// the hub: dot-separated names, so it can only add one segment to the
// hub's URL.
var hubInstallIDRe = regexp.MustCompile(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

// postedLibraries reads the library names the editor posts as a form,
// libraries[] (or libraries); false when it answered an error.
func postedLibraries(w http.ResponseWriter, r *http.Request) ([]string, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, maxLibraryForm)
	if err := r.ParseForm(); err != nil {
		writeError(w, r, apperr.New(apperr.BadRequest, "Send libraries[] as a form."))
		return nil, false
	}
	names := r.PostForm["libraries[]"]
	if names == nil {
		names = r.PostForm["libraries"]
	}
	return names, true
}

// translations answers, for each posted library ("H5P.Foo 1.2") that is
// installed and has language/<language>.json, that file as a string keyed
// by the library's name. Other libraries are left out.
func (s *Service) translations(w http.ResponseWriter, r *http.Request) {
	lang := r.URL.Query().Get("language")
	if !languageCodeRe.MatchString(lang) {
		writeError(w, r, apperr.Field("language", "Must be a language code such as en or pt-br."))
		return
	}
	names, ok := postedLibraries(w, r)
	if !ok {
		return
	}
	ctx, t := r.Context(), httpx.TenantFrom(r.Context())
	libs, err := s.Store.Libraries(ctx, t)
	if err != nil {
		writeError(w, r, err)
		return
	}
	byName := map[string]h5pstore.Library{}
	for _, l := range libs {
		byName[fmt.Sprintf("%s %d.%d", l.MachineName, l.Major, l.Minor)] = l
	}
	out := map[string]string{}
	for _, n := range names {
		machine, major, minor, err := h5pstore.ParseLibrary(n)
		key := fmt.Sprintf("%s %d.%d", machine, major, minor)
		l, installed := byName[key]
		if _, done := out[key]; err != nil || !installed || done {
			continue
		}
		text, err := s.readLibraryFile(ctx, t, l, "language/"+lang+".json")
		if err != nil {
			writeError(w, r, err)
			return
		}
		if text != nil {
			out[key] = string(text)
		}
	}
	writeData(w, http.StatusOK, out)
}

// libraryUpload takes a package from the editor's upload tab (field h5p,
// or h5p_file): it is validated like POST /h5p/contents/upload, its
// libraries installed as that route does, and its content files kept as
// the caller's temporary files. The answer is the package's h5p.json, its
// parameters naming those files, and the content-type cache. No content is
// created; the editor saves it later like any other. The contentId field
// the editor may send is not needed: the files belong to no content yet.
func (s *Service) libraryUpload(w http.ResponseWriter, r *http.Request) {
	ctx, t, u := r.Context(), httpx.TenantFrom(r.Context()), UserFrom(r.Context())
	p, cleanup, err := s.receivePackage(w, r, t, false, "h5p", "h5p_file")
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	defer cleanup()
	if _, err := s.installPackage(ctx, t, u, p); err != nil {
		writePackageError(w, r, err)
		return
	}
	params, err := s.Store.SavePackageTempFiles(ctx, t, userID(u), p)
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	cache, err := s.cacheModel(ctx, t, u, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]any{"h5p": p.H5PRaw, "content": params, "contentTypes": cache})
}

// libraryInstall downloads the content type id from the hub, validates its
// libraries like an uploaded package's and installs them. Like H5P's own
// editor backend it answers the content-type cache as data, which the
// hub client shows next.
func (s *Service) libraryInstall(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r, access.H5PLibraryInstall, access.H5PLibraryUpdate) {
		return
	}
	id := r.URL.Query().Get("id")
	if len(id) > 255 || !hubInstallIDRe.MatchString(id) {
		writeError(w, r, apperr.Field("id", "Must be the machine name of a content type, such as H5P.MultiChoice."))
		return
	}
	ctx, t, u := r.Context(), httpx.TenantFrom(r.Context()), UserFrom(r.Context())
	p, cleanup, err := s.hubPackage(ctx, t, id)
	if ae := apperr.As(err); ae != nil && ae.Kind == apperr.Unavailable {
		// Checked first: the cause may be a package error, which is the
		// hub's fault here, not the caller's.
		s.log.WarnContext(ctx, "h5p: content type install from the hub failed", "id", id, "error", err)
		writeError(w, r, err)
		return
	}
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	defer cleanup()
	installed, err := s.Store.Install(ctx, t, p, true)
	if err != nil {
		writePackageError(w, r, err)
		return
	}
	cache, err := s.cacheModel(ctx, t, u, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	msg := id + " is installed and up to date."
	if len(installed) > 0 {
		msg = fmt.Sprintf("%s was installed from the H5P hub (%d libraries installed or updated).", id, len(installed))
	}
	httpx.WriteJSON(w, http.StatusOK, envelope{Success: true, Message: msg, Data: cache})
}

// hubPackage downloads and validates the package of content type id. A
// hub that cannot be reached, answers an error or sends something that is
// not a package holding id is Unavailable; a package that breaks the rules
// is a package error.
func (s *Service) hubPackage(ctx context.Context, t *platform.Tenant, id string) (*h5ppackage.Package, func(), error) {
	f, n, cleanup, err := s.downloadHubPackage(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.openPackage(ctx, t, f, n, maxHubPackage, true)
	var perr *h5ppackage.Error
	if errors.As(err, &perr) && perr.Kind == h5ppackage.Corrupt {
		err = apperr.Wrap(apperr.Unavailable, err, msgInstallHubDown)
	}
	if err == nil && !slices.ContainsFunc(p.Libraries, func(l h5ppackage.Library) bool { return l.JSON.MachineName == id }) {
		err = apperr.New(apperr.Unavailable, "The H5P hub sent a package without "+id+"; upload the content type as a package instead.")
	}
	if err != nil {
		cleanup()
		return nil, nil, err
	}
	return p, cleanup, nil
}

// downloadHubPackage fetches the package of content type id into a
// temporary file, within the hub timeout and maxHubPackage. The package is
// at the configured content-type endpoint followed by the machine name, as
// the hub serves it (https://api.h5p.org/v1/content-types/H5P.MultiChoice).
func (s *Service) downloadHubPackage(ctx context.Context, id string) (*os.File, int64, func(), error) {
	endpoint, timeout := s.hubSettings()
	hubDown := func(err error) error { return apperr.Wrap(apperr.Unavailable, err, msgInstallHubDown) }
	target, err := url.JoinPath(endpoint, id)
	if err != nil {
		return nil, 0, nil, hubDown(fmt.Errorf("h5p: hub package URL: %w", err))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, 0, nil, hubDown(fmt.Errorf("h5p: hub request: %w", err))
	}
	req.Header.Set("Accept", "application/zip, application/octet-stream")
	res, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return nil, 0, nil, hubDown(fmt.Errorf("h5p: call hub: %w", err))
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, 0, nil, hubDown(fmt.Errorf("h5p: hub answered %s for %s", res.Status, id))
	}
	tooLarge := apperr.New(apperr.Unavailable, "The H5P hub sent a package over 256 MB; upload the content type as a package instead.")
	if res.ContentLength > maxHubPackage {
		return nil, 0, nil, tooLarge
	}
	f, n, cleanup, err := spoolPackage(res.Body, maxHubPackage)
	if errors.Is(err, errTooLarge) {
		return nil, 0, nil, tooLarge
	}
	if err != nil {
		return nil, 0, nil, hubDown(fmt.Errorf("h5p: read hub package: %w", err))
	}
	return f, n, cleanup, nil
}
