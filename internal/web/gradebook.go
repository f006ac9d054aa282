package web

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/client"
)

// The gradebook pages of tutors and admins: a course's progress table and
// completion chart, one learner's detail, and the course's assignments.
// They read the API's gradebook routes with the signed-in user's token;
// the API decides who may (tutors: the courses they author), and anyone
// it refuses gets this site's 404, as for a course that does not exist.

func (h *Handler) gradebookRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /teach/courses/{course}/progress", h.gradebookPage)
	mux.HandleFunc("GET /teach/courses/{course}/progress/export", h.gradebookExport)
	mux.HandleFunc("GET /teach/courses/{course}/learners", h.learnersPage)
	mux.HandleFunc("POST /teach/courses/{course}/learners", h.csrfForms(16<<10, h.assignLearners))
	mux.HandleFunc("GET /teach/courses/{course}/learners/{user}", h.learnerPage)
	mux.HandleFunc("GET /teach/courses/{course}/learners/{user}/topics/{topic}", h.trackPage)
	mux.HandleFunc("POST /teach/courses/{course}/learners/{user}/topics/{topic}/grade", h.csrfForms(4<<10, h.gradeAnswer))
}

// pageLang is the language of a gradebook page: the first of Polish,
// Chinese or English the browser asks for.
func pageLang(r *http.Request) string {
	for _, part := range strings.Split(r.Header.Get("Accept-Language"), ",") {
		tag, _, _ := strings.Cut(strings.TrimSpace(part), ";")
		switch base, _, _ := strings.Cut(strings.ToLower(tag), "-"); base {
		case "pl", "zh", "en":
			return base
		}
	}
	return "en"
}

func pathID(r *http.Request, name string) (int64, bool) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	return id, err == nil && id > 0
}

// gradebookCall runs fn as the signed-in user; a refusal of the API (401
// after the session ended, 403, 404, 422) answers the page here, and false
// says the page is done.
func (h *Handler) gradebookCall(w http.ResponseWriter, r *http.Request, fn func(api *client.Client) error) bool {
	s := h.requireSession(w, r)
	if s == nil {
		return false
	}
	err := h.userCall(w, r, s, fn)
	switch status := client.StatusOf(err); {
	case err == nil:
		return true
	case status == http.StatusUnauthorized:
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
	case status == http.StatusForbidden || status == http.StatusNotFound || status == http.StatusUnprocessableEntity:
		h.notFound(w, r)
	default:
		h.apiFailed(w, r, err)
	}
	return false
}

// gradebookQuery is the table's state in the page's address.
type gradebookQuery struct {
	Status, Search, OrderBy, Order string
	GroupID, Page                  int64
}

var gradebookOrders = []string{"name", "email", "status", "percent", "score", "seconds", "last_activity"}

func readGradebookQuery(r *http.Request) gradebookQuery {
	q := r.URL.Query()
	g := gradebookQuery{Status: q.Get("status"), Search: strings.TrimSpace(q.Get("q")), OrderBy: q.Get("order_by"), Order: q.Get("order")}
	if g.Status != "planned" && g.Status != "started" && g.Status != "finished" {
		g.Status = ""
	}
	if len(g.Search) > 255 {
		g.Search = g.Search[:255]
	}
	found := false
	for _, o := range gradebookOrders {
		found = found || o == g.OrderBy
	}
	if !found {
		g.OrderBy = "name"
	}
	if g.Order != "desc" {
		g.Order = "asc"
	}
	g.GroupID, _ = strconv.ParseInt(q.Get("group_id"), 10, 64)
	g.GroupID = max(g.GroupID, 0)
	g.Page, _ = strconv.ParseInt(q.Get("page"), 10, 64)
	g.Page = max(g.Page, 1)
	return g
}

// with is the address of the table with some of its state changed.
func (g gradebookQuery) with(base string, change func(*gradebookQuery)) string {
	change(&g)
	v := url.Values{}
	set := func(k, val string) {
		if val != "" {
			v.Set(k, val)
		}
	}
	set("status", g.Status)
	set("q", g.Search)
	set("order_by", g.OrderBy)
	set("order", g.Order)
	if g.GroupID > 0 {
		v.Set("group_id", strconv.FormatInt(g.GroupID, 10))
	}
	if g.Page > 1 {
		v.Set("page", strconv.FormatInt(g.Page, 10))
	}
	if len(v) == 0 {
		return base
	}
	return base + "?" + v.Encode()
}

