package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/client"
)

// The authoring pages (/teach/...) for tutors (the courses they author)
// and admins (every course). They call the API's admin routes with the
// signed-in user's token; the API decides what each may do, these pages
// only choose what to offer. Forms post to the frontend's own routes
// (never /bff/), each with its CSRF token. See docs/web.md.

// teachRoutes adds the authoring pages to mux.
func (h *Handler) teachRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /teach", h.teachDashboard)
	mux.HandleFunc("GET /teach/courses", h.teachCourses)
	mux.HandleFunc("GET /teach/courses/new", h.teachNewCourse)
	mux.HandleFunc("POST /teach/courses/new", h.csrfForms(maxCourseForm, h.teachCreateCourse))
	mux.HandleFunc("GET /teach/courses/{course}", h.teachCourse)
	mux.HandleFunc("POST /teach/courses/{course}", h.csrfForms(maxCourseForm, h.teachSaveCourse))
	mux.HandleFunc("GET /teach/courses/{course}/delete", h.teachDeletePage("course"))
	mux.HandleFunc("POST /teach/courses/{course}/delete", h.csrfForms(4<<10, h.teachDelete("course")))
	mux.HandleFunc("POST /teach/courses/{course}/lessons", h.csrfForms(16<<10, h.teachAddLesson))
	mux.HandleFunc("POST /teach/courses/{course}/lessons/{lesson}/move", h.csrfForms(4<<10, h.teachMove("lesson")))
	mux.HandleFunc("POST /teach/courses/{course}/lessons/{lesson}/clone", h.csrfForms(4<<10, h.teachCloneLesson))
	mux.HandleFunc("GET /teach/courses/{course}/lessons/{lesson}/delete", h.teachDeletePage("lesson"))
	mux.HandleFunc("POST /teach/courses/{course}/lessons/{lesson}/delete", h.csrfForms(4<<10, h.teachDelete("lesson")))
	mux.HandleFunc("GET /teach/courses/{course}/topics/new", h.teachNewTopic)
	mux.HandleFunc("POST /teach/courses/{course}/topics/new", h.csrfForms(maxTopicUpload, h.teachCreateTopic))
	mux.HandleFunc("POST /teach/courses/{course}/topics/deep-link", h.csrfForms(4<<10, h.teachDeepLink))
	mux.HandleFunc("GET /teach/courses/{course}/topics/{topic}", h.teachTopic)
	mux.HandleFunc("POST /teach/courses/{course}/topics/{topic}", h.csrfForms(maxTopicText, h.teachSaveTopic))
	mux.HandleFunc("POST /teach/courses/{course}/topics/{topic}/move", h.csrfForms(4<<10, h.teachMove("topic")))
	mux.HandleFunc("GET /teach/courses/{course}/topics/{topic}/delete", h.teachDeletePage("topic"))
	mux.HandleFunc("POST /teach/courses/{course}/topics/{topic}/delete", h.csrfForms(4<<10, h.teachDelete("topic")))
	mux.HandleFunc("POST /teach/h5p-grant", h.csrfForms(4<<10, h.teachH5PGrant))
	mux.HandleFunc("GET /assets/editor/{file}", h.editorAsset)
}

const (
	// maxCourseForm holds a course form with its image (5 MiB at most at
	// the API).
	maxCourseForm = 6 << 20
	// maxTopicUpload is the largest topic upload passed on; the API holds
	// each kind to its own cap.
	maxTopicUpload = 2 << 30
)

// author is the signed-in user of an authoring page.
type author struct {
	s     *session
	api   *client.Client
	admin bool // may edit every course
	lang  string
	t     teachWords
}

// courseAuthor reads the course of the path and the caller as an author
// (see authorOf); a nil author: answered.
func (h *Handler) courseAuthor(w http.ResponseWriter, r *http.Request) (int64, *author) {
	course, ok := h.pathID(w, r, "course")
	if !ok {
		return 0, nil
	}
	return course, h.authorOf(w, r)
}

