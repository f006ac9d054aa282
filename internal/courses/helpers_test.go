package courses_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func id(n int64) string { return strconv.FormatInt(n, 10) }

// newCourse creates a course through the API as the client's user and
// returns its id.
func newCourse(t *testing.T, c *client.Client, body client.CourseBody) int64 {
	t.Helper()
	return apitest.Must(c.PostAdminCourses(t.Context(), body))(t).ID
}

// category inserts a category straight into the tenant database; the
// category routes belong to another capability.
func category(t *testing.T, env *apitest.Env, name string) int64 {
	t.Helper()
	return insertID(t, env, `INSERT INTO categories (name, slug, created_at, updated_at) VALUES ($1, $2, $3, $3)`,
		name, name, env.Clock.Now())
}

// topic inserts a topic straight into the tenant database; the topic
// routes belong to package topics.
func topic(t *testing.T, env *apitest.Env, courseID, lessonID int64, title string, active bool) int64 {
	t.Helper()
	return insertID(t, env, `INSERT INTO topics (lesson_id, course_id, title, position, active, topicable_type, content,
		created_at, updated_at) VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $7)`,
		lessonID, courseID, title, active, `Lms\TopicTypes\Models\TopicContent\RichText`, `{"html":"<p>Hi</p>"}`, env.Clock.Now())
}

// group creates a user group through the API, under parent when not 0.
func group(t *testing.T, env *apitest.Env, name string, parent int64) int64 {
	t.Helper()
	body := client.CreateGroupInputBody{Name: name}
	if parent != 0 {
		body.ParentID = client.Ptr(parent)
	}
	return apitest.Must(env.ClientAs("admin").PostAdminUserGroups(t.Context(), body))(t).ID
}

// join puts the user into the group through the API.
func join(t *testing.T, env *apitest.Env, groupID, userID int64) {
	t.Helper()
	apitest.Must(env.ClientAs("admin").PostAdminUserGroupsIDMembers(t.Context(), groupID, client.MemberInputBody{UserID: userID}))(t)
}

func insertID(t *testing.T, env *apitest.Env, query string, args ...any) int64 {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var n int64
	if err := tenant.DB.QueryRowContext(context.Background(), query+" RETURNING id", args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// foreignCourse adds a course with a high id to another tenant, so that
// the id exists there and nowhere in the default tenant.
func foreignCourse(t *testing.T, env *apitest.Env) int64 {
	t.Helper()
	env.As("other-admin")
	rec, err := env.Server.Registry.ByHost(context.Background(), "other.test")
	if err != nil {
		t.Fatal(err)
	}
	tenant, release := env.OpenTenant(rec)
	defer release()
	const foreignID = 900001
	if _, err := tenant.DB.ExecContext(context.Background(), `INSERT INTO courses (id, title, status, created_at, updated_at)
		VALUES ($1, 'Foreign', 'published', $2, $2)`, foreignID, env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	return foreignID
}

// multipartForm builds a multipart body with text fields (repeated for
// lists) and, when file is not nil, an image file.
func multipartForm(t *testing.T, fields [][2]string, file []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if file != nil {
		part, err := w.CreateFormFile("image", "cover.png")
		if err != nil {
			t.Fatal(err)
		}
		part.Write(file)
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// execSQL changes the tenant database straight, as another process or an
// operator could.
func execSQL(t *testing.T, env *apitest.Env, query string, args ...any) {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	if _, err := tenant.DB.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}
