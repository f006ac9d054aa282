package reports_test

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

const richText = `Lms\TopicTypes\Models\TopicContent\RichText`

// school is a course a tutor authors with two rich text topics, and three
// learners: one assigned directly who finished, two through a group, one
// of whom completed the first topic.
type school struct {
	course, group   int64
	topics          []int64
	tutor           *client.Client
	done, half, new *apitest.User
}

func newSchool(t *testing.T, env *apitest.Env) school {
	t.Helper()
	ctx := t.Context()
	s := school{tutor: env.ClientAs("tutor"), done: env.As("student"), half: env.NewUser("student"), new: env.NewUser("student")}
	s.course = apitest.Must(s.tutor.PostAdminCourses(ctx, client.CourseBody{Title: "Gradebook", Status: client.Ptr("published")}))(t).ID
	lesson := apitest.Must(s.tutor.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "First", CourseID: s.course}))(t).ID
	for _, title := range []string{"Read", "+Extra"} {
		s.topics = append(s.topics, apitest.Must(s.tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson,
			Title: title, Topicable: richText, Markdown: client.Ptr("Text.")}))(t).ID)
	}
	admin := env.ClientAs("admin")
	s.group = apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Class"}))(t).ID
	for _, u := range []*apitest.User{s.half, s.new} {
		apitest.Must(admin.PostAdminUserGroupsIDMembers(ctx, s.group, client.MemberInputBody{UserID: u.ID}))(t)
	}
	apitest.Must(s.tutor.PostAdminCoursesIDAccess(ctx, s.course, client.AssignInputBody{
		Users: []client.GrantBody{{ID: s.done.ID}}, Groups: []client.GrantBody{{ID: s.group}}}))(t)
	env.DeliverEvents()
	complete := func(u *apitest.User, topics ...int64) {
		var writes []client.ProgressWrite
		for _, id := range topics {
			writes = append(writes, client.ProgressWrite{TopicID: id, Status: 1})
		}
		apitest.Must(env.UserClient(u).PatchCoursesProgressID(ctx, s.course, client.WriteInputBody{Progress: writes}))(t)
	}
	complete(s.done, s.topics...)
	complete(s.half, s.topics[0])
	return s
}

func ids(items []client.GradebookLearner) []int64 {
	out := make([]int64, len(items))
	for i, l := range items {
		out[i] = l.UserID
	}
	return out
}

func TestGradebookPermissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		s := newSchool(t, env)
		list := func(c *client.Client) error {
			_, err := c.GetAdminCoursesIDProgress(ctx, s.course, client.GetAdminCoursesIDProgressParams{})
			return err
		}
		detail := func(c *client.Client) error {
			_, err := c.GetAdminCoursesIDProgressID(ctx, s.course, s.half.ID)
			return err
		}
		summary := func(c *client.Client) error {
			_, err := c.GetAdminCoursesIDProgressSummary(ctx, s.course, client.GetAdminCoursesIDProgressSummaryParams{})
			return err
		}
		token := func(owner *apitest.User, scopes ...string) *client.Client {
			created := apitest.Must(env.UserClient(owner).PostAuthTokens(ctx, client.CreateInputBody{Name: "gradebook", Scopes: scopes}))(t)
			return env.Client("", created.Token)
		}
		otherTutor := env.NewUser("tutor")
		other := env.As("other-admin")
		for _, call := range []func(*client.Client) error{list, detail, summary} {
			apitest.OK(t, call(env.ClientAs("admin")))
			apitest.OK(t, call(s.tutor))
			apitest.OK(t, call(token(env.As("tutor"), "reports:read")))
			apitest.OK(t, call(token(env.As("admin"), "reports:read")))
			apitest.Refused(t, call(env.UserClient(otherTutor)), 403)
			apitest.Refused(t, call(env.ClientAs("student")), 403)
			apitest.Refused(t, call(env.Client("", "")), 401)
			apitest.Refused(t, call(token(env.As("tutor"), "courses:read", "users:read", "progress:read")), 403)
			// The other tenant's admin token fails here by construction, and
			// on its own tenant the course does not exist.
			apitest.Refused(t, call(env.Client("", other.Token)), 401)
			apitest.Refused(t, call(env.Client("other.test", other.Token)), 404)
		}
		// A student's scoped token with the scope still holds no permission.
		apitest.Refused(t, list(token(env.As("student"), "reports:read")), 403)
		// A user who is no learner of the course is not found in it.
		stranger := env.NewUser("student")
		_, err := s.tutor.GetAdminCoursesIDProgressID(ctx, s.course, stranger.ID)
		apitest.Refused(t, err, 404)
		_, err = s.tutor.GetAdminCoursesIDProgress(ctx, 999999, client.GetAdminCoursesIDProgressParams{})
		apitest.Refused(t, err, 404)
		exports := map[string]func(*client.Client) (*http.Response, error){
			"course export": func(c *client.Client) (*http.Response, error) {
				return c.GetAdminCoursesIDProgressExport(ctx, s.course, client.GetAdminCoursesIDProgressExportParams{})
			},
			"learner export": func(c *client.Client) (*http.Response, error) {
				return c.GetAdminCoursesIDProgressIDExport(ctx, s.course, s.half.ID)
			},
		}
		for name, export := range exports {
			for _, c := range []struct {
				who  string
				c    *client.Client
				want int
			}{{"student", env.ClientAs("student"), 403}, {"other tutor", env.UserClient(otherTutor), 403},
				{"anonymous", env.Client("", ""), 401}, {"tutor", s.tutor, 200}} {
				if got := status(export(c.c)); got != c.want {
					t.Errorf("%s as %s: %d, want %d", name, c.who, got, c.want)
				}
			}
		}
	})
}

