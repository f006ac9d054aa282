package courses_test

import (
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func TestCatalogue(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, tutor := env.As("admin"), env.As("tutor")
		env.As("student")
		adminC, tutorC := env.ClientAs("admin"), env.ClientAs("tutor")
		idle := env.NewUser("tutor")
		cat := category(t, env, "Web")
		now := env.Clock.Now()
		alpha := newCourse(t, tutorC, client.CourseBody{Title: "Alpha", Status: client.Ptr("published"), Tags: []string{"x", "y"},
			Categories: []int64{cat}, ActiveTo: client.Ptr(now.Add(24 * time.Hour))})
		beta := newCourse(t, adminC, client.CourseBody{Title: "Beta", Status: client.Ptr("published_unactivated"), Tags: []string{"y"},
			ActiveFrom: client.Ptr(now.Add(24 * time.Hour))})
		hidden := newCourse(t, tutorC, client.CourseBody{Title: "Gamma", Status: client.Ptr("published"), Findable: client.Ptr(false),
			Tags: []string{"z"}})
		draft := newCourse(t, tutorC, client.CourseBody{Title: "Draft", Tags: []string{"d"}})
		expired := newCourse(t, tutorC, client.CourseBody{Title: "Expired", Status: client.Ptr("published"), Tags: []string{"e"},
			ActiveFrom: client.Ptr(now.Add(-48 * time.Hour)), ActiveTo: client.Ptr(now.Add(-time.Hour))})
		archived := newCourse(t, adminC, client.CourseBody{Title: "Archived", Status: client.Ptr("archived")})
		foreignCourse(t, env)
		c := func(n int64) string { return "/api/courses/" + id(n) }

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anyone sees published findable courses", Method: "GET", Path: "/api/courses", Status: 200,
				JSON: map[string]any{"meta.total": 3, "data.0.id": alpha, "data.1.id": beta, "data.2.id": expired,
					"data.0.tags": []string{"x", "y"}, "data.0.authors.0.id": tutor.ID, "data.0.categories.0.name": "Web"}},
			{Name: "signed-in users see the same", As: "student", Method: "GET", Path: "/api/courses", Status: 200,
				JSON: map[string]any{"meta.total": 3}},
			{Name: "admins see the same", As: "admin", Method: "GET", Path: "/api/courses", Status: 200,
				JSON: map[string]any{"meta.total": 3}},
			{Name: "no expired", Method: "GET", Path: "/api/courses?no_expired=true", Status: 200,
				JSON: map[string]any{"meta.total": 2, "data.1.id": beta}},
			{Name: "title", Method: "GET", Path: "/api/courses?title=ALP", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": alpha}},
			{Name: "category", Method: "GET", Path: "/api/courses?category_id=" + id(cat), Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": alpha}},
			{Name: "tag", Method: "GET", Path: "/api/courses?tag=y", Status: 200, JSON: map[string]any{"meta.total": 2}},
			{Name: "order", Method: "GET", Path: "/api/courses?order_by=title&order=desc&per_page=2", Status: 200,
				JSON: map[string]any{"meta.total": 3, "meta.last_page": 2, "data.0.id": expired, "data.1.id": beta}},
			{Name: "bad order", Method: "GET", Path: "/api/courses?order_by=secret", Status: 422},
			{Name: "another tenant has its own catalogue", Method: "GET", Path: "/api/courses?per_page=100", Status: 200,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) {
					for _, item := range res.Get("data").([]any) {
						if item.(map[string]any)["title"] == "Foreign" {
							t.Fatal("another tenant's course is listed")
						}
					}
				}},
			{Name: "a published course", Method: "GET", Path: c(alpha), Status: 200, JSON: map[string]any{"data.title": "Alpha"}},
			{Name: "a published course that is not findable", Method: "GET", Path: c(hidden), Status: 200},
			{Name: "a draft is not found", Method: "GET", Path: c(draft), Status: 404},
			{Name: "a draft is not found for students", As: "student", Method: "GET", Path: c(draft), Status: 404},
			{Name: "its author sees a draft", As: "tutor", Method: "GET", Path: c(draft), Status: 200},
			{Name: "admins see drafts", As: "admin", Method: "GET", Path: c(draft), Status: 200},
			{Name: "an archived course is not found", Method: "GET", Path: c(archived), Status: 404},
			{Name: "an unknown course", Method: "GET", Path: c(999999), Status: 404},
			{Name: "authored", As: "tutor", Method: "GET", Path: "/api/courses/authored", Status: 200,
				JSON: map[string]any{"meta.total": 4, "data.0.id": alpha}},
			{Name: "authored drafts", As: "tutor", Method: "GET", Path: "/api/courses/authored?status=draft", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": draft}},
			{Name: "students author nothing", As: "student", Method: "GET", Path: "/api/courses/authored", Status: 200,
				JSON: map[string]any{"meta.total": 0, "data": []any{}}},
			{Name: "authored needs a user", Method: "GET", Path: "/api/courses/authored", Status: 401},
			{Name: "tutors of published courses", Method: "GET", Path: "/api/tutors", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": tutor.ID, "data.0.courses_count": 3}},
			{Name: "tutor search", Method: "GET", Path: "/api/tutors?search=nobody", Status: 200, JSON: map[string]any{"meta.total": 0}},
			{Name: "a tutor with its findable courses", Method: "GET", Path: "/api/tutors/" + id(tutor.ID), Status: 200,
				JSON: map[string]any{"data.id": tutor.ID, "data.courses.0.id": alpha, "data.courses.1.id": expired, "data.courses.2": nil},
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) {
					if res.Get("data.email") != nil {
						t.Fatal("the public tutor shows an e-mail address")
					}
				}},
			{Name: "a tutor without published courses", Method: "GET", Path: "/api/tutors/" + id(idle.ID), Status: 404},
			{Name: "an admin is no tutor", Method: "GET", Path: "/api/tutors/" + id(admin.ID), Status: 404},
			{Name: "a student is no tutor", Method: "GET", Path: "/api/tutors/" + id(env.As("student").ID), Status: 404},
			{Name: "unique tags", Method: "GET", Path: "/api/tags/uniqueTags", Status: 200,
				JSON: map[string]any{"data": []string{"e", "x", "y"}}},
		})
	})
}

