package client_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/kinds/richtext"
)

// The client against a real server (SQLite, and PostgreSQL when
// configured): an author builds a course with a JSON topic and an
// uploaded one, a learner reads it, and errors arrive typed.
func TestClientAgainstServer(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		admin := env.Client("", env.As("admin").Token)
		student := env.As("student")
		learner := env.Client("", student.Token)

		course, err := admin.PostAdminCourses(ctx, client.CourseBody{Title: "Typed client", Summary: client.Ptr("Made by the client"),
			Tags: []string{"go"}})
		if err != nil {
			t.Fatalf("create course: %v", err)
		}
		lesson, err := admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course.ID, Title: "First lesson"})
		if err != nil {
			t.Fatalf("create lesson: %v", err)
		}
		text, err := admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson.ID, Title: "Reading",
			Topicable: richtext.Class, Markdown: client.Ptr("# Hello\n\nSome *text*.")})
		if err != nil {
			t.Fatalf("create rich-text topic: %v", err)
		}
		if text.Kind != "richtext" || text.LessonID != lesson.ID {
			t.Fatalf("rich-text topic: %+v", text)
		}
		// Multipart: the file streams from a reader.
		image, err := admin.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: lesson.ID, Title: "Picture",
			Topicable: file.Image().Class(), Preview: client.Ptr(true),
			File: &client.File{Name: "picture.png", Content: bytes.NewReader(apitest.PNG(t))}})
		if err != nil {
			t.Fatalf("upload image topic: %v", err)
		}
		if image.Kind != "image" || !image.Preview {
			t.Fatalf("image topic: %+v", image)
		}
		if _, err := admin.PatchAdminCoursesID(ctx, course.ID, client.CoursePatch{Status: client.Ptr("published")}); err != nil {
			t.Fatalf("publish: %v", err)
		}
		if _, err := admin.PostAdminCoursesIDAccess(ctx, course.ID, client.AssignInputBody{
			Users: []client.GrantBody{{ID: student.ID}}}); err != nil {
			t.Fatalf("grant access: %v", err)
		}

		// Lists come as a page with its meta.
		page, err := admin.GetAdminCourses(ctx, client.GetAdminCoursesParams{Title: client.Ptr("Typed"), PerPage: client.Ptr[int64](5)})
		if err != nil {
			t.Fatalf("list courses: %v", err)
		}
		if len(page.Items) != 1 || page.Items[0].ID != course.ID || page.Meta.Total != 1 || page.Meta.PerPage != 5 {
			t.Fatalf("course page: %+v", page)
		}

		program, err := learner.GetCoursesIDProgram(ctx, course.ID)
		if err != nil {
			t.Fatalf("program: %v", err)
		}
		if len(program.Lessons) != 1 || len(program.Lessons[0].Topics) != 2 || program.Lessons[0].Topics[1].Title != "Picture" {
			t.Fatalf("program: %+v", program)
		}
		me, err := learner.GetProfileMe(ctx)
		if err != nil || me.ID != student.ID || me.Email != student.Email {
			t.Fatalf("profile: %+v, %v", me, err)
		}

		// Errors: status, message and the messages by field.
		_, err = admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course.ID})
		var apiErr *client.Error
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || len(apiErr.Errors["title"]) == 0 {
			t.Fatalf("lesson without title: %#v", err)
		}
		if _, err := learner.GetAdminCoursesID(ctx, course.ID); client.StatusOf(err) != http.StatusForbidden {
			t.Fatalf("student reading an admin course: %v", err)
		}
		if _, err := env.Client("", "").GetProfileMe(ctx); client.StatusOf(err) != http.StatusUnauthorized {
			t.Fatalf("anonymous profile: %v", err)
		}
		if _, err := admin.GetAdminCoursesID(ctx, course.ID+1000); client.StatusOf(err) != http.StatusNotFound {
			t.Fatalf("unknown course: %v", err)
		}
	})
}

// A header set once is sent on every call: the same Idempotency-Key makes
// the second create a replay of the first.
func TestClientHeaders(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	ctx := context.Background()
	admin := env.Client("", env.As("admin").Token).WithHeader("Idempotency-Key", "client-test-1")
	first, err := admin.PostAdminCourses(ctx, client.CourseBody{Title: "Once"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := admin.PostAdminCourses(ctx, client.CourseBody{Title: "Once"})
	if err != nil || again.ID != first.ID {
		t.Fatalf("replay: %+v, %v (first %d)", again, err, first.ID)
	}
}

// A rate-limited call is an *Error that says so, with Retry-After.
func TestClientRateLimited(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	anon := env.Client("", "")
	var err error
	for i := 0; i < 100 && err == nil; i++ {
		_, err = anon.GetName(context.Background())
	}
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || !apiErr.RateLimited() || apiErr.RetryAfter <= 0 {
		t.Fatalf("after 100 calls of a 60/min route: %#v", err)
	}
}

// The H5P service's REST routes through the typed client: answers decode
// into their types, and a refused package arrives with its problems.
func TestClientH5P(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	ctx := context.Background()
	admin := env.Client("", env.As("admin").Token)
	_, err := admin.PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
		H5PFile: &client.File{Name: "broken.h5p", Content: bytes.NewReader([]byte("not a zip archive"))}})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnprocessableEntity || len(apiErr.Problems) == 0 ||
		apiErr.Problems[0].Code == "" {
		t.Fatalf("upload of a broken package: %#v", err)
	}
	page, err := admin.GetH5PContents(ctx, client.GetH5PContentsParams{PerPage: client.Ptr(int64(500))})
	if err != nil || len(page.Items) != 0 || page.Meta.PerPage != 100 || page.Meta.LastPage != 1 {
		t.Fatalf("contents: %+v, %v", page, err)
	}
	libs, err := admin.GetH5PLibraries(ctx)
	if err != nil || len(libs) != 0 {
		t.Fatalf("libraries: %+v, %v", libs, err)
	}
	if _, err := admin.DeleteH5PContentsID(ctx, "12345"); client.StatusOf(err) != http.StatusNotFound {
		t.Fatalf("delete of a missing content: %v", err)
	}
	student := env.Client("", env.As("student").Token)
	if _, err := student.PatchH5PLibrariesID(ctx, "H5P.Foo-1.0", client.RestrictedBody{Restricted: client.Ptr(true)}); client.StatusOf(err) != http.StatusForbidden {
		t.Fatalf("student restricting a library: %v", err)
	}
}