func (g gradebookQuery) params(page int64) client.GetAdminCoursesIDProgressParams {
	p := client.GetAdminCoursesIDProgressParams{OrderBy: &g.OrderBy, Order: &g.Order, Page: &page,
		PerPage: client.Ptr[int64](gradebookPerPage), WithTopics: client.Ptr(true)}
	if g.Status != "" {
		p.Status = &g.Status
	}
	if g.Search != "" {
		p.Search = &g.Search
	}
	if g.GroupID > 0 {
		p.GroupID = &g.GroupID
	}
	return p
}

const gradebookPerPage = 25

// sortLink is a column header that orders the table.
type sortLink struct {
	Label, URL, Sort string // Sort: the column's aria-sort, "" when not sorted by it
}

type gradebookView struct {
	T        gradebookText
	Course   int64
	Summary  *client.GradebookSummary
	Learners []client.GradebookLearner
	Meta     client.PageMeta
	Query    gradebookQuery
	Columns  []sortLink
	Prev     string
	Next     string
	Export   string
	Chart    chart
	// Groups are the choices of the group filter: every group for whom
	// may list them (admins), else the groups assigned to the course.
	Groups []groupChoice
}

// groupChoice is one option of the group filter.
type groupChoice struct {
	ID   int64
	Name string
}

func (h *Handler) gradebookPage(w http.ResponseWriter, r *http.Request) {
	course, ok := pathID(r, "course")
	if !ok {
		h.notFound(w, r)
		return
	}
	lang := pageLang(r)
	d := gradebookView{T: gradebookTexts[lang], Course: course, Query: readGradebookQuery(r)}
	if !h.gradebookCall(w, r, func(api *client.Client) error {
		// The figures and the chart are the selected group's, as the table.
		sum, err := api.GetAdminCoursesIDProgressSummary(r.Context(), course, client.GetAdminCoursesIDProgressSummaryParams{
			GroupID: d.Query.params(1).GroupID})
		if err != nil {
			return err
		}
		d.Summary = sum
		page, err := api.GetAdminCoursesIDProgress(r.Context(), course, d.Query.params(d.Query.Page))
		if err != nil {
			return err
		}
		d.Learners, d.Meta = page.Items, page.Meta
		d.Groups, err = groupChoices(r, api, course, d.Query.GroupID)
		return err
	}) {
		return
	}
	base := "/teach/courses/" + strconv.FormatInt(course, 10) + "/progress"
	for i, key := range gradebookOrders {
		c := sortLink{Label: d.T.Columns[i]}
		order := "asc"
		if d.Query.OrderBy == key {
			c.Sort = map[string]string{"asc": "ascending", "desc": "descending"}[d.Query.Order]
			if d.Query.Order == "asc" {
				order = "desc"
			}
		}
		c.URL = d.Query.with(base, func(g *gradebookQuery) { g.OrderBy, g.Order, g.Page = key, order, 1 })
		d.Columns = append(d.Columns, c)
	}
	if d.Query.Page > 1 {
		d.Prev = d.Query.with(base, func(g *gradebookQuery) { g.Page-- })
	}
	if int64(d.Meta.LastPage) > d.Query.Page {
		d.Next = d.Query.with(base, func(g *gradebookQuery) { g.Page++ })
	}
	d.Export = d.Query.with(base+"/export", func(g *gradebookQuery) { g.Page = 1 })
	d.Chart = completionChart(d.Summary, d.T)
	h.render(w, r, http.StatusOK, "gradebook", view{Title: d.T.Title + " · " + d.Summary.Title, Lang: lang, SignedIn: true, Data: d})
}