// TestCatalogueFollowsChanges reads the catalogue after each kind of change
// of what it shows, made through the API or straight in the database: the
// next read shows it, although pages of the catalogue are cached.
func TestCatalogueFollowsChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tutor, adminC := env.As("tutor"), env.ClientAs("admin")
		cat := category(t, env, "Web")
		course := newCourse(t, env.ClientAs("tutor"), client.CourseBody{Title: "Alpha", Status: client.Ptr("published"), Tags: []string{"x"},
			Categories: []int64{cat}})
		read := func(want map[string]any) *apitest.Response {
			t.Helper()
			return apitest.RunOne(t, env, apitest.Scenario{Name: "the catalogue", Method: "GET", Path: "/api/courses",
				Status: 200, JSON: want})
		}
		read(map[string]any{"meta.total": 1, "data.0.title": "Alpha", "data.0.tags": []string{"x"},
			"data.0.categories.0.name": "Web", "data.0.authors.0.id": tutor.ID})

		apitest.Must(adminC.PatchAdminCoursesID(t.Context(), course, client.CoursePatch{Title: client.Ptr("Beta")}))(t)
		read(map[string]any{"data.0.title": "Beta"})

		execSQL(t, env, `INSERT INTO course_tags (course_id, tag) VALUES ($1, $2)`, course, "y")
		read(map[string]any{"data.0.tags": []string{"x", "y"}})

		execSQL(t, env, `UPDATE categories SET name = $1 WHERE id = $2`, "Mobile", cat)
		read(map[string]any{"data.0.categories.0.name": "Mobile"})
		execSQL(t, env, `DELETE FROM categories WHERE id = $1`, cat)
		read(map[string]any{"data.0.categories": []any{}})

		execSQL(t, env, `UPDATE users SET first_name = $1 WHERE id = $2`, "Renamed", tutor.ID)
		res := read(nil)
		if name, _ := res.Get("data.0.authors.0.name").(string); !strings.HasPrefix(name, "Renamed") {
			t.Fatalf("author's name %q, want the new first name", name)
		}
		execSQL(t, env, `DELETE FROM course_authors WHERE course_id = $1`, course)
		read(map[string]any{"data.0.authors": []any{}})

		execSQL(t, env, `UPDATE courses SET findable = $1 WHERE id = $2`, false, course)
		read(map[string]any{"meta.total": 0})
		execSQL(t, env, `UPDATE courses SET findable = $1 WHERE id = $2`, true, course)
		read(map[string]any{"meta.total": 1})

		second := newCourse(t, adminC, client.CourseBody{Title: "Gamma", Status: client.Ptr("published")})
		read(map[string]any{"meta.total": 2, "data.1.id": second})
		apitest.OK(t, adminC.DeleteAdminCoursesID(t.Context(), second))
		read(map[string]any{"meta.total": 1, "data.0.id": course})
	})
}