func TestGradebookList(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		s := newSchool(t, env)
		get := func(p client.GetAdminCoursesIDProgressParams) *client.Page[client.GradebookLearner] {
			t.Helper()
			return apitest.Must(s.tutor.GetAdminCoursesIDProgress(ctx, s.course, p))(t)
		}
		all := get(client.GetAdminCoursesIDProgressParams{OrderBy: client.Ptr("percent"), Order: client.Ptr("desc"), WithTopics: client.Ptr(true)})
		if got, want := ids(all.Items), []int64{s.done.ID, s.half.ID, s.new.ID}; !slices.Equal(got, want) || all.Meta.Total != 3 {
			t.Fatalf("by percent: %v (total %d), want %v", got, all.Meta.Total, want)
		}
		done, half, fresh := all.Items[0], all.Items[1], all.Items[2]
		if done.Status != "finished" || done.Percent != 100 || done.FinishedAt == nil || done.Email != s.done.Email ||
			done.LastActivityAt == nil || done.TotalTopics != 2 {
			t.Errorf("finished learner: %+v", done)
		}
		if half.Status != "started" || half.Percent != 50 || half.FinishedTopics != 1 || half.FinishedAt != nil {
			t.Errorf("started learner: %+v", half)
		}
		if fresh.Status != "planned" || fresh.Percent != 0 || fresh.StartedAt != nil || fresh.LastActivityAt != nil {
			t.Errorf("planned learner: %+v", fresh)
		}
		if len(half.Topics) != 2 || half.Topics[0].TopicID != s.topics[0] || half.Topics[0].Status != 1 || half.Topics[1].Status != 0 {
			t.Errorf("topics of the started learner: %+v", half.Topics)
		}
		if plain := get(client.GetAdminCoursesIDProgressParams{}); len(plain.Items[0].Topics) != 0 {
			t.Errorf("topics without with_topics: %+v", plain.Items[0].Topics)
		}

		page1 := get(client.GetAdminCoursesIDProgressParams{OrderBy: client.Ptr("percent"), PerPage: client.Ptr[int64](2)})
		page2 := get(client.GetAdminCoursesIDProgressParams{OrderBy: client.Ptr("percent"), PerPage: client.Ptr[int64](2), Page: client.Ptr[int64](2)})
		if got := append(ids(page1.Items), ids(page2.Items)...); !slices.Equal(got, []int64{s.new.ID, s.half.ID, s.done.ID}) ||
			page1.Meta.LastPage != 2 || page1.Meta.Total != 3 || page2.Meta.CurrentPage != 2 || page1.Meta.PerPage != 2 {
			t.Errorf("pages: %v, meta %+v %+v", got, page1.Meta, page2.Meta)
		}

		for _, c := range []struct {
			name string
			p    client.GetAdminCoursesIDProgressParams
			want []int64
		}{
			{"group", client.GetAdminCoursesIDProgressParams{GroupID: &s.group, OrderBy: client.Ptr("user_id")}, []int64{s.half.ID, s.new.ID}},
			{"finished", client.GetAdminCoursesIDProgressParams{Status: client.Ptr("finished")}, []int64{s.done.ID}},
			{"planned", client.GetAdminCoursesIDProgressParams{Status: client.Ptr("planned")}, []int64{s.new.ID}},
			{"search", client.GetAdminCoursesIDProgressParams{Search: client.Ptr(strings.ToUpper(strings.Split(s.half.Email, "@")[0]))}, []int64{s.half.ID}},
			{"last activity", client.GetAdminCoursesIDProgressParams{OrderBy: client.Ptr("last_activity"), Order: client.Ptr("desc"), GroupID: &s.group},
				[]int64{s.half.ID, s.new.ID}},
		} {
			if got := ids(get(c.p).Items); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		_, err := s.tutor.GetAdminCoursesIDProgress(ctx, s.course, client.GetAdminCoursesIDProgressParams{OrderBy: client.Ptr("password")})
		apitest.Refused(t, err, 422)
		_, err = s.tutor.GetAdminCoursesIDProgress(ctx, s.course, client.GetAdminCoursesIDProgressParams{PerPage: client.Ptr[int64](101)})
		apitest.Refused(t, err, 422)

		sum := apitest.Must(s.tutor.GetAdminCoursesIDProgressSummary(ctx, s.course, client.GetAdminCoursesIDProgressSummaryParams{}))(t)
		if sum.Learners != 3 || sum.Planned != 1 || sum.Started != 1 || sum.Finished != 1 || sum.AveragePercent != 50 ||
			len(sum.Topics) != 2 || sum.Topics[1].Title != "+Extra" || sum.Topics[0].Kind != "richtext" ||
			len(sum.Completions) != 1 || sum.Completions[0].Total != 1 || sum.Completions[0].Finished != 1 {
			t.Errorf("summary: %+v", sum)
		}
		group := apitest.Must(s.tutor.GetAdminCoursesIDProgressSummary(ctx, s.course, client.GetAdminCoursesIDProgressSummaryParams{GroupID: &s.group}))(t)
		if group.Learners != 2 || group.Finished != 0 || len(group.Completions) != 0 {
			t.Errorf("summary of the group: %+v", group)
		}

		d := apitest.Must(s.tutor.GetAdminCoursesIDProgressID(ctx, s.course, s.half.ID))(t)
		if d.UserID != s.half.ID || d.Status != "started" || d.CourseTitle != "Gradebook" || len(d.Topics) != 2 ||
			d.Topics[0].Status != 1 || d.Topics[0].FinishedAt == nil || d.Topics[0].LessonTitle != "First" || d.Topics[1].Status != 0 {
			t.Errorf("detail: %+v", d)
		}
	})
}

