package learning_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func TestProgramAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		now := env.Clock.Now()
		public, _, _ := grid(t, env, courseRow{Public: true}, 1, 1)
		private, _, _ := grid(t, env, courseRow{}, 1, 1)
		unactivated, _, _ := grid(t, env, courseRow{Status: "published_unactivated"}, 1, 1)
		later, _, _ := grid(t, env, courseRow{ActiveFrom: at(now.Add(48 * time.Hour))}, 1, 1)
		draft, _, _ := grid(t, env, courseRow{Status: "draft", Public: true}, 1, 1)
		ended, _, _ := grid(t, env, courseRow{ActiveTo: at(now.Add(-time.Hour))}, 1, 1)

		direct := env.NewUser("student")
		grouped := env.NewUser("student")
		expired := env.NewUser("student")
		for _, c := range []int64{private, unactivated, later, draft, ended} {
			assign(t, env, c, direct.ID, nil)
		}
		root := addGroup(t, env, 0)
		child := addGroup(t, env, root)
		exec(t, env, `INSERT INTO user_group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)`,
			child, grouped.ID, now)
		exec(t, env, `INSERT INTO course_groups (course_id, group_id, created_at) VALUES ($1, $2, $3)`, private, root, now)
		assign(t, env, private, expired.ID, at(now.Add(-time.Minute)))

		type check struct {
			name   string
			user   *apitest.User
			course int64
			status int
			msg    string
		}
		noAccess, notActive := "You do not have access to this course.", "The course is not active yet."
		for _, c := range []check{
			{"anonymous, public published", nil, public, 200, ""},
			{"student, public published", env.As("student"), public, 200, ""},
			{"anonymous, private", nil, private, 403, noAccess},
			{"student not assigned", env.As("student"), private, 403, noAccess},
			{"student assigned directly", direct, private, 200, ""},
			{"student in a child of an assigned group", grouped, private, 200, ""},
			{"assignment ended", expired, private, 403, noAccess},
			{"tutor not author", env.As("tutor"), private, 403, noAccess},
			{"admin", env.As("admin"), private, 200, ""},
			{"waiting for activation", direct, unactivated, 403, notActive},
			{"admin before activation", env.As("admin"), unactivated, 200, ""},
			{"before active_from", direct, later, 403, notActive},
			{"draft, assigned", direct, draft, 403, noAccess},
			{"draft, anonymous", nil, draft, 403, noAccess},
			{"draft, admin", env.As("admin"), draft, 200, ""},
			{"window closed: still readable", direct, ended, 200, ""},
			{"unknown course", env.As("admin"), 999999, 404, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				prog, err := as(env, c.user).GetCoursesIDProgram(t.Context(), c.course)
				if c.status == 200 {
					if apitest.Must(prog, err)(t).ID != c.course {
						t.Errorf("data.id = %d, want %d", prog.ID, c.course)
					}
					return
				}
				if e := apitest.Refused(t, err, c.status); c.msg != "" && e.Message != c.msg {
					t.Errorf("message %q, want %q", e.Message, c.msg)
				}
			})
		}
		// An author tutor sees the course before it opens.
		tutor := env.NewUser("tutor")
		exec(t, env, `INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, unactivated, tutor.ID)
		apitest.Must(env.UserClient(tutor).GetCoursesIDProgram(t.Context(), unactivated))(t)
	})
}

func TestProgramTree(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		now := env.Clock.Now()
		c := addCourse(t, env, courseRow{Public: true})
		open := addLesson(t, env, c, lessonRow{})
		t1 := addTopic(t, env, c, open, topicRow{})
		addTopic(t, env, c, open, topicRow{Inactive: true})
		t2 := addTopic(t, env, c, open, topicRow{Type: `Some\Unknown\Kind`})
		nested := addLesson(t, env, c, lessonRow{Parent: open})
		t3 := addTopic(t, env, c, nested, topicRow{})
		hidden := addLesson(t, env, c, lessonRow{Inactive: true})
		addTopic(t, env, c, hidden, topicRow{})
		addLesson(t, env, c, lessonRow{Parent: hidden}) // hidden with its parent
		soon := addLesson(t, env, c, lessonRow{ActiveFrom: at(now.Add(time.Hour))})
		t4 := addTopic(t, env, c, soon, topicRow{})
		closedParent := addLesson(t, env, c, lessonRow{ActiveTo: at(now.Add(-time.Hour))})
		inClosed := addLesson(t, env, c, lessonRow{Parent: closedParent})
		t5 := addTopic(t, env, c, inClosed, topicRow{})

		ctx := t.Context()
		prog := apitest.Must(env.ClientAs("anonymous").GetCoursesIDProgram(ctx, c))(t)
		ls := prog.Lessons
		if len(ls) != 3 {
			t.Fatalf("%d top lessons, want 3 (hidden left out): %+v", len(ls), ls)
		}
		if len(ls[0].Topics) != 2 {
			t.Fatalf("lesson 0 has %d topics, want 2 (inactive left out)", len(ls[0].Topics))
		}
		if len(ls[0].Lessons) != 1 || len(ls[0].Lessons[0].Topics) != 1 || len(ls[1].Topics) != 1 || len(ls[2].Lessons) != 1 ||
			len(ls[2].Lessons[0].Topics) != 1 {
			t.Fatalf("lessons and topics missing: %+v", ls)
		}
		open0, nested0, soon1, closed2 := ls[0], ls[0].Lessons[0], ls[1], ls[2]
		if open0.ID != open || !open0.IsOpen || open0.Topics[0].ID != t1 || open0.Topics[0].Progress != nil {
			t.Errorf("open lesson: %+v", open0)
		}
		if tp := open0.Topics[1]; tp.ID != t2 || tp.Topicable != nil || tp.Kind != "unknown" {
			t.Errorf("topic of an unknown kind: %+v", tp)
		}
		if nested0.ID != nested || nested0.ParentID == nil || *nested0.ParentID != open || nested0.Topics[0].ID != t3 {
			t.Errorf("nested lesson: %+v", nested0)
		}
		if soon1.ID != soon || soon1.IsOpen || soon1.Topics[0].ID != t4 || soon1.Topics[0].Topicable != nil {
			t.Errorf("lesson not open yet: %+v", soon1)
		}
		if in := closed2.Lessons[0]; closed2.ID != closedParent || in.ID != inClosed || in.IsOpen || in.Topics[0].ID != t5 ||
			in.Topics[0].Topicable != nil {
			t.Errorf("lesson in a closed one: %+v", closed2)
		}
		if prog.Progress != nil {
			t.Errorf("anonymous progress: %+v", prog.Progress)
		}
		if env.Server.Learning.Kinds != nil {
			if html, _ := open0.Topics[0].Topicable.(map[string]any)["html"].(string); html != "<p>x</p>" {
				t.Errorf("rich text content not shown: %+v", open0.Topics[0])
			}
		}

		// A signed-in learner sees their progress in each topic.
		u := env.NewUser("student")
		patch(t, env, u, c, 1, t1)
		prog = apitest.Must(env.UserClient(u).GetCoursesIDProgram(ctx, c))(t)
		if tps := prog.Lessons[0].Topics; tps[0].Progress == nil || tps[0].Progress.Status != 1 ||
			tps[1].Progress == nil || tps[1].Progress.Status != 0 {
			t.Errorf("topic progress: %+v, %+v", tps[0].Progress, tps[1].Progress)
		}
		if p := prog.Progress; p == nil || p.TotalTopics != 5 || p.FinishedTopics != 1 || p.Percent != 20 || p.Status != "started" {
			t.Errorf("course progress: %+v", p)
		}
	})
}

// TestProgramChanges checks that a program follows changes to its course
// made behind the service's back, and lesson windows opening.
func TestProgramChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		now := env.Clock.Now()
		c, lessons, topics := grid(t, env, courseRow{Public: true}, 1, 1)
		soon := addLesson(t, env, c, lessonRow{ActiveFrom: at(now.Add(30 * time.Minute))})
		later := addTopic(t, env, c, soon, topicRow{})
		ctx, anonymous := t.Context(), env.ClientAs("anonymous")
		read := func(api *client.Client) *client.LearnerProgram {
			t.Helper()
			prog := apitest.Must(api.GetCoursesIDProgram(ctx, c))(t)
			if len(prog.Lessons) != 2 || len(prog.Lessons[1].Topics) != 1 {
				t.Fatalf("lessons: %+v", prog.Lessons)
			}
			return prog
		}
		prog := read(anonymous)
		if len(prog.Lessons[0].Topics) != 1 || prog.Lessons[1].Topics[0].Topicable != nil {
			t.Fatalf("first read: %+v", prog.Lessons)
		}
		added := addTopic(t, env, c, lessons[0], topicRow{})
		if ts := read(anonymous).Lessons[0].Topics; len(ts) != 2 || ts[1].ID != added {
			t.Errorf("added topic missing: %+v", ts)
		}
		exec(t, env, `UPDATE topics SET active = $1 WHERE id = $2`, false, topics[0][0])
		if ts := read(anonymous).Lessons[0].Topics; len(ts) != 1 {
			t.Errorf("deactivated topic shown: %+v", ts)
		}
		exec(t, env, `DELETE FROM topics WHERE id = $1`, added)
		if ts := read(anonymous).Lessons[0].Topics; len(ts) != 0 {
			t.Errorf("deleted topic shown: %+v", ts)
		}
		env.Clock.Advance(31 * time.Minute)
		if l := read(anonymous).Lessons[1]; !l.IsOpen || l.Topics[0].Topicable == nil {
			t.Errorf("lesson %d did not open with its window (topic %d): %+v", soon, later, l)
		}
		// Changes to the course itself count too: access, authors, tags.
		author := env.NewUser("tutor")
		tutor := env.UserClient(author)
		exec(t, env, `UPDATE courses SET is_public = $1 WHERE id = $2`, false, c)
		for _, api := range []*client.Client{anonymous, tutor} {
			_, err := api.GetCoursesIDProgram(ctx, c)
			apitest.Refused(t, err, 403)
		}
		exec(t, env, `INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, c, author.ID)
		read(tutor)
		exec(t, env, `INSERT INTO course_tags (course_id, tag) VALUES ($1, $2)`, c, "go")
		if tags := read(tutor).Tags; len(tags) == 0 || tags[0] != "go" {
			t.Errorf("tag missing: %v", tags)
		}
		exec(t, env, `DELETE FROM courses WHERE id = $1`, c)
		_, err := tutor.GetCoursesIDProgram(ctx, c)
		apitest.Refused(t, err, 404)
	})
}

