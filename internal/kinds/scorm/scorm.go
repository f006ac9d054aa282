// Package scorm plays SCORM 1.2 and 2004 packages: it stores uploaded
// packages (checked as archives by h5ppackage's safe ZIP reader, their
// manifest by scorm/manifest) in the tenant's blob store, launches a SCO
// for a learner with a tracking token, serves the player page and the
// package's files, keeps each learner's CMI data model per topic and SCO
// with ordered, idempotent commits, and completes the topic through the
// learning package when its SCO is completed or passed.
package scorm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"path"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/kinds/scorm/manifest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Limits of an uploaded package.
const (
	MaxUpload     = 512 << 20
	maxEntries    = 20000
	maxFileSize   = 512 << 20
	maxTotalSize  = 2 << 30
	maxManifest   = 8 << 20
	manifestName  = "imsmanifest.xml"
	trackTokenTTL = 12 * time.Hour
)

// Progress is what the learning package does for SCORM tracks.
type Progress interface {
	// CompleteTopicScored completes the topic for the learner with their
	// score (nil: none); the topic keeps the best score.
	CompleteTopicScored(ctx context.Context, t *platform.Tenant, userID, topicID int64, score *topics.TopicScore) error
	// Gate says whether p may record progress in the topic now.
	kinds.Gate
	// AddTopicTime adds seconds of the learner's time to the topic.
	AddTopicTime(ctx context.Context, q sqldb.Querier, userID, topicID, seconds int64) error
	// TopicResult tells whether the learner's topic is complete, and the
	// score it keeps.
	TopicResult(ctx context.Context, t *platform.Tenant, userID, topicID int64) (bool, *topics.TopicScore, error)
}

// Service stores packages and runs SCOs.
type Service struct {
	Clock    clock.Clock
	Progress Progress
	// Scanner, when set, checks every uploaded package for malware.
	Scanner scan.Scanner
	// PlayerDir holds the scorm-again build (node_modules/scorm-again/dist).
	PlayerDir string
}

var (
	errPackageMissing = apperr.New(apperr.NotFound, "SCORM package not found.")
	errSCOMissing     = apperr.New(apperr.NotFound, "SCO not found.")
	errUnauthorized   = apperr.New(apperr.Forbidden, "This action is unauthorized.")
)

// CanUpload tells whether p may upload packages: those who author topics.
func CanUpload(p *access.Principal) bool {
	return p != nil && (p.Has(access.CourseUpdate) || p.Has(access.CourseUpdateAuthored))
}

// Upload stores a package a caller uploaded through the admin route.
func (s *Service) Upload(ctx context.Context, t *platform.Tenant, p *access.Principal, f content.File) (ScormPackage, error) {
	if !CanUpload(p) {
		return ScormPackage{}, errUnauthorized
	}
	return s.importFile(ctx, t, &p.UserID, f)
}

// Import stores a package uploaded with a topic (Packages).
func (s *Service) Import(ctx context.Context, t *platform.Tenant, f content.File) (ScormPackage, error) {
	return s.importFile(ctx, t, nil, f)
}

