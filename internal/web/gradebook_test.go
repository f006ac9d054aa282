package web

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

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

// TestGradebookGroupAndChart: the progress page filters by group, the
// figures, the chart and the export with it; tutors choose among the
// groups assigned to the course, admins among all; the chart says in
// words and in a table who finished on which day, in the page's
// language.
func TestGradebookGroupAndChart(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		ctx := t.Context()
		course, first, _, learner := gradebookCourse(t, s)
		admin := s.env.ClientAs("admin")
		night := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Night class"}))(t).ID
		club := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Chess club"}))(t).ID
		apitest.Must(admin.PostAdminUserGroupsIDMembers(ctx, night, client.MemberInputBody{UserID: learner.ID}))(t)
		other := s.env.NewUser("student")
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: other.ID}},
			Groups: []client.GrantBody{{ID: night}}}))(t)
		s.env.DeliverEvents()
		finish := func(u *apitest.User, topics ...int64) {
			tok, _ := s.env.Login(s.env.Host, u.Email, u.Password)
			for _, topic := range topics {
				s.must(req{method: "POST", path: "/learn/" + id(course) + "/" + id(topic) + "/complete", token: tok}, http.StatusSeeOther)
			}
		}
		day1 := s.env.Clock.Now().UTC().Format(time.DateOnly)
		finish(learner, first+1)
		s.env.Clock.Advance(49 * time.Hour)
		day3 := s.env.Clock.Now().UTC().Format(time.DateOnly)
		finish(other, first, first+1)
		tutorUser := s.env.As("tutor")
		tutor, _ := s.env.Login(s.env.Host, tutorUser.Email, tutorUser.Password)
		base := "/teach/courses/" + id(course) + "/progress"

		r := s.must(req{path: base, token: tutor}, http.StatusOK)
		for _, want := range []string{`data-learners="2"`, `data-finished="2"`, "<polyline points=",
			`aria-labelledby="chart-svg-title chart-svg-desc"`,
			"2 of 2 learners had finished the course, the first on " + day1 + " and the latest on " + day3 + ".",
			`<tr data-day="` + day1 + `"><th scope="row"><time datetime="` + day1 + `">` + day1 + `</time></th><td>1</td><td>1</td></tr>`,
			`<tr data-day="` + day3 + `"><th scope="row"><time datetime="` + day3 + `">` + day3 + `</time></th><td>1</td><td>2</td></tr>`,
			`<option value="` + id(night) + `">Night class</option>`, `data-user="` + id(other.ID) + `"`} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("progress page lacks %q: %s", want, r.body)
			}
		}
		// A tutor cannot list the school's groups: only the course's.
		if strings.Contains(r.text(), "Chess club") {
			t.Error("a tutor is offered a group the course is not assigned to")
		}

		r = s.must(req{path: base + "?group_id=" + id(night), token: tutor}, http.StatusOK)
		for _, want := range []string{`data-learners="1"`, `<option value="` + id(night) + `" selected>Night class</option>`,
			`data-user="` + id(learner.ID) + `"`, "1 of 1 learners had finished the course, the first on " + day1 + " and the latest on " + day1 + ".",
			`href="` + base + `/export?group_id=` + id(night) + `&amp;order=asc&amp;order_by=name"`} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("filtered page lacks %q: %s", want, r.body)
			}
		}
		if strings.Contains(r.text(), `data-user="`+id(other.ID)+`"`) || strings.Contains(r.text(), `data-day="`+day3+`"`) {
			t.Fatalf("the group's page shows who is not in it: %s", r.body)
		}
		// Sorting keeps the group.
		if !strings.Contains(r.text(), `group_id=`+id(night)+`&amp;order=desc&amp;order_by=name`) {
			t.Errorf("a sort link loses the group: %s", r.body)
		}
		csv := s.must(req{path: base + "/export?group_id=" + id(night), token: tutor}, http.StatusOK)
		if !strings.Contains(csv.text(), learner.Email) || strings.Contains(csv.text(), other.Email) {
			t.Errorf("the group's export: %s", csv.body)
		}

		// An admin chooses among every group.
		adminToken, _ := s.env.Login(s.env.Host, "admin@"+s.env.Host, "admin-password")
		r = s.must(req{path: base + "?group_id=" + id(club), token: adminToken}, http.StatusOK)
		if !strings.Contains(r.text(), `<option value="`+id(club)+`" selected>Chess club</option>`) ||
			!strings.Contains(r.text(), `<option value="`+id(night)+`">Night class</option>`) || !strings.Contains(r.text(), `data-learners="0"`) ||
			!strings.Contains(r.text(), "No learner has finished the course yet.") {
			t.Errorf("admin's page of an empty group: %s", r.body)
		}

		r = s.must(req{path: base, token: tutor, headers: map[string]string{"Accept-Language": "pl"}}, http.StatusOK)
		if !strings.Contains(r.text(), "Kurs ukończyło 2 z 2 uczestników") || !strings.Contains(r.text(), "Każda grupa") {
			t.Errorf("Polish chart: %s", r.body)
		}
		r = s.must(req{path: base, token: tutor, headers: map[string]string{"Accept-Language": "zh-CN"}}, http.StatusOK)
		if !strings.Contains(r.text(), "共有 2 名学员（总数 2）完成了课程") || !strings.Contains(r.text(), "以表格查看图表") {
			t.Errorf("Chinese chart: %s", r.body)
		}
	})
}

