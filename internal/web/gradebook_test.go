package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// gradebookCourse is a tutor's published course of two rich text topics
// with one learner assigned, who completed the first topic.
func gradebookCourse(t *testing.T, s *stack) (course, first int64, tutor string, learner *apitest.User) {
	t.Helper()
	ctx := t.Context()
	tutor = s.env.As("tutor").Token
	c := s.env.Client("", tutor)
	course = apitest.Must(c.PostAdminCourses(ctx, client.CourseBody{Title: "Pottery", Status: client.Ptr("published")}))(t).ID
	lesson := apitest.Must(c.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Clay"}))(t).ID
	for i, title := range []string{"Wedging", "Centering"} {
		id := apitest.Must(c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: title,
			Topicable: richTextClass, Markdown: client.Ptr("Press and fold.")}))(t).ID
		if i == 0 {
			first = id
		}
	}
	learner = s.env.NewUser("student")
	apitest.Must(c.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: learner.ID}}}))(t)
	s.env.DeliverEvents()
	s.must(req{method: "POST", path: "/learn/" + id(course) + "/" + id(first) + "/complete", token: learner.Token}, http.StatusSeeOther)
	return course, first, tutor, learner
}

// A tutor reads the progress table of a course they author in three
// languages, sorts and filters it, exports it, opens a learner and
// assigns another; learners, other tutors and strangers find nothing.
func TestGradebookPages(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		course, first, tutor, learner := gradebookCourse(t, s)
		base := "/teach/courses/" + id(course)

		r := s.must(req{path: base + "/progress", token: tutor}, http.StatusOK)
		for _, want := range []string{"Progress: Pottery", `data-user="` + id(learner.ID) + `" data-status="started"`,
			`data-topic="` + id(first) + `" data-topic-status="1"`, "Wedging", "Centering", learner.Email, "50%",
			`href="` + base + `/progress/export?order=asc&amp;order_by=name"`, `aria-sort="ascending"`,
			"No learner has finished the course yet."} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("progress page lacks %q: %s", want, r.body)
			}
		}
		for lang, want := range map[string]string{"pl-PL,pl;q=0.9": "Postępy: Pottery", "zh-CN": "学习进度: Pottery"} {
			r := s.must(req{path: base + "/progress", token: tutor, headers: map[string]string{"Accept-Language": lang}}, http.StatusOK)
			if !strings.Contains(r.text(), want) || !strings.Contains(r.text(), `<html lang="`+lang[:2]+`"`) {
				t.Errorf("%s page lacks %q", lang, want)
			}
		}
		if r := s.must(req{path: base + "/progress?status=finished&order_by=percent&order=desc", token: tutor}, http.StatusOK); strings.Contains(r.text(), `data-user="`) ||
			!strings.Contains(r.text(), "No learner matches.") {
			t.Errorf("the filter keeps a learner who did not finish: %s", r.body)
		}

		if r := s.must(req{path: base + "/progress?order_by=percent&order=desc", token: tutor}, http.StatusOK); !strings.Contains(r.text(), `aria-sort="descending"`) {
			t.Error("the column the table is sorted by is not marked")
		}
		csv := s.must(req{path: base + "/progress/export?status=started", token: tutor}, http.StatusOK)
		if csv.header.Get("Content-Type") != "text/csv; charset=utf-8" || !strings.Contains(csv.text(), learner.Email) ||
			!strings.Contains(csv.header.Get("Content-Disposition"), "attachment") {
			t.Errorf("export: %v %s", csv.header, csv.body)
		}

		r = s.must(req{path: base + "/learners/" + id(learner.ID), token: tutor}, http.StatusOK)
		if !strings.Contains(r.text(), `data-topic="`+id(first)+`" data-topic-status="1"`) || !strings.Contains(r.text(), "richtext") {
			t.Errorf("learner page: %s", r.body)
		}

		// Assigning another learner until an end date, through the form.
		other := s.env.NewUser("student")
		r = s.must(req{path: base + "/learners", token: tutor}, http.StatusOK)
		if !strings.Contains(r.text(), `<option value="`+id(other.ID)+`">`) || !strings.Contains(r.text(), `data-user="`+id(learner.ID)+`"`) ||
			strings.Contains(r.text(), `name="groups"`) {
			t.Fatalf("learners page: %s", r.body)
		}
		s.must(req{method: "POST", path: base + "/learners", token: tutor, noCSRF: true,
			form: url.Values{"users": {id(other.ID)}}}, http.StatusForbidden)
		s.must(req{method: "POST", path: base + "/learners", token: tutor, form: url.Values{"end_date": {"2099-01-31"}}},
			http.StatusUnprocessableEntity)
		s.must(req{method: "POST", path: base + "/learners", token: tutor,
			form: url.Values{"users": {id(other.ID)}, "end_date": {"2099-01-31"}}}, http.StatusSeeOther)
		r = s.must(req{path: base + "/learners?assigned=1", token: tutor}, http.StatusOK)
		if !strings.Contains(r.text(), `data-user="`+id(other.ID)+`"`) || !strings.Contains(r.text(), "2099-02-01 00:00") ||
			!strings.Contains(r.text(), "Access assigned.") {
			t.Errorf("after assigning: %s", r.body)
		}
		// An admin may assign groups too.
		if r := s.must(req{path: base + "/learners", token: s.env.As("admin").Token}, http.StatusOK); !strings.Contains(r.text(), `name="groups"`) {
			t.Error("the admin's form has no groups")
		}

		for _, path := range []string{"/progress", "/progress/export", "/learners", "/learners/" + id(learner.ID)} {
			s.must(req{path: base + path, token: learner.Token}, http.StatusNotFound)
			s.must(req{path: base + path, token: s.env.NewUser("tutor").Token}, http.StatusNotFound)
			if r := s.must(req{path: base + path}, http.StatusSeeOther); !strings.HasPrefix(r.header.Get("Location"), "/login?next=") {
				t.Errorf("anonymous %s: %v", path, r.header)
			}
		}
		s.must(req{method: "POST", path: base + "/learners", token: learner.Token, form: url.Values{"users": {id(other.ID)}}}, http.StatusNotFound)
		s.must(req{path: "/teach/courses/999999/progress", token: tutor}, http.StatusNotFound)
		s.must(req{path: base + "/learners/" + id(s.env.NewUser("student").ID), token: tutor}, http.StatusNotFound)

		// Once the learner finishes, the chart draws the completion.
		s.must(req{method: "POST", path: "/learn/" + id(course) + "/" + id(first+1) + "/complete", token: learner.Token}, http.StatusSeeOther)
		r = s.must(req{path: base + "/progress", token: tutor}, http.StatusOK)
		if !strings.Contains(r.text(), "<polyline points=") || !strings.Contains(r.text(), `data-finished="1"`) {
			t.Errorf("no chart after a completion: %s", r.body)
		}
	})
}