func (s *Service) importFile(ctx context.Context, t *platform.Tenant, by *int64, f content.File) (ScormPackage, error) {
	if ext := strings.ToLower(path.Ext(f.Name)); ext != ".zip" && ext != "" {
		return ScormPackage{}, invalid("The package must be a .zip file.")
	}
	rc, err := f.Open()
	if err != nil {
		return ScormPackage{}, fmt.Errorf("scorm: open upload: %w", err)
	}
	defer rc.Close()
	ra, size, done, err := readerAt(rc, f.Size)
	if err != nil {
		return ScormPackage{}, err
	}
	defer done()
	if s.Scanner != nil {
		if err := scan.Check(ctx, s.Scanner, io.NewSectionReader(ra, 0, size), "package"); err != nil {
			return ScormPackage{}, err
		}
	}
	pkg, err := h5ppackage.Open(ra, size, h5ppackage.Limits{MaxEntries: maxEntries, MaxFileSize: maxFileSize,
		MaxTotalSize: maxTotalSize, MaxContentSize: maxFileSize, KeepHidden: true})
	if err != nil {
		return ScormPackage{}, h5ppackage.AsAPIError("package", err)
	}
	names := map[string]bool{}
	for _, n := range pkg.Files() {
		names[n] = true
	}
	if !names[manifestName] {
		return ScormPackage{}, invalid("The package has no imsmanifest.xml at its root.")
	}
	if n, _ := pkg.Size(manifestName); n > maxManifest {
		return ScormPackage{}, invalid(fmt.Sprintf("imsmanifest.xml is larger than %d MiB.", maxManifest>>20))
	}
	data, err := readAll(pkg, manifestName)
	if err != nil {
		return ScormPackage{}, h5ppackage.AsAPIError("package", err)
	}
	m, err := manifest.Parse(data, func(n string) bool { return names[n] })
	var me *manifest.Error
	if errors.As(err, &me) {
		e := invalid(me.Problems[0])
		if len(me.Problems) > 1 {
			e.Message = strings.Join(me.Problems, " ")
		}
		e.Fields = map[string][]string{"package": me.Problems}
		return ScormPackage{}, e
	}
	if err != nil {
		return ScormPackage{}, err
	}
	prefix := content.NewPrefix("scorm")
	if err := s.extract(ctx, t, pkg, prefix); err != nil {
		_ = t.Blob.DeletePrefix(context.WithoutCancel(ctx), prefix)
		return ScormPackage{}, err
	}
	out, err := insertPackage(ctx, t, m, prefix, size, by, s.Clock.Now().UTC())
	if err != nil {
		_ = t.Blob.DeletePrefix(context.WithoutCancel(ctx), prefix)
		return ScormPackage{}, err
	}
	return out, nil
}

func invalid(msg string) *apperr.Error {
	return &apperr.Error{Kind: apperr.Invalid, Message: msg, Fields: map[string][]string{"package": {msg}}}
}

// readerAt gives random access to the upload: the spooled file itself
// when it is one, else a temporary copy.
func readerAt(rc io.Reader, size int64) (io.ReaderAt, int64, func(), error) {
	if f, ok := rc.(*os.File); ok {
		st, err := f.Stat()
		if err == nil {
			return f, st.Size(), func() {}, nil
		}
	}
	tmp, err := os.CreateTemp("", "scorm-*.zip")
	if err != nil {
		return nil, 0, nil, fmt.Errorf("scorm: spool package: %w", err)
	}
	done := func() { tmp.Close(); os.Remove(tmp.Name()) }
	n, err := io.Copy(tmp, io.LimitReader(rc, MaxUpload+1))
	if err != nil {
		done()
		return nil, 0, nil, fmt.Errorf("scorm: spool package: %w", err)
	}
	if n > MaxUpload {
		done()
		return nil, 0, nil, apperr.New(apperr.TooLarge, fmt.Sprintf("The package may not be greater than %d MiB.", MaxUpload>>20))
	}
	return tmp, n, done, nil
}

func readAll(pkg *h5ppackage.Package, name string) ([]byte, error) {
	r, err := pkg.Open(name)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// extract writes every file of the package under prefix.
func (s *Service) extract(ctx context.Context, t *platform.Tenant, pkg *h5ppackage.Package, prefix string) error {
	for _, name := range pkg.Files() {
		if strings.HasSuffix(name, "/") {
			continue
		}
		ct := mime.TypeByExtension(path.Ext(name))
		if ct == "" {
			ct = "application/octet-stream"
		}
		err := pkg.Store(name, func(r io.Reader, size int64) error {
			return t.Blob.Put(ctx, prefix+name, r, size, ct)
		})
		if err != nil {
			return h5ppackage.AsAPIError("package", fmt.Errorf("scorm: store %s: %w", name, err))
		}
	}
	return nil
}

// Package returns a stored package with its SCOs, for a topic that is to
// play it: read from the database, not the cache, so that a package
// another server deleted is not found.
func (s *Service) Package(ctx context.Context, t *platform.Tenant, id int64) (ScormPackage, error) {
	p, err := packageByID(ctx, t.DB, id)
	if err != nil {
		return ScormPackage{}, err
	}
	return p.summary(), nil
}