// authorOf loads the caller's permissions: anonymous callers are sent to
// sign in, users who may not author get a 403 page. nil: answered.
func (h *Handler) authorOf(w http.ResponseWriter, r *http.Request) *author {
	s := h.requireSession(w, r)
	if s == nil {
		return nil
	}
	lang := teachLang(r)
	a := &author{s: s, lang: lang, t: teachText[lang]}
	var roles, perms []string
	err := h.userCall(w, r, s, func(api *client.Client) error {
		p, err := api.GetProfileMe(r.Context())
		if err == nil {
			roles, perms = p.Roles, p.Permissions
		}
		return err
	})
	if client.StatusOf(err) == http.StatusUnauthorized {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
		return nil
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return nil
	}
	h.navRoles.put(s.token, roles, perms, h.clock.Now())
	if !mayAuthor(perms) {
		h.errorPage(w, r, http.StatusForbidden, a.t.S("teach"), a.t.S("no_access"))
		return nil
	}
	a.admin = slices.Contains(perms, "course_update")
	a.api = h.api.as(h.apiHost(r), s.token)
	return a
}

func mayAuthor(perms []string) bool {
	return slices.Contains(perms, "course_create") || slices.Contains(perms, "course_update_authored") ||
		slices.Contains(perms, "course_update")
}

// teachView renders an authoring page in the author's language.
func (h *Handler) teachRender(w http.ResponseWriter, r *http.Request, a *author, status int, page, title string, data any) {
	h.render(w, r, status, page, view{Title: title, Lang: a.lang, Nav: "teach", SignedIn: true, Teach: true, Data: data})
}

// teachPage is what every authoring template gets beside its own data.
type teachPage struct {
	T      teachWords
	Notice string
	Error  string
}

func (a *author) page(r *http.Request) teachPage {
	p := teachPage{T: a.t}
	if n := r.URL.Query().Get("notice"); n != "" {
		if _, ok := teachText["en"][n]; ok {
			p.Notice = a.t.S(n)
		}
	}
	return p
}

// courseRow is a course in the list with its learners and their
// completion, from the course's gradebook summary; Learners is -1 when
// the summary could not be read.
type courseRow struct {
	Course   client.CourseView
	Learners int64
	Finished int64
	Percent  int64
}

type dashboardData struct {
	teachPage
	Admin   bool
	Counts  map[string]int64
	Recent  []courseRow
	Kinds   []topicKind
	Courses int64
}

// listCourses is the author's courses: every course for admins, the
// authored ones for tutors.
func (a *author) listCourses(ctx context.Context, page, perPage int64, title, status string) (*client.Page[client.CourseView], error) {
	var t, st *string
	if title != "" {
		t = &title
	}
	if status != "" {
		st = &status
	}
	if a.admin {
		return a.api.GetAdminCourses(ctx, client.GetAdminCoursesParams{Page: &page, PerPage: &perPage, Title: t, Status: st,
			OrderBy: client.Ptr("id"), Order: client.Ptr("desc")})
	}
	return a.api.GetCoursesAuthored(ctx, client.GetCoursesAuthoredParams{Page: &page, PerPage: &perPage, Title: t, Status: st,
		OrderBy: client.Ptr("id"), Order: client.Ptr("desc")})
}

// withLearners reads each course's gradebook summary (learners, how many
// finished, their mean percent), a few calls at a time: the API has no
// list of courses with these figures, so it is one call a course.
func (a *author) withLearners(ctx context.Context, courses []client.CourseView) []courseRow {
	rows := make([]courseRow, len(courses))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for i := range courses {
		rows[i].Course = courses[i]
		wg.Add(1)
		go func(row *courseRow) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sum, err := a.api.GetAdminCoursesIDProgressSummary(ctx, row.Course.ID, client.GetAdminCoursesIDProgressSummaryParams{})
			if err != nil {
				row.Learners = -1
				return
			}
			row.Learners, row.Finished, row.Percent = sum.Learners, sum.Finished, sum.AveragePercent
		}(&rows[i])
	}
	wg.Wait()
	return rows
}