// groupChoices are the groups the filter offers: all the caller may
// list, else (a tutor) those assigned to the course; a group chosen in
// the address that is neither is kept, by its number.
func groupChoices(r *http.Request, api *client.Client, course, chosen int64) ([]groupChoice, error) {
	var out []groupChoice
	groups, err := api.GetAdminUserGroups(r.Context(), client.GetAdminUserGroupsParams{PerPage: client.Ptr[int64](100)})
	switch client.StatusOf(err) {
	case 0:
		for _, g := range groups.Items {
			out = append(out, groupChoice{ID: g.ID, Name: g.Name})
		}
	case http.StatusForbidden:
		access, err := api.GetAdminCoursesIDAccess(r.Context(), course)
		if err != nil {
			return nil, err
		}
		for _, g := range access.Groups {
			out = append(out, groupChoice{ID: g.ID, Name: g.Name})
		}
	default:
		return nil, err
	}
	if chosen > 0 && !slices.ContainsFunc(out, func(g groupChoice) bool { return g.ID == chosen }) {
		out = append(out, groupChoice{ID: chosen, Name: "#" + strconv.FormatInt(chosen, 10)})
	}
	return out, nil
}

// chart is the completion chart: learners who had finished the course by
// each day, drawn as an SVG step line the page shows without script, with
// its words (Desc) and the same figures as a table beside it.
type chart struct {
	Width, Height int
	Points        string
	Max           int
	Desc          string
	Days          []client.CompletionDay
}

func completionChart(s *client.GradebookSummary, t gradebookText) chart {
	c := chart{Width: 600, Height: 160, Max: int(max(s.Learners, 1)), Days: s.Completions}
	if len(s.Completions) == 0 {
		return c
	}
	c.Desc = fmt.Sprintf(t.ChartDescFormat, s.Completions[len(s.Completions)-1].Total, s.Learners,
		s.Completions[0].Date, s.Completions[len(s.Completions)-1].Date)
	first, _ := time.Parse(time.DateOnly, s.Completions[0].Date)
	last, _ := time.Parse(time.DateOnly, s.Completions[len(s.Completions)-1].Date)
	span := max(last.Sub(first).Hours()/24, 1)
	y := func(total int64) float64 {
		return float64(c.Height) - float64(total)*float64(c.Height-10)/float64(c.Max)
	}
	points := []string{fmt.Sprintf("0,%d", c.Height)}
	var prev int64
	for _, day := range s.Completions {
		at, _ := time.Parse(time.DateOnly, day.Date)
		x := at.Sub(first).Hours() / 24 / span * float64(c.Width)
		if len(s.Completions) == 1 {
			x = float64(c.Width) / 2
		}
		// A step: the total holds until the day it grows.
		points = append(points, fmt.Sprintf("%.1f,%.1f", x, y(prev)), fmt.Sprintf("%.1f,%.1f", x, y(day.Total)))
		prev = day.Total
	}
	points = append(points, fmt.Sprintf("%d,%.1f", c.Width, y(prev)))
	c.Points = strings.Join(points, " ")
	return c
}

// gradebookExport passes the API's CSV of the table's learners on.
func (h *Handler) gradebookExport(w http.ResponseWriter, r *http.Request) {
	course, ok := pathID(r, "course")
	if !ok {
		h.notFound(w, r)
		return
	}
	g := readGradebookQuery(r)
	p := g.params(1)
	h.gradebookCall(w, r, func(api *client.Client) error {
		res, err := api.GetAdminCoursesIDProgressExport(r.Context(), course, client.GetAdminCoursesIDProgressExportParams{
			GroupID: p.GroupID, Status: p.Status, Search: p.Search, OrderBy: p.OrderBy, Order: p.Order})
		if err != nil {
			return err
		}
		defer res.Body.Close()
		for _, k := range []string{"Content-Type", "Content-Disposition"} {
			w.Header().Set(k, res.Header.Get(k))
		}
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		_, err = io.Copy(w, res.Body)
		if err != nil {
			h.log.Info("web: gradebook export cut short", "err", err)
		}
		return nil
	})
}

type learnerView struct {
	T      gradebookText
	TT     trackText
	Course int64
	D      *client.GradebookDetail
	Export string
}

func (h *Handler) learnerPage(w http.ResponseWriter, r *http.Request) {
	course, ok1 := pathID(r, "course")
	user, ok2 := pathID(r, "user")
	if !ok1 || !ok2 {
		h.notFound(w, r)
		return
	}
	lang := pageLang(r)
	d := learnerView{T: gradebookTexts[lang], TT: trackTexts[lang], Course: course}
	if !h.gradebookCall(w, r, func(api *client.Client) error {
		var err error
		d.D, err = api.GetAdminCoursesIDProgressID(r.Context(), course, user)
		return err
	}) {
		return
	}
	h.render(w, r, http.StatusOK, "gradebook-learner", view{Title: d.D.Name + " · " + d.D.CourseTitle, Lang: lang, SignedIn: true, Data: d})
}