// status is the status of a client call's answer, which the client
// takes only when it is the documented 200; it closes the answer.
func status(res *http.Response, err error) int {
	if err != nil {
		return client.StatusOf(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// readBody reads and closes an answer that is not the JSON envelope.
func readBody(t *testing.T, res *http.Response) []byte {
	t.Helper()
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// readCSV checks a CSV answer's headers and parses its rows.
func readCSV(t *testing.T, res *http.Response) [][]string {
	t.Helper()
	raw := readBody(t, res)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment; filename=") ||
		res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("CSV answer %d %v", res.StatusCode, res.Header)
	}
	body, ok := bytes.CutPrefix(raw, []byte("\ufeff"))
	if !ok || !bytes.Contains(body, []byte("\r\n")) {
		t.Fatalf("CSV without a byte order mark or CRLF: %q", raw)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestGradebookCSV(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		s := newSchool(t, env)
		// A learner's own name is text they choose: a formula in it must
		// reach a spreadsheet as text, and a comma and a quote escaped.
		apitest.Must(env.UserClient(s.half).PutProfileMe(ctx, client.ProfileBody{FirstName: client.Ptr(`=HYPERLINK("x"),`),
			LastName: client.Ptr("Doe")}))(t)
		export := func(p client.GetAdminCoursesIDProgressExportParams) *http.Response {
			t.Helper()
			return apitest.Must(s.tutor.GetAdminCoursesIDProgressExport(ctx, s.course, p))(t)
		}
		rows := readCSV(t, export(client.GetAdminCoursesIDProgressExportParams{OrderBy: client.Ptr("percent"), Order: client.Ptr("desc")}))
		header := rows[0]
		if len(rows) != 4 || header[0] != "user_id" || header[3] != "status" || header[len(header)-2] != "First / Read" ||
			header[len(header)-1] != "First / +Extra" {
			t.Fatalf("course CSV: %q", rows)
		}
		if r := rows[1]; r[0] != strconv.FormatInt(s.done.ID, 10) || r[3] != "finished" || r[4] != "100" ||
			r[len(r)-1] != "complete" {
			t.Errorf("finished row: %q", r)
		}
		if r := rows[2]; r[1] != `'=HYPERLINK("x"), Doe` || r[3] != "started" || r[len(r)-2] != "complete" || r[len(r)-1] != "incomplete" {
			t.Errorf("started row: %q", r)
		}
		if !bytes.Contains(readBody(t, export(client.GetAdminCoursesIDProgressExportParams{Status: client.Ptr("started")})),
			[]byte(`"'=HYPERLINK(""x""), Doe"`)) {
			t.Error("the name is not quoted as RFC 4180 says")
		}
		if filtered := readCSV(t, export(client.GetAdminCoursesIDProgressExportParams{Status: client.Ptr("planned")})); len(filtered) != 2 {
			t.Errorf("filtered export: %q", filtered)
		}

		one := readCSV(t, apitest.Must(env.ClientAs("admin").GetAdminCoursesIDProgressIDExport(ctx, s.course, s.half.ID))(t))
		if len(one) != 3 || one[0][0] != "topic_id" || one[1][1] != "First" || one[1][2] != "Read" || one[1][4] != "complete" ||
			one[2][2] != "'+Extra" || one[2][4] != "incomplete" || one[1][3] != "richtext" {
			t.Errorf("learner CSV: %q", one)
		}
	})
}

func TestGradebookTracks(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		s := newSchool(t, env)
		lesson := apitest.Must(s.tutor.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "Second", CourseID: s.course}))(t).ID
		project := apitest.Must(s.tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Build",
			Topicable: `Lms\TopicTypeProject\Models\Project`, Value: map[string]any{"instructions": "Upload your program."}}))(t).ID
		apitest.Must(env.UserClient(s.half).PostTopicsIDProject(ctx, project, client.PostTopicsIDProjectForm{
			File: &client.File{Name: "main.txt", Content: strings.NewReader("package main\n")}}))(t)

		d := apitest.Must(s.tutor.GetAdminCoursesIDProgressID(ctx, s.course, s.half.ID))(t)
		if len(d.Topics) != 3 || d.Topics[2].ID != project || d.Topics[2].Kind != "project" || d.Topics[2].Status != 1 {
			t.Fatalf("topics: %+v", d.Topics)
		}
		pr := d.Topics[2].Tracks.Project
		if pr == nil || len(pr.Submissions) != 1 || pr.Submissions[0].Name != "main.txt" || pr.Submissions[0].Size != 13 {
			t.Fatalf("project track: %+v", d.Topics[2].Tracks)
		}
		if d.Topics[0].Tracks.Project != nil || d.Topics[0].Tracks.Quiz != nil {
			t.Errorf("a rich text topic has tracks: %+v", d.Topics[0].Tracks)
		}
		// The link is signed: it downloads without a token, fetched raw
		// as a browser follows it.
		if res := env.Do(apitest.Request{Method: "GET", Path: pr.Submissions[0].URL}); res.Status != 200 || string(res.Body) != "package main\n" {
			t.Errorf("download: %d %q", res.Status, res.Body)
		}
		one := readCSV(t, apitest.Must(s.tutor.GetAdminCoursesIDProgressIDExport(ctx, s.course, s.half.ID))(t))
		if len(one) != 4 || one[3][len(one[3])-1] != "project: 1 files (main.txt)" {
			t.Errorf("learner CSV: %q", one)
		}
	})
}