// TestGradebookWordsComplete: every word of the gradebook pages exists in
// English, Polish and Chinese.
func TestGradebookWordsComplete(t *testing.T) {
	for _, lang := range []string{"en", "pl", "zh"} {
		words, ok := gradebookTexts[lang]
		if !ok {
			t.Fatalf("no %s words", lang)
		}
		v := reflect.ValueOf(words)
		for i := range v.NumField() {
			f := v.Field(i)
			if (f.Kind() == reflect.String && f.String() == "") || (f.Kind() == reflect.Slice && f.Len() != len(gradebookOrders)) {
				t.Errorf("%s: %s is missing", lang, v.Type().Field(i).Name)
			}
		}
		// The words of a learner's track in one topic.
		tv := reflect.ValueOf(trackTexts[lang])
		for i := range tv.NumField() {
			if tv.Field(i).String() == "" {
				t.Errorf("%s: track word %s is missing", lang, tv.Type().Field(i).Name)
			}
		}
	}
}

// trackedCourse is gradebookCourse with a lesson of a quiz, a SCORM, a
// cmi5 and an H5P topic in which the learner left a track.
func trackedCourse(t *testing.T, s *stack) (course int64, tutor string, learner *apitest.User, tr apitest.Tracked) {
	t.Helper()
	course, _, tutor, learner = gradebookCourse(t, s)
	lesson := apitest.Must(s.env.Client("", tutor).PostAdminLessons(t.Context(), client.CreateLessonInputBody{CourseID: course,
		Title: "Kiln"}))(t).ID
	return course, tutor, learner, s.env.TrackedTopics(t, tutor, lesson, learner)
}