// teachDashboard is the authoring home: courses by status, the newest
// ones and the kinds of topic.
func (h *Handler) teachDashboard(w http.ResponseWriter, r *http.Request) {
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	ctx := r.Context()
	d := dashboardData{teachPage: a.page(r), Admin: a.admin, Counts: map[string]int64{}, Kinds: topicKinds}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	for _, st := range []string{"", "draft", "published", "archived"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			perPage := int64(1)
			if st == "" {
				perPage = 5
			}
			p, err := a.listCourses(ctx, 1, perPage, "", st)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				firstErr = err
				return
			}
			if st == "" {
				d.Courses = int64(p.Meta.Total)
				d.Recent = a.withLearners(ctx, p.Items)
			} else {
				d.Counts[st] = int64(p.Meta.Total)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		h.apiFailed(w, r, firstErr)
		return
	}
	h.teachRender(w, r, a, http.StatusOK, "teach", a.t.S("teach"), d)
}

type coursesData struct {
	teachPage
	Rows     []courseRow
	Q        string
	Status   string
	Statuses []string
	Page     int64
	Prev     string
	Next     string
	Total    int64
}

var courseStatuses = []string{"draft", "published", "published_unactivated", "archived"}

// teachCourses lists the author's courses with status and learners.
func (h *Handler) teachCourses(w http.ResponseWriter, r *http.Request) {
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	q := r.URL.Query()
	d := coursesData{teachPage: a.page(r), Q: strings.TrimSpace(q.Get("q")), Statuses: courseStatuses, Page: 1}
	if st := q.Get("status"); slices.Contains(courseStatuses, st) {
		d.Status = st
	}
	if n, err := strconv.ParseInt(q.Get("page"), 10, 64); err == nil && n > 1 && n < 10000 {
		d.Page = n
	}
	const perPage = 20
	p, err := a.listCourses(r.Context(), d.Page, perPage, d.Q, d.Status)
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	d.Rows, d.Total = a.withLearners(r.Context(), p.Items), int64(p.Meta.Total)
	link := func(page int64) string {
		v := url.Values{}
		if d.Q != "" {
			v.Set("q", d.Q)
		}
		if d.Status != "" {
			v.Set("status", d.Status)
		}
		v.Set("page", strconv.FormatInt(page, 10))
		return "/teach/courses?" + v.Encode()
	}
	if d.Page > 1 {
		d.Prev = link(d.Page - 1)
	}
	if d.Page*perPage < d.Total {
		d.Next = link(d.Page + 1)
	}
	h.teachRender(w, r, a, http.StatusOK, "teach-courses", a.t.S("courses"), d)
}

// courseFormData is the course create and edit form.
type courseFormData struct {
	teachPage
	New        bool
	Course     client.CourseView
	Categories []client.CategoryRef
	Tutors     []client.UserRef
	Statuses   []string
	Tags       string
	From, To   string
	// Chosen categories and tutors.
	InCategory map[int64]bool
	IsTutor    map[int64]bool
	Errors     map[string]string
	Program    []*teachLesson
	Lessons    int
}

func (h *Handler) teachNewCourse(w http.ResponseWriter, r *http.Request) {
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	h.showCourseForm(w, r, a, http.StatusOK, &courseFormData{New: true, Course: client.CourseView{Status: "draft"}})
}

// showCourseForm renders the create form, or the edit page with the
// course's program, filling in the form's choices.
func (h *Handler) showCourseForm(w http.ResponseWriter, r *http.Request, a *author, status int, d *courseFormData) {
	d.teachPage = a.page(r)
	if len(d.Errors) > 0 && d.Error == "" {
		d.Error = a.t.S("problem")
	}
	ctx := r.Context()
	if d.New {
		f, err := a.api.GetAdminCoursesCreate(ctx)
		if err != nil {
			h.apiFailed(w, r, err)
			return
		}
		d.Categories, d.Tutors, d.Statuses = f.Categories, f.Tutors, f.Statuses
	} else {
		var f *client.CourseEditForm
		var prog *client.AdminProgram
		var ferr, perr error
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); f, ferr = a.api.GetAdminCoursesIDEdit(ctx, d.Course.ID) }()
		go func() { defer wg.Done(); prog, perr = a.api.GetAdminCoursesIDProgram(ctx, d.Course.ID) }()
		wg.Wait()
		if err := errors.Join(ferr, perr); err != nil {
			h.apiFailed(w, r, err)
			return
		}
		if d.Errors == nil {
			d.Course = f.Course
		}
		d.Categories, d.Tutors, d.Statuses = f.Categories, f.Tutors, f.Statuses
		d.Program = teachProgram(d.Course.ID, prog.Lessons, a.t)
		d.Lessons = len(prog.Lessons)
	}
	if len(d.Statuses) == 0 {
		d.Statuses = courseStatuses
	}
	if d.InCategory == nil {
		d.InCategory, d.IsTutor = map[int64]bool{}, map[int64]bool{}
		for _, c := range d.Course.Categories {
			d.InCategory[c.ID] = true
		}
		for _, p := range d.Course.Authors {
			d.IsTutor[p.ID] = true
		}
		d.Tags = strings.Join(d.Course.Tags, ", ")
		d.From, d.To = dateValue(d.Course.ActiveFrom), dateValue(d.Course.ActiveTo)
	}
	title := a.t.S("new_course")
	if !d.New {
		title = d.Course.Title
	}
	h.teachRender(w, r, a, status, "teach-course", title, d)
}