// TestTopicTracks: one learner's work in a quiz, a SCORM, a cmi5 and an
// H5P topic reads in full for the course's tutor, an admin and a token
// with reports:read; the learner themself, another learner and another
// tutor are refused, and a topic of another course or a user who is no
// learner is not found.
func TestTopicTracks(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		s := newSchool(t, env)
		lesson := apitest.Must(s.tutor.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "Tracked", CourseID: s.course}))(t).ID
		tr := env.TrackedTopics(t, env.As("tutor").Token, lesson, s.half)
		get := func(c *client.Client, user, topic int64) (*client.TopicTrack, error) {
			return c.GetAdminCoursesIDProgressIDTopicsID(ctx, s.course, user, topic)
		}

		q := apitest.Must(get(s.tutor, s.half.ID, tr.Quiz))(t)
		if q.UserID != s.half.ID || q.Topic.ID != tr.Quiz || q.Topic.Kind != "quiz" || len(q.QuizAttempts) != 1 ||
			len(q.ScormScos) != 0 || len(q.Cmi5Statements) != 0 || len(q.H5PStatements) != 0 {
			t.Fatalf("quiz track: %+v", q)
		}
		a := q.QuizAttempts[0]
		if a.Number != 1 || a.EndedAt == nil || !a.PendingGrading || a.Answered != 3 || a.Right != 1 || a.Score != 1 ||
			a.MaxScore != 3 || len(a.Questions) != 3 {
			t.Fatalf("attempt: %+v", a)
		}
		tf, mc, essay := a.Questions[0], a.Questions[1], a.Questions[2]
		if tf.Type != "truefalse" || !slices.Equal(tf.Answer, []string{"true"}) || !slices.Equal(tf.Right, []string{"true"}) ||
			tf.Earned == nil || *tf.Earned != 1 {
			t.Errorf("true/false: %+v", tf)
		}
		if mc.Prompt != "Which clay is whitest?" || !slices.Equal(mc.Answer, []string{"Terracotta"}) ||
			!slices.Equal(mc.Right, []string{"Porcelain"}) || mc.Earned == nil || *mc.Earned != 0 {
			t.Errorf("multiple choice: %+v", mc)
		}
		if essay.Type != "essay" || !slices.Equal(essay.Answer, []string{"Press and fold."}) || len(essay.Right) != 0 || essay.Earned != nil {
			t.Errorf("essay: %+v", essay)
		}
		// The essay is graded with the quiz's route; the track follows.
		apitest.Must(s.tutor.PostAdminQuizAttemptsIDGrade(ctx, a.ID, client.GradeInputBody{QuestionID: essay.QuestionID, Score: 1}))(t)
		if q := apitest.Must(get(s.tutor, s.half.ID, tr.Quiz))(t); q.QuizAttempts[0].PendingGrading || q.QuizAttempts[0].Score != 2 ||
			q.QuizAttempts[0].Right != 2 {
			t.Errorf("after grading: %+v", q.QuizAttempts[0])
		}

		sc := apitest.Must(get(env.ClientAs("admin"), s.half.ID, tr.SCORM))(t)
		if len(sc.ScormScos) != 1 || len(sc.QuizAttempts) != 0 {
			t.Fatalf("SCORM track: %+v", sc)
		}
		sco := sc.ScormScos[0]
		if sco.Completion != "incomplete" || sco.ScoreRaw == nil || *sco.ScoreRaw != 70 || sco.Location != "page-3" ||
			sco.SuspendDataLength != 6 || sco.SessionSeconds != 90 || sco.TotalSeconds != 90 || sco.Exit != "suspend" || sco.Title == "" ||
			len(sco.Interactions) != 1 || sco.Interactions[0] != (client.SCOInteraction{ID: "par-1", Type: "choice", LearnerResponse: "b",
			CorrectResponse: "a", Result: "wrong"}) {
			t.Errorf("SCO: %+v", sco)
		}

		c5 := apitest.Must(get(s.tutor, s.half.ID, tr.CMI5))(t)
		// The LMS's launched and satisfied stand around the AU's own.
		verbs := []string{}
		for _, st := range c5.Cmi5Statements {
			verbs = append(verbs, st.VerbName)
		}
		done := c5.Cmi5Statements[min(2, len(c5.Cmi5Statements)-1)]
		if !slices.Equal(verbs, []string{"launched", "initialized", "completed", "satisfied"}) ||
			done.Verb != "http://adlnet.gov/expapi/verbs/completed" || done.Result.Completion == nil || !*done.Result.Completion ||
			done.Result.Duration != "PT3M" || done.Timestamp == nil {
			t.Errorf("cmi5 track: %+v", c5.Cmi5Statements)
		}

		h := apitest.Must(get(s.tutor, s.half.ID, tr.H5P))(t)
		if len(h.H5PStatements) != 1 || h.H5PStatements[0].ObjectName != "Pictures" || h.H5PStatements[0].Result.ScoreRaw == nil ||
			*h.H5PStatements[0].Result.ScoreRaw != 3 || *h.H5PStatements[0].Result.ScoreMax != 4 || h.H5PStatements[0].Result.Duration != "PT42S" {
			t.Errorf("H5P track: %+v", h.H5PStatements)
		}

		// Who may read it.
		read := func(c *client.Client) error {
			_, err := get(c, s.half.ID, tr.SCORM)
			return err
		}
		scoped := apitest.Must(env.UserClient(env.As("tutor")).PostAuthTokens(ctx, client.CreateInputBody{Name: "tracks",
			Scopes: []string{"reports:read"}}))(t)
		apitest.OK(t, read(env.Client("", scoped.Token)))
		apitest.Refused(t, read(env.UserClient(s.half)), 403)
		apitest.Refused(t, read(env.UserClient(s.done)), 403)
		apitest.Refused(t, read(env.UserClient(env.NewUser("tutor"))), 403)
		apitest.Refused(t, read(env.Client("", "")), 401)
		// A topic of another course, and a user who is no learner.
		otherCourse := apitest.Must(s.tutor.PostAdminCourses(ctx, client.CourseBody{Title: "Other"}))(t).ID
		otherLesson := apitest.Must(s.tutor.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: otherCourse}))(t).ID
		foreign := apitest.Must(s.tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: otherLesson, Title: "Elsewhere",
			Topicable: richText, Markdown: client.Ptr("Text.")}))(t).ID
		_, err := get(s.tutor, s.half.ID, foreign)
		apitest.Refused(t, err, 404)
		_, err = get(s.tutor, env.NewUser("student").ID, tr.Quiz)
		apitest.Refused(t, err, 404)
		// A rich text topic has no records.
		if rt := apitest.Must(get(s.tutor, s.half.ID, s.topics[0]))(t); len(rt.QuizAttempts)+len(rt.ScormScos)+len(rt.Cmi5Statements)+len(rt.H5PStatements) != 0 {
			t.Errorf("rich text track: %+v", rt)
		}
	})
}

