// Package interactive keeps the library of interactive packages (web apps
// uploaded as a .zip with lms-interactive.json, every version kept),
// serves a topic's app in a sandbox that reaches neither the API nor the
// learner's token, records what the app reports of a learner's activity
// and completes the topic by the topic's rule, and stores the
// Content-Security-Policy reports of played apps. The topic kind is
// in interactive.go.
package interactive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Limits of a package's archive. The zip is checked by the H5P package
// reader's safety checks (paths, links, entry count, sizes, declared and
// real) before anything is extracted.
var archiveLimits = h5ppackage.Limits{MaxEntries: 5000, MaxFileSize: 64 << 20, MaxTotalSize: 256 << 20}

// Service runs the interactive routes.
type Service struct {
	Clock    clock.Clock
	Settings kinds.Settings
	// Topics reads uploads and learnable topics; Progress completes them.
	Topics   kinds.Topics
	Progress topics.Completer
}

var errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")

func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Microsecond) }

// PackageView is a package with its versions.
type PackageView struct {
	ID             int64         `json:"id"`
	Title          string        `json:"title"`
	CurrentVersion int           `json:"current_version"`
	CreatedBy      *int64        `json:"created_by"`
	Versions       []VersionView `json:"versions"`
	Manifest       *Manifest     `json:"manifest" doc:"The current version's manifest."`
}

// VersionView is one version of a package.
type VersionView struct {
	Version   int       `json:"version"`
	Files     int       `json:"files"`
	Size      int64     `json:"size"`
	CreatedAt time.Time `json:"created_at"`
}

// canUpload: authors upload packages; a new version of a package is for
// its uploader and those who edit every course.
func canUpload(p *access.Principal, createdBy *int64) bool {
	if p.Has(access.CourseUpdate) {
		return true
	}
	return p.Has(access.CourseCreate) && (createdBy != nil && *createdBy == p.UserID)
}

// Upload stores a .zip from the upload route (form field file): a new
// package, or the next version of the package the field package names.
func (s *Service) Upload(ctx context.Context, t *platform.Tenant, p *access.Principal, body topics.Upload) (PackageView, error) {
	if !p.Has(access.CourseCreate) && !p.Has(access.CourseUpdate) {
		return PackageView{}, errUnauthorized
	}
	if on, err := s.Settings.Bool(ctx, t, EnabledSetting); err != nil {
		return PackageView{}, err
	} else if !on {
		return PackageView{}, apperr.New(apperr.Forbidden, "Interactive topics are disabled on this platform (lms_interactive.enabled).")
	}
	in, done, err := s.Topics.ReadUpload(ctx, body, MaxPackage)
	if err != nil {
		return PackageView{}, err
	}
	defer done()
	var pkg int64
	if raw, ok := in.Text("package"); ok {
		if pkg, err = strconv.ParseInt(strings.TrimSpace(raw), 10, 64); err != nil || pkg < 1 {
			return PackageView{}, apperr.Field("package", "The package must be the id of an uploaded package.")
		}
		row, err := packageByID(ctx, t.DB, pkg)
		if apperr.Is(err, apperr.NotFound) {
			return PackageView{}, apperr.Field("package", "The package must be the id of an uploaded package.")
		}
		if err != nil {
			return PackageView{}, err
		}
		if !canUpload(p, row.createdBy) {
			return PackageView{}, errUnauthorized
		}
	}
	f, _, ok := content.FileFrom(in, "file")
	if !ok {
		return PackageView{}, apperr.Field("file", "The file field (a .zip package) is required.")
	}
	if content.Ext(f.Name) != ".zip" {
		return PackageView{}, apperr.Field("file", "The file must be a .zip package with lms-interactive.json at its root.")
	}
	uploader := p.UserID
	v, err := s.store(ctx, t, pkg, &uploader, f, nil)
	if err != nil {
		return PackageView{}, err
	}
	return s.View(ctx, t, p, v.Package)
}

// Add stores an uploaded .zip as a new package of nobody in particular
// (the topic create that carried it), once check has accepted its
// manifest; content/interactive calls it. check gets nil for a manifest
// with problems of its own, and names the problems that do not depend on
// it.
func (s *Service) Add(ctx context.Context, t *platform.Tenant, f content.File, check func(*Manifest) error) (Version, error) {
	return s.store(ctx, t, 0, nil, f, check)
}

// Version finds a package's version; 0 is its current one.
func (s *Service) Version(ctx context.Context, t *platform.Tenant, pkg int64, version int) (Version, error) {
	return versionOf(ctx, t.DB, pkg, version)
}

// View shows a package to those who may author topics.
func (s *Service) View(ctx context.Context, t *platform.Tenant, p *access.Principal, pkg int64) (PackageView, error) {
	if !p.Has(access.CourseCreate) && !p.Has(access.CourseUpdate) {
		return PackageView{}, errUnauthorized
	}
	row, err := packageByID(ctx, t.DB, pkg)
	if err != nil {
		return PackageView{}, err
	}
	versions, err := versionsOf(ctx, t.DB, pkg)
	if err != nil {
		return PackageView{}, err
	}
	cur, err := versionOf(ctx, t.DB, pkg, 0)
	if err != nil {
		return PackageView{}, err
	}
	return PackageView{ID: row.id, Title: row.title, CurrentVersion: row.current, CreatedBy: row.createdBy,
		Versions: versions, Manifest: &cur.Manifest}, nil
}

