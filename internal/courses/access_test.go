package courses_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func TestCourseAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		adminC, tutorC, student := env.ClientAs("admin"), env.ClientAs("tutor"), env.As("student")
		second, third := env.NewUser("student"), env.NewUser("student")
		root := group(t, env, "School", 0)
		child := group(t, env, "Class", root)
		join(t, env, root, student.ID)
		join(t, env, root, third.ID)
		join(t, env, child, second.ID)
		course := newCourse(t, adminC, client.CourseBody{Title: "Assigned", Status: client.Ptr("published")})
		mine := newCourse(t, tutorC, client.CourseBody{Title: "Mine"})
		foreign := foreignCourse(t, env)
		a := func(n int64) string { return "/api/admin/courses/" + id(n) + "/access" }
		rows := func() int {
			return env.Count(t, `SELECT (SELECT COUNT(*) FROM course_users) + (SELECT COUNT(*) FROM course_groups)`)
		}
		past, future := env.Clock.Now().Add(-time.Hour), env.Clock.Now().Add(30*24*time.Hour)

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous cannot list", Method: "GET", Path: a(course), Status: 401},
			{Name: "student cannot list", As: "student", Method: "GET", Path: a(course), Status: 403},
			{Name: "tutor cannot list another's course", As: "tutor", Method: "GET", Path: a(course), Status: 403},
			{Name: "tutor lists its course", As: "tutor", Method: "GET", Path: a(mine), Status: 200,
				JSON: map[string]any{"data.users": []any{}, "data.groups": []any{}}},
			{Name: "unknown course", As: "admin", Method: "GET", Path: a(999999), Status: 404},
			{Name: "student cannot assign", As: "student", Method: "POST", Path: a(course),
				Body: map[string]any{"users": []any{map[string]any{"id": student.ID}}}, Status: 403},
			{Name: "tutor cannot assign to another's course", As: "tutor", Method: "POST", Path: a(course),
				Body: map[string]any{"users": []any{map[string]any{"id": student.ID}}}, Status: 403},
			{Name: "another tenant's course", As: "admin", Method: "POST", Path: a(foreign),
				Body: map[string]any{"users": []any{map[string]any{"id": student.ID}}}, Status: 404},
			{Name: "unknown user", As: "admin", Method: "POST", Path: a(course),
				Body: map[string]any{"users": []any{map[string]any{"id": student.ID}, map[string]any{"id": 999999}}}, Status: 422,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { fieldError(t, res, "users.1.id") }},
			{Name: "unknown group", As: "admin", Method: "POST", Path: a(course),
				Body: map[string]any{"groups": []any{map[string]any{"id": 999999}}}, Status: 422,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { fieldError(t, res, "groups.0.id") }},
			{Name: "end date in the past", As: "admin", Method: "POST", Path: a(course),
				Body: map[string]any{"users": []any{map[string]any{"id": student.ID, "end_date": past}}}, Status: 422,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { fieldError(t, res, "users.0.end_date") }},
		})
		if rows() != 0 {
			t.Fatal("a refused assignment stored access")
		}

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "assign a user", As: "admin", Method: "POST", Path: a(course),
				Body: map[string]any{"users": []any{map[string]any{"id": student.ID}}}, Status: 200,
				Events: []string{"CourseAssigned", "CourseAccessStarted"},
				JSON:   map[string]any{"data.users.0.id": student.ID, "data.users.0.end_date": nil, "data.groups": []any{}}},
			{Name: "assigning again only sets the end", As: "admin", Method: "POST", Path: a(course),
				Body: map[string]any{"users": []any{map[string]any{"id": student.ID, "end_date": future}}}, Status: 200,
				Events: []string{}, JSON: map[string]any{"data.users.0.end_date": apitest.Present, "data.users.1": nil}},
			{Name: "a group gives its members and its subgroups' members access", As: "admin", Method: "POST", Path: a(course),
				Body: map[string]any{"groups": []any{map[string]any{"id": root}}}, Status: 200,
				Events: []string{"CourseAccessStarted", "CourseAccessStarted"},
				JSON:   map[string]any{"data.groups.0.id": root, "data.groups.0.name": "School"}},
			{Name: "listed", As: "admin", Method: "GET", Path: a(course), Status: 200,
				JSON: map[string]any{"data.users.0.email": student.Email, "data.groups.0.id": root, "data.groups.1": nil}},
			{Name: "unassigning a user who keeps access through a group", As: "admin", Method: "POST", Path: a(course) + "/remove",
				Body: map[string]any{"users": []int64{student.ID}}, Status: 200, Events: []string{"CourseUnassigned"},
				JSON: map[string]any{"data.users": []any{}}},
			{Name: "unassigning the group ends everyone's access", As: "admin", Method: "POST", Path: a(course) + "/remove",
				Body: map[string]any{"groups": []int64{root}}, Status: 200,
				Events: []string{"CourseAccessFinished", "CourseAccessFinished", "CourseAccessFinished"},
				JSON:   map[string]any{"data.groups": []any{}}},
			{Name: "unassigning again changes nothing", As: "admin", Method: "POST", Path: a(course) + "/remove",
				Body: map[string]any{"users": []int64{student.ID, 999999}, "groups": []int64{root}}, Status: 200, Events: []string{}},
			{Name: "student cannot unassign", As: "student", Method: "POST", Path: a(course) + "/remove",
				Body: map[string]any{"users": []int64{student.ID}}, Status: 403},
			{Name: "tutor cannot unassign from another's course", As: "tutor", Method: "POST", Path: a(course) + "/remove",
				Body: map[string]any{"users": []int64{student.ID}}, Status: 403},
			{Name: "tutor assigns a subgroup to its course", As: "tutor", Method: "POST", Path: a(mine),
				Body: map[string]any{"groups": []any{map[string]any{"id": child, "end_date": future}}}, Status: 200,
				Events: []string{"CourseAccessStarted"}, JSON: map[string]any{"data.groups.0.end_date": apitest.Present}},
			{Name: "assignable users leave out those assigned", As: "tutor", Method: "GET",
				Path: "/api/admin/courses/users/assignable?course_id=" + id(mine) + "&search=student", Status: 200,
				JSON: map[string]any{"meta.total": 3}},
		})
		if p := lastPayload(t, env, "CourseAccessStarted"); p["course_id"] != float64(mine) {
			t.Fatalf("access payload %v", p)
		}
	})
}