func dateValue(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format("2006-01-02")
}

// courseInput is a course form as posted.
type courseInput struct {
	d     courseFormData
	form  client.PostAdminCoursesIDForm
	image *client.File
}

// readCourseForm reads a posted course form (multipart, with an optional
// image), keeping what was typed for a form shown again.
func readCourseForm(r *http.Request, words teachWords) (*courseInput, bool) {
	if err := r.ParseMultipartForm(maxCourseForm); err != nil {
		if err := r.ParseForm(); err != nil {
			return nil, false
		}
	}
	in := &courseInput{}
	f := r.PostForm
	title, summary, status := strings.TrimSpace(f.Get("title")), strings.TrimSpace(f.Get("summary")), f.Get("status")
	in.d.Course = client.CourseView{Title: title, Summary: summary, Status: status}
	in.d.Tags, in.d.From, in.d.To = f.Get("tags"), f.Get("active_from"), f.Get("active_to")
	in.d.InCategory, in.d.IsTutor, in.d.Errors = map[int64]bool{}, map[int64]bool{}, map[string]string{}
	in.form = client.PostAdminCoursesIDForm{Title: &title, Summary: &summary, Status: &status}
	in.form.Tags = []string{}
	for _, tag := range strings.Split(in.d.Tags, ",") {
		if tag = strings.TrimSpace(tag); tag != "" {
			in.form.Tags = append(in.form.Tags, tag)
		}
	}
	for _, v := range f["categories"] {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			in.form.Categories = append(in.form.Categories, n)
			in.d.InCategory[n] = true
		}
	}
	for _, v := range f["authors"] {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			in.form.Authors = append(in.form.Authors, n)
			in.d.IsTutor[n] = true
		}
	}
	for field, dst := range map[string]**time.Time{"active_from": &in.form.ActiveFrom, "active_to": &in.form.ActiveTo} {
		v := strings.TrimSpace(f.Get(field))
		if v == "" {
			continue
		}
		t, err := time.Parse("2006-01-02", v)
		if err != nil {
			in.d.Errors[field] = words.S("bad_date")
			continue
		}
		*dst = &t
	}
	if r.MultipartForm != nil {
		if fh := r.MultipartForm.File["image"]; len(fh) > 0 && fh[0].Filename != "" {
			file, err := fh[0].Open()
			if err == nil {
				in.image = &client.File{Name: fh[0].Filename, Content: file}
			}
		}
	}
	return in, true
}

// fieldErrors turns an API 422 into messages by form field; false when
// err is not one.
func fieldErrors(err error, into map[string]string) (string, bool) {
	var ae *client.Error
	if !errors.As(err, &ae) || (ae.Status != http.StatusUnprocessableEntity && ae.Status != http.StatusBadRequest &&
		ae.Status != http.StatusRequestEntityTooLarge) {
		return "", false
	}
	for field, msgs := range ae.Errors {
		field = strings.TrimPrefix(field, "body.")
		if i := strings.IndexAny(field, ".["); i > 0 {
			field = field[:i]
		}
		if into[field] != "" {
			into[field] += " "
		}
		into[field] += strings.Join(msgs, " ")
	}
	msg := ae.Message
	for _, p := range ae.Problems {
		msg += " " + p.Message
	}
	return msg, true
}

