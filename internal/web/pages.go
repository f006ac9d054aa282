package web

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/lms-platform/lms/client"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages holds one parsed template set per page: the layout plus the
// page's own file.
type pages struct {
	sets map[string]*template.Template
	// layout is the layout alone, for its parts that pages written
	// without it show (the acting banner).
	layout *template.Template
}

var pageFuncs = template.FuncMap{
	"minutes": func(seconds int64) string {
		switch m := seconds / 60; {
		case seconds == 0:
			return "—"
		case m < 1:
			return "under a minute"
		case m < 60:
			return fmt.Sprintf("%d min", m)
		default:
			return fmt.Sprintf("%d h %02d min", m/60, m%60)
		}
	},
	"topicURL": func(courseID, topicID int64) string {
		return "/learn/" + strconv.FormatInt(courseID, 10) + "/" + strconv.FormatInt(topicID, 10)
	},
	"statusOf": func(t *topic) int {
		if t == nil || t.Progress == nil {
			return statusIncomplete
		}
		return t.Progress.Status
	},
	"kindLabel": kindLabel,
	"outline": func(courseID, current int64, lessons []*lesson, links bool) outlineArgs {
		return outlineArgs{CourseID: courseID, Current: current, Lessons: lessons, Links: links}
	},
	"sub": func(o outlineArgs, lessons []*lesson) outlineArgs {
		o.Lessons = lessons
		return o
	},
	"add":             func(a, b int) int { return a + b },
	"trackStatements": trackStatements,
	// num writes an optional number with prec decimals (-1: as few as
	// it needs), "—" when absent: printf would write the pointer.
	"num": func(f *float64, prec int) string {
		if f == nil {
			return "—"
		}
		return strconv.FormatFloat(*f, 'f', prec, 64)
	},
	"teachLessons": func(ls []*teachLesson, w programWords, csrf string) teachLessonsArgs {
		return teachLessonsArgs{Lessons: ls, W: w, CSRF: csrf}
	},
	"programWords": newProgramWords,
	"initial": func(s string) string {
		for _, r := range s {
			return strings.ToUpper(string(r))
		}
		return "?"
	},
}

func loadPages() (*pages, error) {
	layout, err := template.New("layout.html").Funcs(pageFuncs).Funcs(layoutFuncs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("web: layout: %w", err)
	}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{sets: map[string]*template.Template{}, layout: layout}
	for _, name := range names {
		base := strings.TrimSuffix(strings.TrimPrefix(name, "templates/"), ".html")
		if base == "layout" {
			continue
		}
		set, err := template.Must(layout.Clone()).ParseFS(templateFS, name)
		if err != nil {
			return nil, fmt.Errorf("web: template %s: %w", base, err)
		}
		p.sets[base] = set
	}
	return p, nil
}

// outlineArgs draw a course outline: its lessons, the topic being
// shown, and whether topics link to their pages.
type outlineArgs struct {
	CourseID int64
	Current  int64
	Lessons  []*lesson
	Links    bool
}

// view is what every page template gets.
type view struct {
	Site     string
	Title    string
	Lang     string
	SignedIn bool
	// Teach links the authoring dashboard in the header: the user may
	// author courses (render asks the memo of the caller's profile).
	Teach bool
	// Nav names the header link of the current section.
	Nav string
	// Home is where the brand links: the catalogue, or the landing.
	Home string
	Data any
	// L are the layout's words in the page's language; Asset is the
	// version query of the stylesheet and script.
	L     labels
	Asset string
	// CSRF is the token of the page's forms (see csrf.go); render fills
	// it in.
	CSRF string
	// Admin is the header's Admin link text, for admins only.
	Admin string
	// Acting is the banner of an admin acting as a user (admin_acting.go).
	Acting *actingView
}

// labels are the words of the layout (header, footer, skip link).
type labels struct {
	Skip, Courses, My, Profile, SignIn, SignOut, Menu, Footer string
	Certificates, Teach                                       string
}

var layoutLabels = map[string]labels{
	"en": {"Skip to content", "Courses", "My learning", "Profile", "Sign in", "Sign out", "Main",
		"Learn at your own pace.", "Certificates", "Teaching"},
	"pl": {"Przejdź do treści", "Kursy", "Moja nauka", "Profil", "Zaloguj się", "Wyloguj się", "Główne",
		"Ucz się we własnym tempie.", "Certyfikaty", "Nauczanie"},
	"zh": {"跳到正文", "课程", "我的学习", "个人资料", "登录", "退出登录", "主导航", "按照自己的节奏学习。", "证书", "教学"},
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render writes a page; pages are never cached by the browser or shared
// caches, since they show the signed-in state.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if v.CSRF == "" {
		v.CSRF = h.csrfToken(w, r, csrfForm)
	}
	if v.SignedIn {
		nav := h.callerNav(r)
		v.Teach = v.Teach || mayAuthor(nav.perms)
		v.Admin = adminNav(nav, v.Lang)
		v.Acting = h.actingBanner(r, v.Lang)
	}
	if w.Header().Get("Content-Security-Policy") == "" {
		w.Header().Set("Content-Security-Policy", h.pageCSPFor(r))
	}
	if err := h.execute(buf, r, name, v); err != nil {
		h.log.Error("web: render", "page", name, "err", err)
		h.plainError(w, http.StatusInternalServerError, "Something went wrong.")
		return
	}
	writePage(w, status, buf.Bytes())
}

