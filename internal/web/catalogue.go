package web

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/lms-platform/lms/client"
)

// home is the platform landing on the platform host and the catalogue on
// every tenant host.
func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	if h.isPlatformHost(r) {
		h.landing("en")(w, r)
		return
	}
	h.catalogue(w, r)
}

type catalogueData struct {
	Courses []course
	Query   string
	Tag     string
	Tags    []string
	Page    int
	Last    int
	Total   int
	Prev    string
	Next    string
	Action  string
}

// catalogue lists the tenant's published courses, with a title search
// and tag filters, from the public cache.
func (h *Handler) catalogue(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	query := strings.TrimSpace(q.Get("q"))
	if utf8.RuneCountInString(query) > 100 {
		query = string([]rune(query)[:100])
	}
	tag := strings.TrimSpace(q.Get("tag"))
	if len(tag) > 64 {
		tag = ""
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = min(max(page, 1), 1000)
	signedIn := h.readSession(r) != nil
	site := h.siteName(r)
	c, err := h.public(r, cataloguePath(query, tag, page), decodeCourses)
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	if c.status != http.StatusOK {
		h.apiFailed(w, r, &client.Error{Status: c.status, Message: c.message})
		return
	}
	tags, _ := h.public(r, "/api/tags/uniqueTags", decodeTags)
	// The page is a function of the cached answers, the query and the
	// signed-in flag: rendered once per version of its data.
	key := memoKey{host: h.apiHost(r), uri: r.URL.RequestURI(), signedIn: signedIn}
	// The memoised page holds a placeholder where the sign-out form's
	// CSRF token goes: each caller gets their own.
	token := []byte(h.csrfToken(w, r, csrfForm))
	// An admin acting as a user sees the banner: that page is the
	// browser's own, never memoised.
	acting := h.actingBanner(r, "")
	if body, ok := h.memo.get(key, site, c, tags); ok && acting == nil {
		writePage(w, http.StatusOK, bytes.ReplaceAll(body, []byte(csrfPlaceholder), token))
		return
	}
	d := catalogueData{Courses: *c.value.(*[]course), Query: query, Tag: tag, Page: page, Last: 1,
		Action: r.URL.Path}
	if d.Action != "/" {
		d.Action = "/courses"
	}
	if c.meta != nil {
		d.Last, d.Total = max(c.meta.LastPage, 1), c.meta.Total
	}
	if tags != nil && tags.status == http.StatusOK {
		d.Tags = *tags.value.(*[]string)
	}
	link := func(p int) string {
		v := map[string]string{"q": query, "tag": tag}
		var b strings.Builder
		b.WriteString(d.Action + "?page=" + strconv.Itoa(p))
		for _, k := range []string{"q", "tag"} {
			if v[k] != "" {
				b.WriteString("&" + k + "=" + url.QueryEscape(v[k]))
			}
		}
		return b.String()
	}
	if page > 1 {
		d.Prev = link(page - 1)
	}
	if page < d.Last {
		d.Next = link(page + 1)
	}
	title := "Courses"
	if query != "" {
		title = "Courses matching “" + query + "”"
	}
	var buf bytes.Buffer
	if err := h.execute(&buf, r, "catalogue", view{Site: site, Title: title, Nav: "courses", SignedIn: signedIn, Data: d,
		CSRF: csrfPlaceholder, Acting: acting}); err != nil {
		h.log.Error("web: render", "page", "catalogue", "err", err)
		h.plainError(w, http.StatusInternalServerError, "Something went wrong.")
		return
	}
	if acting == nil {
		h.memo.put(key, site, c, tags, buf.Bytes())
	}
	writePage(w, http.StatusOK, bytes.ReplaceAll(buf.Bytes(), []byte(csrfPlaceholder), token))
}

type courseData struct {
	Course  course
	Program *program
	// Closed says the program is for enrolled learners only.
	Closed   bool
	Continue string
}

// coursePage describes one course and its outline.
func (h *Handler) coursePage(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("course")
	if !isID(id) {
		h.notFound(w, r)
		return
	}
	c, err := h.public(r, "/api/courses/"+id, decodeCourse)
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	if c.status != http.StatusOK {
		h.apiFailed(w, r, &client.Error{Status: c.status, Message: c.message})
		return
	}
	d := courseData{Course: *c.value.(*course)}
	prog, err := h.program(w, r, id)
	switch {
	case err == nil:
		d.Program = prog
		d.Continue = continueURL(prog)
	case client.StatusOf(err) == http.StatusForbidden || client.StatusOf(err) == http.StatusUnauthorized:
		d.Closed = true
	case client.StatusOf(err) == http.StatusNotFound:
		h.notFound(w, r)
		return
	default:
		h.apiFailed(w, r, err)
		return
	}
	h.render(w, r, http.StatusOK, "course", view{Title: d.Course.Title, Nav: "courses",
		SignedIn: h.readSession(r) != nil, Data: d})
}

// program loads a course's program: with the caller's progress when
// signed in, from the public cache otherwise.
func (h *Handler) program(w http.ResponseWriter, r *http.Request, id string) (*program, error) {
	path := "/api/courses/" + id + "/program"
	if s := h.readSession(r); s != nil {
		var p *program
		err := h.userCall(w, r, s, func(api *client.Client) (err error) {
			p, err = h.userProgram(r.Context(), api, id)
			return err
		})
		return p, err
	}
	c, err := h.public(r, path, decodeProgram)
	if err != nil {
		return nil, err
	}
	if c.status != http.StatusOK {
		return nil, &client.Error{Status: c.status, Message: c.message}
	}
	// A copy: the cached program is shared by every anonymous reader.
	p := *c.value.(*program)
	return &p, nil
}

// userProgram loads a course's program with the caller's progress, into
// the frontend's own view of it (the one the public cache holds too).
func (h *Handler) userProgram(ctx context.Context, api *client.Client, id string) (*program, error) {
	var p program
	if err := api.Call(ctx, http.MethodGet, "/api/courses/"+id+"/program", nil, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// continueURL is the first topic not yet complete, or the first topic.
func continueURL(p *program) string {
	var first, next *topic
	walkTopics(p.Lessons, func(_ *lesson, t *topic) {
		if first == nil {
			first = t
		}
		if next == nil && (t.Progress == nil || t.Progress.Status != statusComplete) {
			next = t
		}
	})
	switch {
	case next != nil:
		return "/learn/" + strconv.FormatInt(p.ID, 10) + "/" + strconv.FormatInt(next.ID, 10)
	case first != nil:
		return "/learn/" + strconv.FormatInt(p.ID, 10) + "/" + strconv.FormatInt(first.ID, 10)
	}
	return ""
}

// walkTopics visits the topics of lessons in program order.
func walkTopics(lessons []*lesson, fn func(*lesson, *topic)) {
	for _, l := range lessons {
		for _, t := range l.Topics {
			fn(l, t)
		}
		walkTopics(l.Lessons, fn)
	}
}
