// Package liascript stores LiaScript courses (the Markdown and its
// assets, with the parsed header and structure), records learners'
// section visits and quiz results in LiaScript topics and completes them
// by the topic's rule, and previews courses for authors. The topic kind
// is in kind.go.
package liascript

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

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

// archiveLimits bound a course's .zip; the H5P package reader checks it
// before anything is extracted.
var archiveLimits = h5ppackage.Limits{MaxEntries: 2000, MaxFileSize: 64 << 20, MaxTotalSize: MaxUpload}

// Service runs the LiaScript routes and stores courses for the kind.
type Service struct {
	Clock    clock.Clock
	Topics   kinds.Topics
	Progress topics.Completer
	// FileURL signs links to stored files.
	FileURL func(t *platform.Tenant, key string) string
	// RuntimeDir holds LiaScript's runtime: the dist of the npm package
	// @liascript/editor (pinned in package.json, installed by make build).
	RuntimeDir string

	versionOnce sync.Once
	version     string
}

var errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")

func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Microsecond) }

func canAuthor(p *access.Principal) bool {
	return p.Has(access.CourseCreate) || p.Has(access.CourseUpdate)
}

// LiaCourseView is a stored course for authors.
type LiaCourseView struct {
	ID          int64     `json:"id"`
	Structure   Structure `json:"structure"`
	MarkdownURL string    `json:"markdown_url" doc:"Signed link to the stored Markdown."`
	PlayURL     string    `json:"play_url" doc:"The player page previewing the course (LiaScript's runtime in a sandbox); it records nothing."`
}

func (s *Service) view(t *platform.Tenant, c Course) LiaCourseView {
	return LiaCourseView{ID: c.ID, Structure: c.Structure, MarkdownURL: s.FileURL(t, c.Prefix+MarkdownFile),
		PlayURL: PlayURL(t, CourseGrant, c.ID, s.now())}
}

// Upload stores a course from the upload route: markdown (text), or file
// (an .md, or a .zip with one .md at its root and the assets it links).
func (s *Service) Upload(ctx context.Context, t *platform.Tenant, p *access.Principal, body topics.Upload) (LiaCourseView, error) {
	if !canAuthor(p) {
		return LiaCourseView{}, errUnauthorized
	}
	in, done, err := s.Topics.ReadUpload(ctx, body, MaxUpload)
	if err != nil {
		return LiaCourseView{}, err
	}
	defer done()
	var c Course
	if md, ok := in.Text("markdown"); ok {
		c, err = s.AddMarkdown(ctx, t, md)
	} else if f, field, ok := content.FileFrom(in, "file"); ok {
		c, err = s.AddFile(ctx, t, f, field)
	} else {
		return LiaCourseView{}, apperr.Field("markdown", "Send the course as markdown, or as an .md or .zip in file.")
	}
	if err != nil {
		return LiaCourseView{}, err
	}
	return s.view(t, c), nil
}