type learnersView struct {
	T         gradebookText
	Course    int64
	Title     string
	Access    *client.Assignments
	Users     []client.UserRef
	Groups    []client.Group
	Notice    string
	Error     string
	Today     string
	ForGroups bool
}

func (h *Handler) learnersPage(w http.ResponseWriter, r *http.Request) {
	h.renderLearners(w, r, http.StatusOK, "")
}

func (h *Handler) renderLearners(w http.ResponseWriter, r *http.Request, status int, problem string) {
	course, ok := pathID(r, "course")
	if !ok {
		h.notFound(w, r)
		return
	}
	lang := pageLang(r)
	d := learnersView{T: gradebookTexts[lang], Course: course, Error: problem, Today: time.Now().UTC().Format(time.DateOnly)}
	if r.URL.Query().Get("assigned") != "" {
		d.Notice = d.T.Assigned
	}
	if !h.gradebookCall(w, r, func(api *client.Client) error {
		sum, err := api.GetAdminCoursesIDProgressSummary(r.Context(), course, client.GetAdminCoursesIDProgressSummaryParams{})
		if err != nil {
			return err
		}
		d.Title = sum.Title
		if d.Access, err = api.GetAdminCoursesIDAccess(r.Context(), course); err != nil {
			return err
		}
		users, err := api.GetAdminCoursesUsersAssignable(r.Context(), client.GetAdminCoursesUsersAssignableParams{
			CourseID: &course, PerPage: client.Ptr[int64](100)})
		if err != nil {
			return err
		}
		d.Users = users.Items
		// Only admins list groups; a tutor assigns users.
		if groups, err := api.GetAdminUserGroups(r.Context(), client.GetAdminUserGroupsParams{PerPage: client.Ptr[int64](100)}); err == nil {
			d.Groups, d.ForGroups = groups.Items, true
		}
		return nil
	}) {
		return
	}
	h.render(w, r, status, "gradebook-learners", view{Title: d.T.Learners + " · " + d.Title, Lang: lang, SignedIn: true, Data: d})
}

// assignLearners assigns the chosen users and groups until the end date
// (POST /api/admin/courses/{id}/access), then shows the list again.
func (h *Handler) assignLearners(w http.ResponseWriter, r *http.Request) {
	course, ok := pathID(r, "course")
	if !ok {
		h.notFound(w, r)
		return
	}
	t := gradebookTexts[pageLang(r)]
	var end *time.Time
	if v := r.PostFormValue("end_date"); v != "" {
		day, err := time.Parse(time.DateOnly, v)
		if err != nil {
			h.renderLearners(w, r, http.StatusUnprocessableEntity, t.BadDate)
			return
		}
		// Access lasts through the whole of the chosen day (UTC).
		day = day.Add(24 * time.Hour)
		end = &day
	}
	var body client.AssignInputBody
	for _, field := range []struct {
		name string
		into *[]client.GrantBody
	}{{"users", &body.Users}, {"groups", &body.Groups}} {
		for _, v := range r.PostForm[field.name] {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id <= 0 {
				h.renderLearners(w, r, http.StatusUnprocessableEntity, t.Nobody)
				return
			}
			*field.into = append(*field.into, client.GrantBody{ID: id, EndDate: end})
		}
	}
	if len(body.Users)+len(body.Groups) == 0 {
		h.renderLearners(w, r, http.StatusUnprocessableEntity, t.Nobody)
		return
	}
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	err := h.userCall(w, r, s, func(api *client.Client) error {
		_, err := api.PostAdminCoursesIDAccess(r.Context(), course, body)
		return err
	})
	var ae *client.Error
	switch {
	case err == nil:
		http.Redirect(w, r, "/teach/courses/"+strconv.FormatInt(course, 10)+"/learners?assigned=1", http.StatusSeeOther)
	case client.StatusOf(err) == http.StatusUnprocessableEntity && errors.As(err, &ae):
		h.renderLearners(w, r, http.StatusUnprocessableEntity, ae.Message)
	case client.StatusOf(err) == http.StatusForbidden || client.StatusOf(err) == http.StatusNotFound:
		h.notFound(w, r)
	default:
		h.apiFailed(w, r, err)
	}
}