// store checks the archive and its manifest, and the manifest with check
// when there is one, before it extracts the files to the blob store and
// records the version: a refused package leaves nothing stored.
func (s *Service) store(ctx context.Context, t *platform.Tenant, pkg int64, uploader *int64, f content.File,
	check func(*Manifest) error) (Version, error) {
	rc, err := f.Open()
	if err != nil {
		return Version{}, fmt.Errorf("interactive: open upload: %w", err)
	}
	defer rc.Close()
	ra, ok := rc.(io.ReaderAt)
	if !ok {
		data, err := io.ReadAll(io.LimitReader(rc, MaxPackage+1))
		if err != nil {
			return Version{}, fmt.Errorf("interactive: read upload: %w", err)
		}
		ra = bytes.NewReader(data)
	}
	zp, err := h5ppackage.Open(ra, f.Size, archiveLimits)
	if err != nil {
		return Version{}, h5ppackage.AsAPIError("file", err)
	}
	m, problems, err := readManifest(zp)
	if err != nil {
		return Version{}, err
	}
	files := zp.Files()
	// The manifest, the archive and the caller's rules are checked
	// together, so that every problem is named at once.
	valid := &m
	if len(problems) > 0 {
		valid = nil
	}
	if entryProblem(m.Entry) == "" && !contains(files, m.Entry) {
		problems.Add("manifest.entry", fmt.Sprintf("The entry %s is not a file of the archive.", m.Entry))
	}
	if check != nil {
		if err := check(valid); !problems.Join(err) {
			return Version{}, err
		}
	}
	if err := problems.Err(); err != nil {
		return Version{}, err
	}
	if m.Title == "" {
		m.Title = strings.TrimSuffix(content.SafeName(f.Name), ".zip")
	}
	prefix := content.NewPrefix("interactive")
	var size int64
	for _, name := range files {
		n, err := put(ctx, t, zp, prefix, name)
		if err != nil {
			t.Blob.DeletePrefix(context.WithoutCancel(ctx), prefix)
			return Version{}, err
		}
		size += n
	}
	manifest, err := json.Marshal(m)
	if err != nil {
		return Version{}, err
	}
	v, err := record(ctx, t, s.now(), pkg, uploader, m.Title, string(manifest), prefix, len(files), size)
	if err != nil {
		t.Blob.DeletePrefix(context.WithoutCancel(ctx), prefix)
		return Version{}, err
	}
	v.Manifest = m
	return v, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readManifest reads and checks lms-interactive.json: its problems are
// keyed manifest.<field>, and come with what could be read of the
// manifest, to check against the archive. An error is a manifest that
// cannot be read at all.
func readManifest(zp *h5ppackage.Package) (Manifest, apperr.Problems, error) {
	size, ok := zp.Size(ManifestFile)
	if !ok {
		return Manifest{}, nil, apperr.Field("file", "The package has no "+ManifestFile+" at its root.")
	}
	if size > MaxManifestSize {
		return Manifest{}, nil, apperr.Field("manifest", fmt.Sprintf("%s may not be greater than %d KiB.", ManifestFile, MaxManifestSize>>10))
	}
	rc, err := zp.Open(ManifestFile)
	if err != nil {
		return Manifest{}, nil, h5ppackage.AsAPIError("file", err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return Manifest{}, nil, h5ppackage.AsAPIError("file", err)
	}
	m, found := ParseManifest(data)
	problems := apperr.Problems{}
	for field, msgs := range found {
		key := "manifest." + field
		if field == "manifest" {
			key = field
		}
		problems[key] = msgs
	}
	if _, unreadable := found["manifest"]; unreadable {
		return Manifest{}, nil, problems.Err()
	}
	return m, problems, nil
}

// put extracts one file of the archive to the blob store.
func put(ctx context.Context, t *platform.Tenant, zp *h5ppackage.Package, prefix, name string) (int64, error) {
	size, _ := zp.Size(name)
	ctype := mime.TypeByExtension(strings.ToLower(path.Ext(name)))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	err := zp.Store(name, func(r io.Reader, size int64) error { return t.Blob.Put(ctx, prefix+name, r, size, ctype) })
	if err != nil {
		if pe := h5ppackage.AsAPIError("file", err); pe != err {
			return 0, pe
		}
		return 0, fmt.Errorf("interactive: store %s: %w", name, err)
	}
	return size, nil
}

// versionOf is the version of a package (0: its current version).
func versionOf(ctx context.Context, q sqldb.Querier, pkg int64, version int) (Version, error) {
	var v Version
	var manifest string
	err := q.QueryRowContext(ctx, `SELECT v.package_id, v.version, p.current_version, v.manifest, v.prefix
		FROM interactive_versions v JOIN interactive_packages p ON p.id = v.package_id
		WHERE v.package_id = $1 AND v.version = CASE WHEN $2 = 0 THEN p.current_version ELSE $2 END`, pkg, version).
		Scan(&v.Package, &v.Version, &v.Current, &manifest, &v.Prefix)
	if sqldb.NotFound(err) {
		return v, apperr.New(apperr.NotFound, "Package not found.")
	}
	if err != nil {
		return v, fmt.Errorf("interactive: load package %d version %d: %w", pkg, version, err)
	}
	if err := json.Unmarshal([]byte(manifest), &v.Manifest); err != nil {
		return v, fmt.Errorf("interactive: parse manifest of package %d: %w", pkg, err)
	}
	return v, nil
}
