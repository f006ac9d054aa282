package learning_test

import (
	"testing"
	"time"

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

		program := func(c int64) string { return "/api/courses/" + id(c) + "/program" }
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
				res := call(t, env, c.status, "GET", program(c.course), c.user, nil)
				if c.msg != "" && res.String("message") != c.msg {
					t.Errorf("message %q, want %q", res.String("message"), c.msg)
				}
				if c.status == 200 && res.Number("data.id") != float64(c.course) {
					t.Errorf("data.id = %v, want %d", res.Get("data.id"), c.course)
				}
			})
		}
		// An author tutor sees the course before it opens.
		tutor := env.NewUser("tutor")
		exec(t, env, `INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, unactivated, tutor.ID)
		call(t, env, 200, "GET", program(unactivated), tutor, nil)
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

		res := call(t, env, 200, "GET", "/api/courses/"+id(c)+"/program", nil, nil)
		lessons, _ := res.Get("data.lessons").([]any)
		if len(lessons) != 3 {
			t.Fatalf("%d top lessons, want 3 (hidden left out): %s", len(lessons), res.Body)
		}
		want := map[string]any{
			"data.lessons.0.id":                           open,
			"data.lessons.0.is_open":                      true,
			"data.lessons.0.topics.0.id":                  t1,
			"data.lessons.0.topics.1.id":                  t2,
			"data.lessons.0.topics.1.topicable":           nil,
			"data.lessons.0.topics.1.kind":                "unknown",
			"data.lessons.0.lessons.0.id":                 nested,
			"data.lessons.0.lessons.0.parent_id":          open,
			"data.lessons.0.lessons.0.topics.0.id":        t3,
			"data.lessons.1.id":                           soon,
			"data.lessons.1.is_open":                      false,
			"data.lessons.1.topics.0.id":                  t4,
			"data.lessons.1.topics.0.topicable":           nil,
			"data.lessons.2.id":                           closedParent,
			"data.lessons.2.lessons.0.id":                 inClosed,
			"data.lessons.2.lessons.0.is_open":            false,
			"data.lessons.2.lessons.0.topics.0.id":        t5,
			"data.lessons.2.lessons.0.topics.0.topicable": nil,
			"data.lessons.0.topics.0.progress":            nil,
			"data.progress":                               nil,
		}
		for path, v := range want {
			if !same(res.Get(path), v) {
				t.Errorf("%s = %#v, want %#v", path, res.Get(path), v)
			}
		}
		if topics, _ := res.Get("data.lessons.0.topics").([]any); len(topics) != 2 {
			t.Errorf("lesson 0 has %d topics, want 2 (inactive left out)", len(topics))
		}
		if env.Server.Learning.Kinds != nil {
			if res.String("data.lessons.0.topics.0.topicable.html") != "<p>x</p>" {
				t.Errorf("rich text content not shown: %s", res.Body)
			}
		}

		// A signed-in learner sees their progress in each topic.
		u := env.NewUser("student")
		patch(t, env, 200, u, c, 1, t1)
		res = call(t, env, 200, "GET", "/api/courses/"+id(c)+"/program", u, nil)
		for path, v := range map[string]any{
			"data.lessons.0.topics.0.progress.status": 1,
			"data.lessons.0.topics.1.progress.status": 0,
			"data.progress.total_topics":              5,
			"data.progress.finished_topics":           1,
			"data.progress.percent":                   20,
			"data.progress.status":                    "started",
		} {
			if !same(res.Get(path), v) {
				t.Errorf("%s = %#v, want %#v", path, res.Get(path), v)
			}
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
		path := "/api/courses/" + id(c) + "/program"
		topicsOf := func(res *apitest.Response, lesson int) int {
			ts, _ := res.Get("data.lessons." + id(int64(lesson)) + ".topics").([]any)
			return len(ts)
		}
		res := call(t, env, 200, "GET", path, nil, nil)
		if topicsOf(res, 0) != 1 || res.Get("data.lessons.1.topics.0.topicable") != nil {
			t.Fatalf("first read: %s", res.Body)
		}
		added := addTopic(t, env, c, lessons[0], topicRow{})
		if res = call(t, env, 200, "GET", path, nil, nil); topicsOf(res, 0) != 2 || !same(res.Get("data.lessons.0.topics.1.id"), added) {
			t.Errorf("added topic missing: %s", res.Body)
		}
		exec(t, env, `UPDATE topics SET active = $1 WHERE id = $2`, false, topics[0][0])
		if res = call(t, env, 200, "GET", path, nil, nil); topicsOf(res, 0) != 1 {
			t.Errorf("deactivated topic shown: %s", res.Body)
		}
		exec(t, env, `DELETE FROM topics WHERE id = $1`, added)
		if res = call(t, env, 200, "GET", path, nil, nil); topicsOf(res, 0) != 0 {
			t.Errorf("deleted topic shown: %s", res.Body)
		}
		env.Clock.Advance(31 * time.Minute)
		res = call(t, env, 200, "GET", path, nil, nil)
		if res.Get("data.lessons.1.is_open") != true || res.Get("data.lessons.1.topics.0.topicable") == nil {
			t.Errorf("lesson %d did not open with its window (topic %d): %s", soon, later, res.Body)
		}
		// Changes to the course itself count too: access, authors, tags.
		tutor := env.NewUser("tutor")
		exec(t, env, `UPDATE courses SET is_public = $1 WHERE id = $2`, false, c)
		call(t, env, 403, "GET", path, nil, nil)
		call(t, env, 403, "GET", path, tutor, nil)
		exec(t, env, `INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, c, tutor.ID)
		call(t, env, 200, "GET", path, tutor, nil)
		exec(t, env, `INSERT INTO course_tags (course_id, tag) VALUES ($1, $2)`, c, "go")
		if res = call(t, env, 200, "GET", path, tutor, nil); res.String("data.tags.0") != "go" {
			t.Errorf("tag missing: %s", res.Body)
		}
		exec(t, env, `DELETE FROM courses WHERE id = $1`, c)
		call(t, env, 404, "GET", path, tutor, nil)
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

		path := func(c, topic int64) string { return "/api/courses/" + id(c) + "/preview/" + id(topic) }
		res := call(t, env, 200, "GET", path(c, preview), nil, nil)
		if res.Number("data.id") != float64(preview) {
			t.Errorf("preview answered %s", res.Body)
		}
		for name, p := range map[string]string{
			"not a preview":            path(c, plain),
			"inactive topic":           path(c, inactive),
			"topic of a hidden lesson": path(c, inHidden),
			"draft course":             path(draft, inDraft),
			"topic of another course":  path(other, preview),
			"unknown topic":            path(c, 999999),
			"unknown course":           path(999999, preview),
		} {
			t.Run(name, func(t *testing.T) { call(t, env, 404, "GET", p, nil, nil) })
		}
	})
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