func (h *Handler) teachCreateCourse(w http.ResponseWriter, r *http.Request) {
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	in, ok := readCourseForm(r, a.t)
	if !ok {
		h.errorPage(w, r, http.StatusBadRequest, a.t.S("failed"), a.t.S("form_unreadable"))
		return
	}
	in.d.New = true
	if len(in.d.Errors) > 0 {
		h.showCourseForm(w, r, a, http.StatusUnprocessableEntity, &in.d)
		return
	}
	f := in.form
	c, err := a.api.PostAdminCourses(r.Context(), client.CourseBody{Title: *f.Title, Summary: f.Summary, Status: f.Status,
		Tags: f.Tags, Categories: f.Categories, Authors: f.Authors, ActiveFrom: f.ActiveFrom, ActiveTo: f.ActiveTo})
	if msg, ok := fieldErrors(err, in.d.Errors); ok {
		in.d.Error = msg
		h.showCourseForm(w, r, a, http.StatusUnprocessableEntity, &in.d)
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	if in.image != nil {
		if _, err := a.api.PostAdminCoursesIDMultipart(r.Context(), c.ID, client.PostAdminCoursesIDForm{Image: in.image}); err != nil {
			in.d.Course.ID, in.d.New = c.ID, false
			if msg, ok := fieldErrors(err, in.d.Errors); ok {
				in.d.Error = msg
				h.showCourseForm(w, r, a, http.StatusUnprocessableEntity, &in.d)
				return
			}
			h.apiFailed(w, r, err)
			return
		}
	}
	http.Redirect(w, r, courseEditURL(c.ID)+"?notice=created", http.StatusSeeOther)
}

func courseEditURL(id int64) string { return "/teach/courses/" + strconv.FormatInt(id, 10) }

// pathID is a positive id of the path, or false (answered 404).
func (h *Handler) pathID(w http.ResponseWriter, r *http.Request, name string) (int64, bool) {
	v := r.PathValue(name)
	n, err := strconv.ParseInt(v, 10, 64)
	if !isID(v) || err != nil || n < 1 {
		h.notFound(w, r)
		return 0, false
	}
	return n, true
}

// teachCourse is the course's edit page: its form and its program.
func (h *Handler) teachCourse(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "course")
	if !ok {
		return
	}
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	h.showCourseForm(w, r, a, http.StatusOK, &courseFormData{Course: client.CourseView{ID: id}})
}

func (h *Handler) teachSaveCourse(w http.ResponseWriter, r *http.Request) {
	id, ok := h.pathID(w, r, "course")
	if !ok {
		return
	}
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	in, ok := readCourseForm(r, a.t)
	if !ok {
		h.errorPage(w, r, http.StatusBadRequest, a.t.S("failed"), a.t.S("form_unreadable"))
		return
	}
	in.d.Course.ID = id
	if len(in.d.Errors) > 0 {
		h.showCourseForm(w, r, a, http.StatusUnprocessableEntity, &in.d)
		return
	}
	in.form.Image = in.image
	// The form lists every category and tutor: none ticked means none.
	if in.form.Categories == nil {
		in.form.Categories = []int64{}
	}
	_, err := a.api.PostAdminCoursesIDMultipart(r.Context(), id, in.form)
	if msg, ok := fieldErrors(err, in.d.Errors); ok {
		in.d.Error = msg
		h.showCourseForm(w, r, a, http.StatusUnprocessableEntity, &in.d)
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, courseEditURL(id)+"?notice=saved", http.StatusSeeOther)
}

// editorAsset serves the Markdown editor's browser build (npm
// tiny-markdown-editor, pinned in package.json).
func (h *Handler) editorAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if h.opts.Editor == "" || (name != "tiny-mde.min.js" && name != "tiny-mde.min.css") {
		h.notFound(w, r)
		return
	}
	w.Header().Set("Cache-Control", "public, max-age=86400")
	http.ServeFile(w, r, strings.TrimSuffix(h.opts.Editor, "/")+"/"+name)
}