func TestPreview(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c := addCourse(t, env, courseRow{})
		l := addLesson(t, env, c, lessonRow{})
		preview := addTopic(t, env, c, l, topicRow{Preview: true})
		plain := addTopic(t, env, c, l, topicRow{})
		inactive := addTopic(t, env, c, l, topicRow{Preview: true, Inactive: true})
		hidden := addLesson(t, env, c, lessonRow{Inactive: true})
		inHidden := addTopic(t, env, c, hidden, topicRow{Preview: true})
		draft := addCourse(t, env, courseRow{Status: "draft"})
		dl := addLesson(t, env, draft, lessonRow{})
		inDraft := addTopic(t, env, draft, dl, topicRow{Preview: true})
		other := addCourse(t, env, courseRow{})

		anonymous := env.ClientAs("anonymous")
		if got := apitest.Must(anonymous.GetCoursesIDPreviewID(t.Context(), c, preview))(t); got.ID != preview {
			t.Errorf("preview answered %+v", got)
		}
		for name, p := range map[string][2]int64{
			"not a preview":            {c, plain},
			"inactive topic":           {c, inactive},
			"topic of a hidden lesson": {c, inHidden},
			"draft course":             {draft, inDraft},
			"topic of another course":  {other, preview},
			"unknown topic":            {c, 999999},
			"unknown course":           {999999, preview},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := anonymous.GetCoursesIDPreviewID(t.Context(), p[0], p[1])
				apitest.Refused(t, err, 404)
			})
		}
	})
}

// as is the typed client signed in as u, anonymous for nil.
func as(env *apitest.Env, u *apitest.User) *client.Client {
	if u == nil {
		return env.ClientAs("anonymous")
	}
	return env.UserClient(u)
}

// same compares a decoded JSON value with an expected Go value.
func same(got, want any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case int:
		return got == float64(w)
	case int64:
		return got == float64(w)
	case bool, string:
		return got == w
	}
	return false
}