// statementsArgs are a table of xAPI statements on the track page.
type statementsArgs struct {
	ID, Title  string
	T          trackText
	Statements []client.XAPIStatement
}

func trackStatements(id, title string, t trackText, list []client.XAPIStatement) statementsArgs {
	return statementsArgs{ID: id, Title: title, T: t, Statements: list}
}

// trackView is one learner's track in one topic: what the topic's kind
// kept of their work (GET .../progress/{user_id}/topics/{topic_id}).
type trackView struct {
	T      gradebookText
	TT     trackText
	Course int64
	D      *client.TopicTrack
	Notice string
	Error  string
	// Empty is true when the kind kept nothing to show.
	Empty bool
}

func (h *Handler) trackPage(w http.ResponseWriter, r *http.Request) {
	notice := ""
	if r.URL.Query().Get("graded") != "" {
		notice = trackTexts[pageLang(r)].Graded
	}
	h.renderTrack(w, r, http.StatusOK, notice, "")
}

func (h *Handler) renderTrack(w http.ResponseWriter, r *http.Request, status int, notice, problem string) {
	course, ok1 := pathID(r, "course")
	user, ok2 := pathID(r, "user")
	topic, ok3 := pathID(r, "topic")
	if !ok1 || !ok2 || !ok3 {
		h.notFound(w, r)
		return
	}
	lang := pageLang(r)
	d := trackView{T: gradebookTexts[lang], TT: trackTexts[lang], Course: course, Notice: notice, Error: problem}
	if !h.gradebookCall(w, r, func(api *client.Client) error {
		var err error
		d.D, err = api.GetAdminCoursesIDProgressIDTopicsID(r.Context(), course, user, topic)
		return err
	}) {
		return
	}
	d.Empty = len(d.D.QuizAttempts)+len(d.D.ScormScos)+len(d.D.Cmi5Statements)+len(d.D.H5PStatements) == 0
	name := d.D.Name
	if name == "" {
		name = d.D.Email
	}
	h.render(w, r, status, "gradebook-track", view{Title: d.D.Topic.Title + " · " + name, Lang: lang, SignedIn: true, Data: d})
}

// gradeAnswer grades an essay answer of the learner's attempt (POST
// /api/admin/quiz-attempts/{id}/grade), then shows the track again; the
// API's refusal of the score is shown next to the form.
func (h *Handler) gradeAnswer(w http.ResponseWriter, r *http.Request) {
	attempt, err1 := strconv.ParseInt(r.PostFormValue("attempt"), 10, 64)
	question, err2 := strconv.ParseInt(r.PostFormValue("question"), 10, 64)
	score, err3 := strconv.ParseFloat(strings.TrimSpace(r.PostFormValue("score")), 64)
	if err1 != nil || err2 != nil {
		h.notFound(w, r)
		return
	}
	if err3 != nil {
		h.renderTrack(w, r, http.StatusUnprocessableEntity, "", trackTexts[pageLang(r)].BadPoints)
		return
	}
	s := h.requireSession(w, r)
	if s == nil {
		return
	}
	err := h.userCall(w, r, s, func(api *client.Client) error {
		_, err := api.PostAdminQuizAttemptsIDGrade(r.Context(), attempt, client.GradeInputBody{QuestionID: question, Score: score})
		return err
	})
	var ae *client.Error
	switch {
	case err == nil:
		http.Redirect(w, r, r.URL.Path[:len(r.URL.Path)-len("/grade")]+"?graded=1", http.StatusSeeOther)
	case errors.As(err, &ae) && (ae.Status == http.StatusUnprocessableEntity || ae.Status == http.StatusConflict):
		h.renderTrack(w, r, ae.Status, "", ae.Message)
	case client.StatusOf(err) == http.StatusForbidden || client.StatusOf(err) == http.StatusNotFound:
		h.notFound(w, r)
	default:
		h.apiFailed(w, r, err)
	}
}
