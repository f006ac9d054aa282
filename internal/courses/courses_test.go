package courses_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
)

// fieldError reports whether a 422 answer names the field (keys such as
// "categories.0" hold dots, so they are looked up directly).
func fieldError(t *testing.T, res *apitest.Response, field string) {
	t.Helper()
	errs, _ := res.Get("errors").(map[string]any)
	if _, ok := errs[field]; !ok {
		t.Fatalf("no error on %s in %s", field, res.Body)
	}
}

// lastPayload returns the payload of the newest event with the name.
func lastPayload(t *testing.T, env *apitest.Env, name string) map[string]any {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var raw string
	if err := tenant.DB.QueryRowContext(context.Background(), `SELECT payload FROM events WHERE name = $1
		ORDER BY id DESC LIMIT 1`, name).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	json.Unmarshal([]byte(raw), &out)
	return out
}

func TestCourseAuthoring(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, tutor, student := env.As("admin"), env.As("tutor"), env.As("student")
		tutor2 := env.NewUser("tutor")
		web, data := category(t, env, "Web"), category(t, env, "Data")
		courses := func() int { return env.Count(t, `SELECT COUNT(*) FROM courses`) }
		foreign := foreignCourse(t, env)
		now := env.Clock.Now()

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous cannot list", Method: "GET", Path: "/api/admin/courses", Status: 401},
			{Name: "another tenant's token is refused", As: "other-admin", Method: "GET", Path: "/api/admin/courses", Status: 401},
			{Name: "student cannot list", As: "student", Method: "GET", Path: "/api/admin/courses", Status: 403},
			{Name: "student cannot create", As: "student", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X"}, Status: 403},
			{Name: "student gets no create form", As: "student", Method: "GET", Path: "/api/admin/courses/create", Status: 403},
			{Name: "title required", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"summary": "x"}, Status: 422, JSON: map[string]any{"errors.title": apitest.Present}},
			{Name: "blank title", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "  "}, Status: 422, JSON: map[string]any{"errors.title": apitest.Present}},
			{Name: "invalid status", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "status": "live"}, Status: 422, JSON: map[string]any{"errors.status": apitest.Present}},
			{Name: "invalid level", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "level": "guru"}, Status: 422, JSON: map[string]any{"errors.level": apitest.Present}},
			{Name: "window must be ordered", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body:   map[string]any{"title": "X", "active_from": now.Add(48 * time.Hour), "active_to": now.Add(time.Hour)},
				Status: 422, JSON: map[string]any{"errors.active_to": apitest.Present}},
			{Name: "hours at least one", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "hours_to_complete": 0}, Status: 422,
				JSON: map[string]any{"errors.hours_to_complete": apitest.Present}},
			{Name: "unknown category", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "categories": []int64{web, 999999}}, Status: 422,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { fieldError(t, res, "categories.1") }},
			{Name: "long tag", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "tags": []string{strings.Repeat("t", 65)}}, Status: 422,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { fieldError(t, res, "tags.0") }},
			{Name: "a student cannot author", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "authors": []int64{student.ID}}, Status: 422,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { fieldError(t, res, "authors.0") }},
			{Name: "unknown author", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "authors": []int64{999999}}, Status: 422,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { fieldError(t, res, "authors.0") }},
			{Name: "unknown field", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "X", "colour": "red"}, Status: 422},
		})
		if courses() != 0 {
			t.Fatal("a refused create stored a course")
		}

		var goID, tutorID, pairID int64
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "admin creates a published course", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "Go", "summary": "Learn Go", "status": "published", "categories": []int64{web},
					"tags": []string{"go", "web", "go"}, "hours_to_complete": 10, "language": "en", "level": "beginner"},
				Status: 201, Events: []string{"CourseStatusChanged", "CoursedPublished"},
				JSON: map[string]any{"data.title": "Go", "data.status": "published", "data.authors.0.id": admin.ID, "data.authors.1": nil, "data.categories.0.name": "Web", "data.tags": []string{"go", "web"},
					"data.hours_to_complete": 10, "data.findable": true, "data.public": false, "data.position": 1,
					"data.image_path": nil, "data.level": "beginner"},
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					goID = int64(res.Number("data.id"))
					if p := lastPayload(t, env, "CourseStatusChanged"); p["from"] != nil || p["to"] != "published" {
						t.Fatalf("status payload %v", p)
					}
				}},
			{Name: "tutor creates a draft and authors it", As: "tutor", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "Tutor's"}, Status: 201, Events: []string{},
				JSON: map[string]any{"data.status": "draft", "data.authors.0.id": tutor.ID, "data.authors.1": nil,
					"data.tags": []any{}, "data.categories": []any{}, "data.position": 2},
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { tutorID = int64(res.Number("data.id")) }},
			{Name: "admin names the authors", As: "admin", Method: "POST", Path: "/api/admin/courses",
				Body:   map[string]any{"title": "Pair", "authors": []int64{tutor2.ID}, "categories": []int64{data}},
				Status: 201, Events: []string{"CourseTutorAssigned"},
				JSON:  map[string]any{"data.authors.0.id": tutor2.ID, "data.authors.1": nil},
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) { pairID = int64(res.Number("data.id")) }},
			{Name: "a tutor naming authors stays one", As: "tutor", Method: "POST", Path: "/api/admin/courses",
				Body: map[string]any{"title": "Shared", "authors": []int64{tutor2.ID}}, Status: 201,
				Events: []string{"CourseTutorAssigned"}, Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) {
					if n := len(res.Get("data.authors").([]any)); n != 2 {
						t.Fatalf("authors %s", res.Body)
					}
				}},
		})
		c := func(n int64) string { return "/api/admin/courses/" + id(n) }

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "admin reads any course", As: "admin", Method: "GET", Path: c(tutorID), Status: 200,
				JSON: map[string]any{"data.title": "Tutor's"}},
			{Name: "tutor reads its course", As: "tutor", Method: "GET", Path: c(tutorID), Status: 200},
			{Name: "tutor cannot read another's course", As: "tutor", Method: "GET", Path: c(goID), Status: 403},
			{Name: "student cannot read", As: "student", Method: "GET", Path: c(goID), Status: 403},
			{Name: "unknown course", As: "admin", Method: "GET", Path: c(999999), Status: 404,
				JSON: map[string]any{"message": "Course not found."}},
			{Name: "another tenant's course is unknown", As: "admin", Method: "GET", Path: c(foreign), Status: 404},
			{Name: "create form", As: "tutor", Method: "GET", Path: "/api/admin/courses/create", Status: 200,
				JSON: map[string]any{"data.statuses": []string{"draft", "published", "archived", "published_unactivated"},
					"data.levels.0": "beginner", "data.categories.0.name": "Data", "data.tutors": apitest.Present}},
			{Name: "edit form", As: "admin", Method: "GET", Path: c(goID) + "/edit", Status: 200,
				JSON: map[string]any{"data.course.id": goID, "data.statuses.0": "draft", "data.categories.1.name": "Web"},
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) {
					found := false
					for _, u := range res.Get("data.tutors").([]any) {
						found = found || u.(map[string]any)["id"] == float64(tutor.ID)
					}
					if !found {
						t.Fatalf("tutor not offered: %s", res.Body)
					}
				}},
			{Name: "tutor gets no edit form of another's course", As: "tutor", Method: "GET", Path: c(goID) + "/edit", Status: 403},
			{Name: "student gets no edit form", As: "student", Method: "GET", Path: c(tutorID) + "/edit", Status: 403},
		})

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "tutor publishes its course", As: "tutor", Method: "PATCH", Path: c(tutorID),
				Body: map[string]any{"status": "published"}, Status: 200, Events: []string{"CourseStatusChanged", "CoursedPublished"},
				JSON: map[string]any{"data.status": "published", "data.title": "Tutor's"}},
			{Name: "archiving records the move only", As: "tutor", Method: "PATCH", Path: c(tutorID),
				Body: map[string]any{"status": "archived"}, Status: 200, Events: []string{"CourseStatusChanged"},
				Check: func(t *testing.T, env *apitest.Env, _ *apitest.Response) {
					if p := lastPayload(t, env, "CourseStatusChanged"); p["from"] != "published" || p["to"] != "archived" {
						t.Fatalf("status payload %v", p)
					}
				}},
			{Name: "published in the future is not active yet", As: "tutor", Method: "PATCH", Path: c(tutorID),
				Body: map[string]any{"status": "published", "active_from": now.Add(24 * time.Hour)}, Status: 200,
				Events: []string{"CourseStatusChanged"}},
			{Name: "opening the window activates it", As: "tutor", Method: "PATCH", Path: c(tutorID),
				Body: map[string]any{"active_from": nil}, Status: 200, Events: []string{"CoursedPublished"},
				JSON: map[string]any{"data.active_from": nil}},
			{Name: "invalid status changes nothing", As: "tutor", Method: "PATCH", Path: c(tutorID),
				Body: map[string]any{"status": "live", "title": "Renamed"}, Status: 422, Events: []string{},
				JSON: map[string]any{"errors.status": apitest.Present}},
			{Name: "unknown category changes nothing", As: "admin", Method: "PATCH", Path: c(goID),
				Body: map[string]any{"categories": []int64{999999}, "title": "Renamed"}, Status: 422},
			{Name: "the refused changes stored nothing", As: "admin", Method: "GET", Path: c(tutorID), Status: 200,
				JSON: map[string]any{"data.title": "Tutor's", "data.status": "published"}},
			{Name: "tutor cannot change another's course", As: "tutor", Method: "PATCH", Path: c(goID),
				Body: map[string]any{"title": "Mine"}, Status: 403},
			{Name: "student cannot change", As: "student", Method: "PATCH", Path: c(tutorID),
				Body: map[string]any{"title": "Mine"}, Status: 403},
			{Name: "unknown course", As: "admin", Method: "PATCH", Path: c(999999), Body: map[string]any{"title": "X"}, Status: 404},
			{Name: "another tenant's course", As: "admin", Method: "PATCH", Path: c(foreign), Body: map[string]any{"title": "X"}, Status: 404},
			{Name: "put needs a title", As: "admin", Method: "PUT", Path: c(goID), Body: map[string]any{"summary": "x"}, Status: 422},
			{Name: "put", As: "admin", Method: "PUT", Path: c(goID),
				Body: map[string]any{"title": "Go 2", "tags": []string{"go"}, "categories": []int64{web, data},
					"active_to": now.Add(30 * 24 * time.Hour)}, Status: 200, Events: []string{},
				JSON: map[string]any{"data.title": "Go 2", "data.tags": []string{"go"}, "data.categories.0.name": "Data",
					"data.summary": "Learn Go", "data.status": "published", "data.active_to": apitest.Present}},
			{Name: "patch null clears", As: "admin", Method: "PATCH", Path: c(goID),
				Body: map[string]any{"active_to": nil, "hours_to_complete": nil}, Status: 200,
				JSON: map[string]any{"data.active_to": nil, "data.hours_to_complete": nil, "data.title": "Go 2"}},
			{Name: "a tutor replacing the authors stays one", As: "tutor", Method: "PATCH", Path: c(tutorID),
				Body: map[string]any{"authors": []int64{tutor2.ID}}, Status: 200, Events: []string{"CourseTutorAssigned"},
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) {
					if n := len(res.Get("data.authors").([]any)); n != 2 {
						t.Fatalf("authors %s", res.Body)
					}
				}},
			{Name: "an admin may replace the authors", As: "admin", Method: "PATCH", Path: c(pairID),
				Body: map[string]any{"authors": []int64{admin.ID}}, Status: 200,
				Events: []string{"CourseTutorAssigned", "CourseTutorUnassigned"},
				JSON:   map[string]any{"data.authors.0.id": admin.ID, "data.authors.1": nil}},
			{Name: "update with form data as JSON", As: "tutor", Method: "POST", Path: c(tutorID),
				Body: map[string]any{"summary": "From a form"}, Status: 200, JSON: map[string]any{"data.summary": "From a form"}},
			{Name: "update with form data, wrong course owner", As: "tutor", Method: "POST", Path: c(goID),
				Body: map[string]any{"summary": "x"}, Status: 403},
			{Name: "update with form data, unknown field", As: "tutor", Method: "POST", Path: c(tutorID),
				Body: map[string]any{"colour": "red"}, Status: 422},
			{Name: "update with form data, student", As: "student", Method: "POST", Path: c(tutorID),
				Body: map[string]any{"summary": "x"}, Status: 403},
			{Name: "update with form data, unknown course", As: "admin", Method: "POST", Path: c(foreign),
				Body: map[string]any{"summary": "x"}, Status: 404},
		})

		// Multipart updates with an image.
		body, ctype := multipartForm(t, [][2]string{{"_method", "PATCH"}, {"title", "With image"}, {"public", "1"},
			{"tags[]", "a"}, {"tags[]", "b"}, {"categories[]", id(web)}, {"hours_to_complete", "5"}}, apitest.PNG(t))
		res := env.Do(apitest.Request{Method: "POST", Path: c(tutorID), Token: tutor.Token, Body: body, Type: ctype})
		if res.Status != 200 || res.String("data.title") != "With image" || res.Get("data.public") != true ||
			res.Number("data.hours_to_complete") != 5 || len(res.Get("data.tags").([]any)) != 2 {
			t.Fatalf("multipart update: %d %s", res.Status, res.Body)
		}
		first := res.String("data.image_path")
		if link := res.String("data.image_url"); !strings.HasPrefix(link, "/api/files/courses/") {
			t.Fatalf("no signed image link: %s", res.Body)
		} else if img := env.Do(apitest.Request{Method: "GET", Path: link}); img.Status != 200 || len(img.Body) != len(apitest.PNG(t)) {
			t.Fatalf("the image link serves %d %q", img.Status, img.Body)
		}
		if !strings.HasPrefix(first, "courses/"+id(tutorID)+"/") || !env.BlobExists(t, first) {
			t.Fatalf("image not stored: %s", res.Body)
		}
		// The first upload above sends the form as browsers do (_method,
		// 1 for true); the others go through the typed client.
		ctx, tutorC := t.Context(), env.UserClient(tutor)
		image := func(content []byte) *client.File {
			return &client.File{Name: "cover.png", Content: bytes.NewReader(content)}
		}
		replaced := apitest.Must(tutorC.PostAdminCoursesIDMultipart(ctx, tutorID, client.PostAdminCoursesIDForm{Image: image(apitest.PNG(t))}))(t)
		second := ""
		if replaced.ImagePath != nil {
			second = *replaced.ImagePath
		}
		if second == "" || second == first || !env.BlobExists(t, second) || env.BlobExists(t, first) {
			t.Fatalf("image not replaced: %+v", replaced)
		}
		_, err := tutorC.PostAdminCoursesIDMultipart(ctx, tutorID, client.PostAdminCoursesIDForm{Title: client.Ptr("Not stored"),
			Image: image([]byte("%PDF-1.4 not an image"))})
		if e := apitest.Refused(t, err, 422); len(e.Errors["image"]) == 0 {
			t.Fatalf("a PDF as image: no error on image in %v", e)
		}
		_, err = tutorC.PostAdminCoursesIDMultipart(ctx, tutorID, client.PostAdminCoursesIDForm{Status: client.Ptr("live"),
			Image: image(apitest.PNG(t))})
		apitest.Refused(t, err, 422)
		if env.Count(t, `SELECT COUNT(*) FROM courses WHERE title = 'Not stored'`) != 0 {
			t.Fatal("invalid status with image: the refused title was stored")
		}
		files := 0
		tenant, release := env.OpenTenant(env.Tenant)
		tenant.Blob.List(context.Background(), "courses/"+id(tutorID)+"/", func(blob.Info) error { files++; return nil })
		release()
		if files != 1 {
			t.Fatalf("refused uploads left %d files", files)
		}
		res = env.Do(apitest.Request{Method: "POST", Path: c(tutorID), Token: tutor.Token,
			Body: []byte("title=x"), Type: "application/x-www-form-urlencoded"})
		if res.Status != 415 {
			t.Fatalf("urlencoded form: %d %s", res.Status, res.Body)
		}

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "admin lists every course", As: "admin", Method: "GET", Path: "/api/admin/courses", Status: 200,
				JSON: map[string]any{"meta.total": 4, "data.0.id": goID}},
			{Name: "tutor lists its courses", As: "tutor", Method: "GET", Path: "/api/admin/courses", Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "tutor cannot list another's courses", As: "tutor", Method: "GET",
				Path: "/api/admin/courses?author_id=" + id(admin.ID), Status: 200, JSON: map[string]any{"meta.total": 0}},
			{Name: "title search", As: "admin", Method: "GET", Path: "/api/admin/courses?title=GO%202", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": goID}},
			{Name: "status filter", As: "admin", Method: "GET", Path: "/api/admin/courses?status=draft", Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "bad status filter", As: "admin", Method: "GET", Path: "/api/admin/courses?status=live", Status: 422},
			{Name: "category filter", As: "admin", Method: "GET", Path: "/api/admin/courses?category_id=" + id(data), Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "tag filter", As: "admin", Method: "GET", Path: "/api/admin/courses?tag=a", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": tutorID}},
			{Name: "author filter", As: "admin", Method: "GET", Path: "/api/admin/courses?author_id=" + id(tutor2.ID), Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "order and pages", As: "admin", Method: "GET", Path: "/api/admin/courses?order_by=title&order=desc&per_page=1&page=2",
				Status: 200, JSON: map[string]any{"meta.total": 4, "meta.last_page": 4, "data.0.title": "Shared"}},
			{Name: "tags with counts", As: "admin", Method: "GET", Path: "/api/admin/courses/search/tags", Status: 200,
				JSON: map[string]any{"data": []any{map[string]any{"tag": "a", "count": 1}, map[string]any{"tag": "b", "count": 1},
					map[string]any{"tag": "go", "count": 1}}}},
			{Name: "tutor sees its tags", As: "tutor", Method: "GET", Path: "/api/admin/courses/search/tags", Status: 200,
				JSON: map[string]any{"data.0.tag": "a", "data.2": nil}},
			{Name: "student gets no tags", As: "student", Method: "GET", Path: "/api/admin/courses/search/tags", Status: 403},
			{Name: "courses of a category", As: "admin", Method: "GET", Path: "/api/admin/courses/search/" + id(web), Status: 200,
				JSON: map[string]any{"meta.total": 2, "data.0.id": goID, "data.1.id": tutorID}},
			{Name: "tutor's courses of a category", As: "tutor", Method: "GET", Path: "/api/admin/courses/search/" + id(web), Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": tutorID}},
			{Name: "student cannot search", As: "student", Method: "GET", Path: "/api/admin/courses/search/" + id(web), Status: 403},
			{Name: "assignable users", As: "admin", Method: "GET", Path: "/api/admin/courses/users/assignable?search=student", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": student.ID, "data.0.email": student.Email}},
			{Name: "tutors may pick users", As: "tutor", Method: "GET", Path: "/api/admin/courses/users/assignable?per_page=2", Status: 200,
				JSON: map[string]any{"meta.per_page": 2}},
			{Name: "student cannot pick users", As: "student", Method: "GET", Path: "/api/admin/courses/users/assignable", Status: 403},
		})

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "sort", As: "admin", Method: "POST", Path: "/api/admin/courses/sort",
				Body: map[string]any{"courses": []int64{tutorID, goID}}, Status: 200},
			{Name: "sorted", As: "admin", Method: "GET", Path: "/api/admin/courses?order_by=position&per_page=2", Status: 200,
				JSON: map[string]any{"data.0.id": tutorID, "data.0.position": 1, "data.1.id": goID, "data.1.position": 2}},
			{Name: "tutor cannot sort another's course", As: "tutor", Method: "POST", Path: "/api/admin/courses/sort",
				Body: map[string]any{"courses": []int64{goID, tutorID}}, Status: 403},
			{Name: "sort unknown", As: "admin", Method: "POST", Path: "/api/admin/courses/sort",
				Body: map[string]any{"courses": []int64{goID, foreign}}, Status: 422},
			{Name: "sort nothing", As: "admin", Method: "POST", Path: "/api/admin/courses/sort",
				Body: map[string]any{"courses": []int64{}}, Status: 422},
			{Name: "student cannot sort", As: "student", Method: "POST", Path: "/api/admin/courses/sort",
				Body: map[string]any{"courses": []int64{goID}}, Status: 403},
			{Name: "the refused sorts changed nothing", As: "admin", Method: "GET", Path: c(goID), Status: 200,
				JSON: map[string]any{"data.position": 2}},
		})

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "tutor cannot delete another's course", As: "tutor", Method: "DELETE", Path: c(goID), Status: 403},
			{Name: "student cannot delete", As: "student", Method: "DELETE", Path: c(tutorID), Status: 403},
			{Name: "tutor deletes its course", As: "tutor", Method: "DELETE", Path: c(tutorID), Status: 200},
			{Name: "gone", As: "admin", Method: "GET", Path: c(tutorID), Status: 404},
			{Name: "deleting again", As: "admin", Method: "DELETE", Path: c(tutorID), Status: 404},
			{Name: "another tenant's course", As: "admin", Method: "DELETE", Path: c(foreign), Status: 404},
		})
		if env.BlobExists(t, second) {
			t.Fatal("the deleted course's image is still stored")
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM course_tags WHERE course_id = $1`, tutorID); n != 0 {
			t.Fatalf("%d tags of the deleted course remain", n)
		}
	})
}