func TestTutors(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, tutorC, student := env.As("admin"), env.ClientAs("tutor"), env.As("student")
		helper := env.NewUser("tutor")
		course := newCourse(t, env.UserClient(admin), client.CourseBody{Title: "Course"})
		mine := newCourse(t, tutorC, client.CourseBody{Title: "Mine"})
		foreign := foreignCourse(t, env)
		assign := func(user, course int64) string { return "/api/admin/tutors/" + id(user) + "/assign/" + id(course) }
		unassign := func(user, course int64) string { return "/api/admin/tutors/" + id(user) + "/unassign/" + id(course) }

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous cannot assign", Method: "POST", Path: assign(helper.ID, course), Status: 401},
			{Name: "student cannot assign", As: "student", Method: "POST", Path: assign(helper.ID, course), Status: 403},
			{Name: "tutor cannot assign to another's course", As: "tutor", Method: "POST", Path: assign(helper.ID, course), Status: 403},
			{Name: "a student cannot be a tutor", As: "admin", Method: "POST", Path: assign(student.ID, course), Status: 422},
			{Name: "unknown user", As: "admin", Method: "POST", Path: assign(999999, course), Status: 404},
			{Name: "unknown course", As: "admin", Method: "POST", Path: assign(helper.ID, 999999), Status: 404},
			{Name: "another tenant's course", As: "admin", Method: "POST", Path: assign(helper.ID, foreign), Status: 404},
			{Name: "assign", As: "admin", Method: "POST", Path: assign(helper.ID, course), Status: 200,
				Events: []string{"CourseTutorAssigned"}, JSON: map[string]any{"message": "Tutor assigned.",
					"data.authors.0.id": admin.ID, "data.authors.1.id": helper.ID},
				Check: func(t *testing.T, env *apitest.Env, _ *apitest.Response) {
					apitest.Must(env.UserClient(helper).PatchAdminCoursesID(t.Context(), course, client.CoursePatch{Summary: client.Ptr("By the helper")}))(t)
				}},
			{Name: "assigning again changes nothing", As: "admin", Method: "POST", Path: assign(helper.ID, course), Status: 200,
				Events: []string{}, JSON: map[string]any{"message": "The tutor already is an author of the course."}},
			{Name: "tutor assigns to its course", As: "tutor", Method: "POST", Path: assign(helper.ID, mine), Status: 200,
				Events: []string{"CourseTutorAssigned"}},
			{Name: "tutor cannot unassign from another's course", As: "tutor", Method: "POST", Path: unassign(helper.ID, course), Status: 403},
			{Name: "student cannot unassign", As: "student", Method: "POST", Path: unassign(helper.ID, course), Status: 403},
			{Name: "unassign", As: "admin", Method: "POST", Path: unassign(helper.ID, course), Status: 200,
				Events: []string{"CourseTutorUnassigned"}, JSON: map[string]any{"data.authors.1": nil}},
			{Name: "unassigning again changes nothing", As: "admin", Method: "POST", Path: unassign(helper.ID, course), Status: 200,
				Events: []string{}, JSON: map[string]any{"message": "The user is not an author of the course."}},
			{Name: "unassign from an unknown course", As: "admin", Method: "POST", Path: unassign(helper.ID, 999999), Status: 404},
		})
	})
}