// Preview shows a stored course to authors as learners would get it,
// recording nothing.
func (s *Service) Preview(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (LiaCourseView, error) {
	if !canAuthor(p) {
		return LiaCourseView{}, errUnauthorized
	}
	c, err := s.Course(ctx, t, id)
	if err != nil {
		return LiaCourseView{}, err
	}
	return s.view(t, c), nil
}

// CourseExists tells whether tenant t has the course id (a layout's
// LiaScriptLesson names one).
func (s *Service) CourseExists(ctx context.Context, t *platform.Tenant, id int64) (bool, error) {
	_, err := s.Course(ctx, t, id)
	if apperr.Is(err, apperr.NotFound) {
		return false, nil
	}
	return err == nil, err
}

// AddMarkdown stores a course written as Markdown text.
func (s *Service) AddMarkdown(ctx context.Context, t *platform.Tenant, md string) (Course, error) {
	if err := checkMarkdown([]byte(md), "markdown"); err != nil {
		return Course{}, err
	}
	return s.store(ctx, t, []byte(md), nil)
}

func checkMarkdown(md []byte, field string) error {
	switch {
	case len(bytes.TrimSpace(md)) == 0:
		return apperr.Field(field, "The course is empty.")
	case len(md) > MaxMarkdown:
		return apperr.Field(field, fmt.Sprintf("The course Markdown may not be greater than %d MiB.", MaxMarkdown>>20))
	case !utf8.Valid(md):
		return apperr.Field(field, "The course Markdown must be UTF-8 text.")
	}
	return nil
}

// AddFile stores an uploaded .md, or a .zip holding the course's Markdown
// (the only .md at its root, or README.md or course.md) and its assets.
func (s *Service) AddFile(ctx context.Context, t *platform.Tenant, f content.File, field string) (Course, error) {
	rc, err := f.Open()
	if err != nil {
		return Course{}, fmt.Errorf("liascript: open upload: %w", err)
	}
	defer rc.Close()
	switch content.Ext(f.Name) {
	case ".md":
		md, err := io.ReadAll(io.LimitReader(rc, MaxMarkdown+1))
		if err != nil {
			return Course{}, fmt.Errorf("liascript: read upload: %w", err)
		}
		if err := checkMarkdown(md, field); err != nil {
			return Course{}, err
		}
		return s.store(ctx, t, md, nil)
	case ".zip":
	default:
		return Course{}, apperr.Field(field, "The file must be a LiaScript course: an .md, or a .zip with the .md and its assets.")
	}
	ra, ok := rc.(io.ReaderAt)
	if !ok {
		data, err := io.ReadAll(io.LimitReader(rc, MaxUpload+1))
		if err != nil {
			return Course{}, fmt.Errorf("liascript: read upload: %w", err)
		}
		ra = bytes.NewReader(data)
	}
	zp, err := h5ppackage.Open(ra, f.Size, archiveLimits)
	if err != nil {
		return Course{}, h5ppackage.AsAPIError(field, err)
	}
	name, err := courseFile(zp.Files(), field)
	if err != nil {
		return Course{}, err
	}
	md, err := readEntry(zp, name, MaxMarkdown)
	if err != nil {
		return Course{}, h5ppackage.AsAPIError(field, err)
	}
	if err := checkMarkdown(md, field); err != nil {
		return Course{}, err
	}
	return s.store(ctx, t, md, zp)
}

// courseFile picks the course's Markdown among the archive's files.
func courseFile(files []string, field string) (string, error) {
	var root []string
	for _, f := range files {
		if !strings.Contains(f, "/") && strings.EqualFold(path.Ext(f), ".md") {
			root = append(root, f)
		}
	}
	for _, preferred := range []string{MarkdownFile, "README.md"} {
		if slices.Contains(root, preferred) {
			return preferred, nil
		}
	}
	if len(root) == 1 {
		return root[0], nil
	}
	return "", apperr.Field(field, "The .zip must hold the course as the only .md file at its root (or as course.md or README.md).")
}

func readEntry(zp *h5ppackage.Package, name string, max int64) ([]byte, error) {
	rc, err := zp.Open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(io.LimitReader(rc, max+1))
}

// store parses the Markdown, writes it and the archive's other files (its
// assets) to the blob store, and records the course.
func (s *Service) store(ctx context.Context, t *platform.Tenant, md []byte, zp *h5ppackage.Package) (Course, error) {
	c := Course{Structure: Parse(string(md)), Prefix: content.NewPrefix("liascript")}
	if c.Structure.Title == "" {
		c.Structure.Title = "LiaScript course"
	}
	if err := t.Blob.Put(ctx, c.Prefix+MarkdownFile, bytes.NewReader(md), int64(len(md)), "text/markdown; charset=utf-8"); err != nil {
		return Course{}, fmt.Errorf("liascript: store markdown: %w", err)
	}
	if zp != nil {
		for _, name := range zp.Files() {
			if strings.EqualFold(path.Ext(name), ".md") && !strings.Contains(name, "/") {
				continue
			}
			if err := putAsset(ctx, t, zp, c.Prefix, name); err != nil {
				t.Blob.DeletePrefix(context.WithoutCancel(ctx), c.Prefix)
				return Course{}, err
			}
		}
	}
	structure, err := json.Marshal(c.Structure)
	if err != nil {
		return Course{}, err
	}
	err = t.DB.QueryRowContext(ctx, `INSERT INTO liascript_courses (title, structure, prefix, created_at) VALUES ($1, $2, $3, $4) RETURNING id`,
		c.Structure.Title, string(structure), c.Prefix, s.now()).Scan(&c.ID)
	if err != nil {
		t.Blob.DeletePrefix(context.WithoutCancel(ctx), c.Prefix)
		return Course{}, fmt.Errorf("liascript: insert course: %w", err)
	}
	return c, nil
}

func putAsset(ctx context.Context, t *platform.Tenant, zp *h5ppackage.Package, prefix, name string) error {
	ctype := mime.TypeByExtension(strings.ToLower(path.Ext(name)))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	err := zp.Store(name, func(r io.Reader, size int64) error { return t.Blob.Put(ctx, prefix+name, r, size, ctype) })
	if err != nil {
		if e := h5ppackage.AsAPIError("file", err); e != err {
			return e
		}
		return fmt.Errorf("liascript: store %s: %w", name, err)
	}
	return nil
}

// Course loads a stored course.
func (s *Service) Course(ctx context.Context, t *platform.Tenant, id int64) (Course, error) {
	c := Course{ID: id}
	var structure string
	err := t.DB.QueryRowContext(ctx, `SELECT structure, prefix FROM liascript_courses WHERE id = $1`, id).Scan(&structure, &c.Prefix)
	if sqldb.NotFound(err) {
		return c, apperr.New(apperr.NotFound, "Course not found.")
	}
	if err != nil {
		return c, fmt.Errorf("liascript: load course %d: %w", id, err)
	}
	if err := json.Unmarshal([]byte(structure), &c.Structure); err != nil {
		return c, fmt.Errorf("liascript: parse course %d: %w", id, err)
	}
	return c, nil
}