// execute renders a page into buf.
func (h *Handler) execute(buf *bytes.Buffer, r *http.Request, name string, v view) error {
	set := h.pages.sets[name]
	if v.Site == "" {
		v.Site = h.siteName(r)
	}
	if v.Lang == "" {
		v.Lang = "en"
	}
	if v.Home == "" {
		v.Home = "/"
	}
	v.L, v.Asset = layoutLabels[v.Lang], assetVersion
	return set.ExecuteTemplate(buf, "layout.html", v)
}

func writePage(w http.ResponseWriter, status int, body []byte) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	if hdr.Get("Content-Security-Policy") == "" {
		hdr.Set("Content-Security-Policy", pageCSP)
	}
	w.WriteHeader(status)
	w.Write(body)
}

// pageCSP lets pages run only the frontend's own script and styles.
// Frames: the frontend itself (H5P embeds, PDFs) and https providers of
// embedded media (the API rebuilds oEmbed markup as sandboxed iframes).
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: https:; " +
	"media-src 'self' https: blob:; frame-src 'self' https:; object-src 'none'; base-uri 'self'; " +
	"form-action 'self'; frame-ancestors 'self'"

// pageCSPFor is pageCSP with the tenant's content origin among the
// frames and form targets: topic pages frame its players and post their
// launch forms to it.
func (h *Handler) pageCSPFor(r *http.Request) string {
	origin := h.contentOrigin(r)
	if origin == "" {
		return pageCSP
	}
	csp := strings.Replace(pageCSP, "frame-src 'self' https:", "frame-src 'self' https: "+origin, 1)
	return strings.Replace(csp, "form-action 'self'", "form-action 'self' "+origin, 1)
}

func (h *Handler) errorPage(w http.ResponseWriter, r *http.Request, status int, title, message string) {
	h.render(w, r, status, "error", view{Title: title, SignedIn: h.readSession(r) != nil,
		Data: map[string]any{"Status": status, "Title": title, "Message": message}})
}

func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	h.errorPage(w, r, http.StatusNotFound, "Page not found", "There is nothing at this address. It may have moved, or the link may be mistyped.")
}

// apiFailed shows the page for a failed API call: unreachable (502),
// not found (404), forbidden (403), or the API's own message (a
// suspended site's 503 among them).
func (h *Handler) apiFailed(w http.ResponseWriter, r *http.Request, err error) {
	var ae *client.Error
	switch {
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
		h.notFound(w, r)
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		h.errorPage(w, r, http.StatusForbidden, "No access", ae.Message)
	case errors.As(err, &ae) && ae.Status < 500:
		h.errorPage(w, r, ae.Status, "That did not work", ae.Message)
	case errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable:
		// A suspended site, or a service that says why it is out.
		h.errorPage(w, r, ae.Status, "Site unavailable", ae.Message)
	default:
		h.log.Warn("web: API call failed", "path", r.URL.Path, "err", err)
		h.errorPage(w, r, http.StatusBadGateway, "Service unavailable",
			"The learning service cannot be reached right now. Please try again in a moment.")
	}
}

// kindLabels name each kind of topic as a learner knows it, by what they
// will do there, never by the standard or tool behind it (SCORM, cmi5,
// H5P, LiaScript, LTI): the outline, the topic's heading and the titles
// of its frames all read them here, so a kind is called the same
// everywhere.
var kindLabels = map[string]string{
	"richtext":    "Reading",
	"video":       "Video",
	"audio":       "Audio",
	"image":       "Image",
	"pdf":         "Document",
	"oembed":      "Embedded media",
	"h5p":         "Interactive exercise",
	"project":     "Project",
	"quiz":        "Quiz",
	"layout":      "Study page",
	"scorm":       "E-learning module",
	"cmi5":        "E-learning module",
	"interactive": "Interactive app",
	"liascript":   "Workbook",
	"lti":         "External tool",
}

// kindLabel names a kind of topic for learners; a kind this frontend does
// not know yet is an activity.
func kindLabel(kind string) string {
	if l, ok := kindLabels[kind]; ok {
		return l
	}
	return "Activity"
}

// localPath accepts only a path on this site as a place to go after
// signing in (the login, demo login and device pages' next), else
// fallback. Browsers drop tabs and line breaks from a URL and read a
// backslash as a slash, so "/\t/evil.example" or "/\\evil.example" would
// leave the site: a candidate is refused when it, or any form of it
// after percent-decoding, holds a control character or a backslash, or
// does not start with exactly one slash. What passes is a path with an
// optional query and fragment, and is returned unchanged.
func localPath(p, fallback string) string {
	if len(p) > 2048 {
		return fallback
	}
	for form, i := p, 0; ; i++ {
		if !singleSlashPath(form) {
			return fallback
		}
		decoded, err := url.PathUnescape(form)
		if err != nil || i == 3 {
			return fallback
		}
		if decoded == form {
			break
		}
		form = decoded
	}
	u, err := url.Parse(p)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return fallback
	}
	return p
}

// singleSlashPath tells whether p starts with one slash (not two, not a
// slash and a backslash) and holds no control character or backslash.
func singleSlashPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") {
		return false
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f || c == '\\' || (c >= 0x80 && c <= 0x9f) {
			return false
		}
	}
	return true
}
