package liascript

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// RuntimePath is where LiaScript's runtime (the npm package
// @liascript/editor's dist) and the page's bridge script are served,
// under the installed package's version, so that browsers may keep them.
const RuntimePath = "/api/liascript/runtime/"

// bridgeFile is the name the bridge script is served under.
const bridgeFile = "lms-liascript.js"

// bridge is the page's own script, run before LiaScript's runtime: it
// lets the runtime work in the sandbox and reports what the learner did
// to the parent page.
//
//go:embed lms-liascript.js
var bridge []byte

var errNotFound = apperr.New(apperr.NotFound, "Not found.")

// Played is what a player link opens: a topic's course (progress is
// reported by the page around it) or a course by its id (an author's
// preview, a layout's LiaScriptLesson), which reports nothing.
type Played struct {
	// TopicID is 0 for a course by its id.
	TopicID   int64
	Prefix    string
	Structure Structure
}

// Open checks a player link's grant and loads the course it plays.
func (s *Service) Open(ctx context.Context, t *platform.Tenant, grant string) (Played, error) {
	now := s.Clock.Now()
	if topicID, err := content.VerifyGrant(t.URLKey, TopicGrant, grant, now); err == nil {
		topic, err := topics.ByID(ctx, t.DB, topicID)
		if err != nil {
			return Played{}, err
		}
		if topic.TopicableType != Class {
			return Played{}, errNotFound
		}
		v, err := ParseValue(topic.Content)
		if err != nil {
			return Played{}, err
		}
		prefix, err := Prefix(topic.Content)
		if err != nil {
			return Played{}, err
		}
		return Played{TopicID: topicID, Prefix: prefix, Structure: v.Structure}, nil
	}
	courseID, err := content.VerifyGrant(t.URLKey, CourseGrant, grant, now)
	if err != nil {
		return Played{}, err
	}
	c, err := s.Course(ctx, t, courseID)
	if err != nil {
		return Played{}, err
	}
	return Played{Prefix: c.Prefix, Structure: c.Structure}, nil
}

// Policy is the Content-Security-Policy of a player page and of every
// file served under its link. sandbox without allow-same-origin gives the
// page an opaque origin even when opened on its own: the course's scripts
// read no cookie or storage of ours, and their requests carry no
// credentials. LiaScript loads a course's imports (templates) and scripts
// in the browser, so https: is allowed for scripts, styles, media, frames
// and connections; the server never fetches them. Violations of a topic's
// page are reported to /api/csp-report with the topic.
func Policy(topicID int64) string {
	p := []string{
		"sandbox allow-scripts allow-popups allow-forms allow-modals allow-downloads",
		"default-src 'self' data: blob: https:",
		"script-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob: https:",
		"style-src 'self' 'unsafe-inline' https:",
		"connect-src 'self' data: blob: https:",
		"object-src 'none'",
		"form-action 'none'",
		"base-uri 'self'",
	}
	if topicID > 0 {
		p = append(p, "report-uri /api/csp-report?topic="+strconv.FormatInt(topicID, 10))
	}
	return strings.Join(p, "; ")
}

// Serve sends the player page (file ""), the course's Markdown (course.md)
// or one of its assets by its relative path. Names the course lacks that
// LiaScript's runtime holds (the editor's modes and themes, which it
// loads relative to the page) are the runtime's.
func (s *Service) Serve(ctx context.Context, t *platform.Tenant, pl Played, file string, w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Content-Security-Policy", Policy(pl.TopicID))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	// The sandboxed page's origin is opaque: its own fetches of the course
	// are cross-origin and need this.
	h.Set("Access-Control-Allow-Origin", "*")
	if file == "" {
		page, err := s.page(pl)
		if err != nil {
			return err
		}
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "private, no-cache")
		http.ServeContent(w, r, "", s.now(), bytes.NewReader(page))
		return nil
	}
	rc, info, err := t.Blob.Get(ctx, pl.Prefix+file)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		if !strings.Contains(file, "/") {
			if err := s.serveRuntime(file, w, r); err == nil {
				return nil
			}
		}
		return errNotFound
	}
	if err != nil {
		return fmt.Errorf("liascript: open %s: %w", file, err)
	}
	defer rc.Close()
	h.Set("Content-Type", info.ContentType)
	h.Set("Cache-Control", "private, max-age=3600")
	content.SendStored(w, r, rc, info)
	return nil
}

// errNoRuntime answers while LiaScript's runtime is not installed.
var errNoRuntime = apperr.New(apperr.Unavailable, "The LiaScript runtime (@liascript/editor) is not installed; run make build.")

// page is LiaScript's own index.html with its files linked from
// RuntimePath and the bridge script first in its head, given the number
// of quizzes of each section.
func (s *Service) page(pl Played) ([]byte, error) {
	index, err := os.ReadFile(filepath.Join(s.RuntimeDir, "index.html"))
	if err != nil {
		return nil, errNoRuntime
	}
	counts := make([]string, len(pl.Structure.Sections))
	for i, sec := range pl.Structure.Sections {
		counts[i] = strconv.Itoa(sec.Quizzes)
	}
	base := RuntimePath + s.runtimeVersion() + "/"
	tag := fmt.Sprintf(`<head><script src="%s%s" data-quizzes="%s"></script>`, base, bridgeFile, strings.Join(counts, ","))
	page := bytes.Replace(index, []byte("<head>"), []byte(tag), 1)
	page = bytes.ReplaceAll(page, []byte(`="./`), []byte(`="`+base))
	return page, nil
}

// runtimeVersion is the installed runtime's version, from its package's
// package.json beside its dist ("dist" when it cannot be read).
func (s *Service) runtimeVersion() string {
	s.versionOnce.Do(func() {
		s.version = "dist"
		data, err := os.ReadFile(filepath.Join(s.RuntimeDir, "..", "package.json"))
		if err != nil {
			return
		}
		var pkg struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(data, &pkg) == nil && pkg.Version != "" && url.PathEscape(pkg.Version) == pkg.Version {
			s.version = pkg.Version
		}
	})
	return s.version
}

// serveRuntime sends a file of LiaScript's runtime, or the bridge script.
// The files are public and the same for every tenant; the sandboxed page
// loads them as modules and workers from its opaque origin, so they are
// served to any origin.
func (s *Service) serveRuntime(file string, w http.ResponseWriter, r *http.Request) error {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	h.Set("X-Content-Type-Options", "nosniff")
	if file == bridgeFile {
		h.Set("Content-Type", "text/javascript; charset=utf-8")
		h.Set("Cache-Control", "public, max-age=300")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(bridge))
		return nil
	}
	if file == "" || file == "index.html" || !fs.ValidPath(file) {
		return errNotFound
	}
	f, err := os.Open(filepath.Join(s.RuntimeDir, filepath.FromSlash(file)))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Stat(filepath.Join(s.RuntimeDir, "index.html")); serr != nil {
			return errNoRuntime
		}
		return errNotFound
	}
	if err != nil {
		return fmt.Errorf("liascript: runtime %s: %w", file, err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		return errNotFound
	}
	if ctype := mime.TypeByExtension(path.Ext(file)); ctype != "" {
		h.Set("Content-Type", ctype)
	}
	// The package is pinned and its file names carry content hashes.
	h.Set("Cache-Control", "public, max-age=86400")
	http.ServeContent(w, r, "", info.ModTime(), f)
	return nil
}