// TestGradebookTrackPages: the learner's page links each tracked topic to
// its track, which shows the quiz attempt's answers against the right
// ones, the SCO's runtime data, the cmi5 and H5P statements, in three
// languages; the tutor grades the essay there; the learner, another
// tutor and strangers find nothing.
func TestGradebookTrackPages(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		course, tutor, learner, tr := trackedCourse(t, s)
		base := "/teach/courses/" + id(course) + "/learners/" + id(learner.ID)
		r := s.must(req{path: base, token: tutor}, http.StatusOK)
		for _, topic := range []int64{tr.Quiz, tr.SCORM, tr.CMI5, tr.H5P} {
			if !strings.Contains(r.text(), `href="`+base+`/topics/`+id(topic)+`">Open the track`) {
				t.Fatalf("learner page lacks the track of %d: %s", topic, r.body)
			}
		}
		// The tracks summed up show their numbers (a template writes a
		// pointer's address if it prints the pointer).
		if !strings.Contains(r.text(), "SCORM: incomplete, 70") || !strings.Contains(r.text(), "H5P: 1 statements, 3/4") ||
			!strings.Contains(r.text(), "1 attempts, best 33%") || strings.Contains(r.text(), "%!") {
			t.Errorf("tracks summed up: %s", r.body)
		}
		page := func(topic int64, lang string) string {
			t.Helper()
			return s.must(req{path: base + "/topics/" + id(topic), token: tutor, headers: map[string]string{"Accept-Language": lang}},
				http.StatusOK).text()
		}
		for topic, want := range map[int64][]string{
			tr.Quiz: {"Attempt 1", "3 of 3 answered, 1 right", "an answer waits for grading",
				"<th scope=\"row\">Which clay is whitest?</th>", "<td>Terracotta</td>", "<td>Porcelain</td>", "<td>true</td>",
				"Press and fold.", "Points for this answer, 0 to 1"},
			tr.SCORM: {"SCORM runtime data", `data-completion="incomplete"`, "70", "page-3", "0:01:30", "6 characters of suspend data",
				`<tr data-interaction="par-1">`, "<td>wrong</td>"},
			tr.CMI5: {"cmi5 statements", `data-verb="http://adlnet.gov/expapi/verbs/completed"`, "initialized", "Duration PT3M"},
			tr.H5P:  {"H5P results", "Pictures", "Score 3/4", "Duration PT42S"},
		} {
			text := page(topic, "en")
			for _, w := range want {
				if !strings.Contains(text, w) {
					t.Fatalf("track of %d lacks %q: %s", topic, w, text)
				}
			}
		}
		if text := page(tr.Quiz, "pl"); !strings.Contains(text, "Podejście 1") || !strings.Contains(text, "<td>prawda</td>") {
			t.Errorf("Polish track: %s", text)
		}
		if text := page(tr.SCORM, "zh-CN"); !strings.Contains(text, "SCORM 运行数据") || !strings.Contains(text, "挂起数据 6 个字符") {
			t.Errorf("Chinese track: %s", text)
		}

		// The essay graded from the page.
		q := apitest.Must(s.env.Client("", tutor).GetAdminCoursesIDProgressIDTopicsID(t.Context(), course, learner.ID, tr.Quiz))(t)
		a := q.QuizAttempts[0]
		grade := url.Values{"attempt": {id(a.ID)}, "question": {id(a.Questions[2].QuestionID)}}
		gradePath := base + "/topics/" + id(tr.Quiz) + "/grade"
		grade.Set("score", "5")
		if r := s.must(req{method: "POST", path: gradePath, token: tutor, form: grade}, http.StatusUnprocessableEntity); !strings.Contains(r.text(), "The score must be from 0 to 1.") {
			t.Errorf("a score over the points: %s", r.body)
		}
		grade.Set("score", "one")
		s.must(req{method: "POST", path: gradePath, token: tutor, form: grade}, http.StatusUnprocessableEntity)
		grade.Set("score", "1")
		s.must(req{method: "POST", path: gradePath, token: tutor, form: grade, noCSRF: true}, http.StatusForbidden)
		s.must(req{method: "POST", path: gradePath, token: learner.Token, form: grade}, http.StatusNotFound)
		if r := s.must(req{method: "POST", path: gradePath, token: tutor, form: grade}, http.StatusSeeOther); r.header.Get("Location") != base+"/topics/"+id(tr.Quiz)+"?graded=1" {
			t.Fatalf("after grading: %v", r.header)
		}
		if text := s.must(req{path: base + "/topics/" + id(tr.Quiz) + "?graded=1", token: tutor}, http.StatusOK).text(); !strings.Contains(text, "Grade saved.") ||
			!strings.Contains(text, "3 of 3 answered, 2 right") || strings.Contains(text, "an answer waits for grading") {
			t.Errorf("graded track: %s", text)
		}

		for _, who := range []string{learner.Token, s.env.NewUser("tutor").Token, s.env.NewUser("student").Token} {
			s.must(req{path: base + "/topics/" + id(tr.SCORM), token: who}, http.StatusNotFound)
		}
		s.must(req{path: base + "/topics/" + id(tr.SCORM), token: s.env.As("admin").Token}, http.StatusOK)
		s.must(req{path: base + "/topics/999999", token: tutor}, http.StatusNotFound)
	})
}
