package courses_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

func TestLessons(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, tutor := env.As("admin"), env.As("tutor")
		env.As("student")
		a := newCourse(t, env, admin.Token, map[string]any{"title": "A"})
		b := newCourse(t, env, admin.Token, map[string]any{"title": "B"})
		mine := newCourse(t, env, tutor.Token, map[string]any{"title": "Mine"})
		inB := newLesson(t, env, admin.Token, map[string]any{"course_id": b, "title": "In B"})
		foreign := foreignCourse(t, env)
		lessons := func() int { return env.Count(t, `SELECT COUNT(*) FROM lessons`) }
		now := env.Clock.Now()

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous cannot create", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": a, "title": "X"}, Status: 401},
			{Name: "student cannot create", As: "student", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": a, "title": "X"}, Status: 403},
			{Name: "tutor cannot add to another's course", As: "tutor", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": a, "title": "X"}, Status: 403},
			{Name: "course required", As: "admin", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"title": "X"}, Status: 422, JSON: map[string]any{"errors.course_id": apitest.Present}},
			{Name: "unknown course", As: "admin", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": 999999, "title": "X"}, Status: 422, JSON: map[string]any{"errors.course_id": apitest.Present}},
			{Name: "another tenant's course", As: "admin", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": foreign, "title": "X"}, Status: 422, JSON: map[string]any{"errors.course_id": apitest.Present}},
			{Name: "title required", As: "admin", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": a, "title": " "}, Status: 422, JSON: map[string]any{"errors.title": apitest.Present}},
			{Name: "parent of another course", As: "admin", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": a, "title": "X", "parent_lesson_id": inB}, Status: 422,
				JSON: map[string]any{"errors.parent_lesson_id": apitest.Present}},
			{Name: "unknown parent", As: "admin", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": a, "title": "X", "parent_lesson_id": 999999}, Status: 422,
				JSON: map[string]any{"errors.parent_lesson_id": apitest.Present}},
			{Name: "window must be ordered", As: "admin", Method: "POST", Path: "/api/admin/lessons",
				Body:   map[string]any{"course_id": a, "title": "X", "active_from": now, "active_to": now.Add(-time.Hour)},
				Status: 422, JSON: map[string]any{"errors.active_to": apitest.Present}},
		})
		if lessons() != 1 {
			t.Fatal("a refused create stored a lesson")
		}

		one := newLesson(t, env, admin.Token, map[string]any{"course_id": a, "title": "One", "summary": "First", "duration": "1h"})
		two := newLesson(t, env, admin.Token, map[string]any{"course_id": a, "title": "Two", "active": false})
		sub := newLesson(t, env, admin.Token, map[string]any{"course_id": a, "title": "One.1", "parent_lesson_id": one})
		deep := newLesson(t, env, admin.Token, map[string]any{"course_id": a, "title": "One.1.1", "parent_lesson_id": sub,
			"order": 5, "active_from": now.Add(time.Hour)})
		l := func(n int64) string { return "/api/admin/lessons/" + id(n) }
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "nested lesson goes first among its siblings", As: "admin", Method: "GET", Path: l(sub), Status: 200,
				JSON: map[string]any{"data.parent_lesson_id": one, "data.order": 1, "data.active": true}},
			{Name: "explicit order and window", As: "admin", Method: "GET", Path: l(deep), Status: 200,
				JSON: map[string]any{"data.order": 5, "data.active_from": apitest.Present, "data.active_to": nil}},
			{Name: "tutor adds to its course", As: "tutor", Method: "POST", Path: "/api/admin/lessons",
				Body: map[string]any{"course_id": mine, "title": "Mine 1"}, Status: 201, JSON: map[string]any{"data.order": 1}},
			{Name: "read", As: "admin", Method: "GET", Path: l(one), Status: 200,
				JSON: map[string]any{"data.title": "One", "data.summary": "First", "data.duration": "1h", "data.order": 1,
					"data.course_id": a, "data.parent_lesson_id": nil}},
			{Name: "second lesson goes after the first", As: "admin", Method: "GET", Path: l(two), Status: 200,
				JSON: map[string]any{"data.order": 2, "data.active": false}},
			{Name: "tutor cannot read another's lesson", As: "tutor", Method: "GET", Path: l(one), Status: 403},
			{Name: "student cannot read", As: "student", Method: "GET", Path: l(one), Status: 403},
			{Name: "unknown lesson", As: "admin", Method: "GET", Path: l(999999), Status: 404,
				JSON: map[string]any{"message": "Lesson not found."}},
			{Name: "list a course", As: "admin", Method: "GET", Path: "/api/admin/lessons?course_id=" + id(a), Status: 200,
				JSON: map[string]any{"meta.total": 4, "data.0.id": one, "data.1.id": sub, "data.2.id": two, "data.3.id": deep}},
			{Name: "title search", As: "admin", Method: "GET", Path: "/api/admin/lessons?title=one.1", Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "tutor lists its lessons", As: "tutor", Method: "GET", Path: "/api/admin/lessons", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.title": "Mine 1"}},
			{Name: "tutor cannot list another's course", As: "tutor", Method: "GET", Path: "/api/admin/lessons?course_id=" + id(a), Status: 403},
			{Name: "list an unknown course", As: "admin", Method: "GET", Path: "/api/admin/lessons?course_id=999999", Status: 404},
			{Name: "student cannot list", As: "student", Method: "GET", Path: "/api/admin/lessons", Status: 403},
			{Name: "create form", As: "tutor", Method: "GET", Path: "/api/admin/lessons/create", Status: 200,
				JSON: map[string]any{"data.courses": []any{map[string]any{"id": mine, "title": "Mine"}}, "data.lessons": []any{}}},
			{Name: "create form with parents", As: "admin", Method: "GET", Path: "/api/admin/lessons/create?course_id=" + id(a), Status: 200,
				JSON: map[string]any{"data.courses.0.title": "A", "data.lessons.0.id": one, "data.lessons.3.id": deep}},
			{Name: "student gets no form", As: "student", Method: "GET", Path: "/api/admin/lessons/create", Status: 403},
			{Name: "edit form leaves out the lesson's subtree", As: "admin", Method: "GET", Path: l(one) + "/edit", Status: 200,
				JSON: map[string]any{"data.lesson.id": one, "data.lessons": []any{map[string]any{"id": two, "course_id": a,
					"parent_lesson_id": nil, "title": "Two"}}}},
			{Name: "tutor gets no edit form of another's lesson", As: "tutor", Method: "GET", Path: l(one) + "/edit", Status: 403},
		})

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "no cycles", As: "admin", Method: "PATCH", Path: l(one), Body: map[string]any{"parent_lesson_id": deep},
				Status: 422, JSON: map[string]any{"errors.parent_lesson_id": apitest.Present}},
			{Name: "not its own parent", As: "admin", Method: "PATCH", Path: l(one), Body: map[string]any{"parent_lesson_id": one},
				Status: 422, JSON: map[string]any{"errors.parent_lesson_id": apitest.Present}},
			{Name: "no moving between courses", As: "admin", Method: "PATCH", Path: l(one), Body: map[string]any{"course_id": b},
				Status: 422, JSON: map[string]any{"errors.course_id": apitest.Present}},
			{Name: "no parent from another course", As: "admin", Method: "PATCH", Path: l(one), Body: map[string]any{"parent_lesson_id": inB},
				Status: 422},
			{Name: "tutor cannot change another's lesson", As: "tutor", Method: "PATCH", Path: l(one), Body: map[string]any{"title": "X"},
				Status: 403},
			{Name: "unknown lesson", As: "admin", Method: "PATCH", Path: l(999999), Body: map[string]any{"title": "X"}, Status: 404},
			{Name: "the refused changes stored nothing", As: "admin", Method: "GET", Path: l(one), Status: 200,
				JSON: map[string]any{"data.parent_lesson_id": nil, "data.title": "One"}},
			{Name: "patch", As: "admin", Method: "PATCH", Path: l(one), Body: map[string]any{"title": "Uno", "course_id": a},
				Status: 200, JSON: map[string]any{"data.title": "Uno", "data.summary": "First", "data.order": 1}},
			{Name: "moving to the top goes last", As: "admin", Method: "PATCH", Path: l(sub), Body: map[string]any{"parent_lesson_id": nil},
				Status: 200, JSON: map[string]any{"data.parent_lesson_id": nil, "data.order": 3}},
			{Name: "moving back under", As: "admin", Method: "PATCH", Path: l(sub), Body: map[string]any{"parent_lesson_id": one, "order": 1},
				Status: 200, JSON: map[string]any{"data.parent_lesson_id": one, "data.order": 1}},
			{Name: "put needs a title", As: "admin", Method: "PUT", Path: l(two), Body: map[string]any{"summary": "x"}, Status: 422},
			{Name: "put", As: "admin", Method: "PUT", Path: l(two), Body: map[string]any{"title": "Dos", "active": true,
				"active_to": now.Add(time.Hour)}, Status: 200,
				JSON: map[string]any{"data.title": "Dos", "data.active": true, "data.active_to": apitest.Present}},
		})

		// The admin program shows every lesson and topic, nested.
		topic(t, env, a, one, "Intro", true)
		topic(t, env, a, deep, "Hidden", false)
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "admin program", As: "admin", Method: "GET", Path: "/api/admin/courses/" + id(a) + "/program", Status: 200,
				JSON: map[string]any{"data.title": "A", "data.lessons.0.title": "Uno", "data.lessons.0.topics.0.title": "Intro",
					"data.lessons.0.topics.0.content": map[string]any{"html": "<p>Hi</p>"},
					"data.lessons.0.lessons.0.title":  "One.1", "data.lessons.0.lessons.0.lessons.0.title": "One.1.1",
					"data.lessons.0.lessons.0.lessons.0.topics.0.title":  "Hidden",
					"data.lessons.0.lessons.0.lessons.0.topics.0.active": false,
					"data.lessons.1.title":                               "Dos", "data.lessons.1.topics": []any{}, "data.lessons.2": nil}},
			{Name: "tutor cannot see another's program", As: "tutor", Method: "GET", Path: "/api/admin/courses/" + id(a) + "/program", Status: 403},
			{Name: "student cannot see a program", As: "student", Method: "GET", Path: "/api/admin/courses/" + id(mine) + "/program", Status: 403},
			{Name: "tutor sees its program", As: "tutor", Method: "GET", Path: "/api/admin/courses/" + id(mine) + "/program", Status: 200,
				JSON: map[string]any{"data.lessons.0.title": "Mine 1"}},
			{Name: "unknown program", As: "admin", Method: "GET", Path: "/api/admin/courses/999999/program", Status: 404},
		})

		before := lessons()
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "tutor cannot clone another's lesson", As: "tutor", Method: "POST", Path: l(one) + "/clone", Status: 403},
			{Name: "clone unknown", As: "admin", Method: "POST", Path: l(999999) + "/clone", Status: 404},
			{Name: "clone", As: "admin", Method: "POST", Path: l(one) + "/clone", Status: 201,
				JSON: map[string]any{"data.title": "Uno", "data.order": 3, "data.parent_lesson_id": nil, "data.course_id": a},
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					if n := env.Count(t, `SELECT COUNT(*) FROM lessons`); n != before+3 {
						t.Fatalf("clone made %d lessons, want 3", n-before)
					}
					copyID := int64(res.Number("data.id"))
					if n := env.Count(t, `SELECT COUNT(*) FROM lessons WHERE parent_id = $1`, copyID); n != 1 {
						t.Fatalf("the clone has %d children", n)
					}
					if n := env.Count(t, `SELECT COUNT(*) FROM topics WHERE course_id = $1 AND lesson_id NOT IN ($2, $3, $4, $5)`,
						a, one, sub, deep, two); n != 2 {
						t.Fatalf("the clone has %d topics, want 2", n)
					}
				}},
		})

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "tutor cannot delete another's lesson", As: "tutor", Method: "DELETE", Path: l(one), Status: 403},
			{Name: "student cannot delete", As: "student", Method: "DELETE", Path: l(one), Status: 403},
			{Name: "delete with nested lessons and topics", As: "admin", Method: "DELETE", Path: l(one), Status: 200,
				Check: func(t *testing.T, env *apitest.Env, _ *apitest.Response) {
					if n := env.Count(t, `SELECT COUNT(*) FROM lessons WHERE id IN ($1, $2, $3)`, one, sub, deep); n != 0 {
						t.Fatalf("%d lessons of the deleted tree remain", n)
					}
					if n := env.Count(t, `SELECT COUNT(*) FROM topics WHERE lesson_id IN ($1, $2, $3)`, one, sub, deep); n != 0 {
						t.Fatalf("%d topics of the deleted tree remain", n)
					}
				}},
			{Name: "deleting again", As: "admin", Method: "DELETE", Path: l(one), Status: 404},
		})
	})
}