// TestGroupFilterOfTutors: a tutor filters the gradebook by a group
// assigned to the course or a subgroup of one; another group (which
// would tell who belongs to it) is refused with 422 on the list, the
// summary and the export; an admin filters by any group.
func TestGroupFilterOfTutors(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		s := newSchool(t, env)
		admin := env.ClientAs("admin")
		sub := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Class A", ParentID: &s.group}))(t).ID
		club := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Club"}))(t).ID
		apitest.Must(admin.PostAdminUserGroupsIDMembers(ctx, club, client.MemberInputBody{UserID: s.done.ID}))(t)
		apitest.Must(admin.PostAdminUserGroupsIDMembers(ctx, sub, client.MemberInputBody{UserID: s.new.ID}))(t)
		list := func(c *client.Client, group int64) ([]int64, error) {
			page, err := c.GetAdminCoursesIDProgress(ctx, s.course, client.GetAdminCoursesIDProgressParams{GroupID: &group,
				OrderBy: client.Ptr("user_id")})
			if err != nil {
				return nil, err
			}
			return ids(page.Items), nil
		}
		if got := apitest.Must(list(s.tutor, sub))(t); !slices.Equal(got, []int64{s.new.ID}) {
			t.Errorf("the tutor's subgroup: %v", got)
		}
		if got := apitest.Must(list(s.tutor, s.group))(t); len(got) != 2 {
			t.Errorf("the tutor's group: %v", got)
		}
		for _, group := range []int64{club, 999999} {
			_, err := list(s.tutor, group)
			var ae *client.Error
			if !errors.As(err, &ae) || ae.Status != 422 || len(ae.Errors["group_id"]) != 1 {
				t.Errorf("group %d for the tutor: %v", group, err)
			}
			_, err = s.tutor.GetAdminCoursesIDProgressSummary(ctx, s.course, client.GetAdminCoursesIDProgressSummaryParams{GroupID: &group})
			apitest.Refused(t, err, 422)
			if got := status(s.tutor.GetAdminCoursesIDProgressExport(ctx, s.course,
				client.GetAdminCoursesIDProgressExportParams{GroupID: &group})); got != 422 {
				t.Errorf("export of group %d for the tutor: %d", group, got)
			}
		}
		if got := apitest.Must(list(admin, club))(t); !slices.Equal(got, []int64{s.done.ID}) {
			t.Errorf("the admin's club: %v", got)
		}
	})
}
