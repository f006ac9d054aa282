package h5pcontent_test

import (
	"bytes"
	"mime/multipart"
	"net"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/h5p"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
)

// TestTutorOwnsUploadedContent: the H5P content a tutor creates with a
// topic belongs to the tutor, who may then edit it through the H5P
// service (it belonged to the platform, user 0, and the tutor got 403).
func TestTutorOwnsUploadedContent(t *testing.T) {
	pkg := fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tutor := env.As("tutor")
		course := env.Call(t, 201, "POST", "/api/admin/courses", tutor.Token, map[string]any{"title": "Tutor's course"}).Number("data.id")
		lesson := env.Call(t, 201, "POST", "/api/admin/lessons", tutor.Token,
			map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")

		body, ct := form(t, "package", pkg, map[string]string{
			"lesson": strconv.FormatFloat(lesson, 'f', -1, 64), "title": "Quiz", "topicable": h5pcontent.Class})
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: tutor.Token, Body: body, Type: ct})
		if res.Status != 201 {
			t.Fatalf("H5P topic: %d %s", res.Status, res.Body)
		}
		id := res.String("data.topicable.content_id")

		content := env.Call(t, 200, "GET", "/h5p/contents/"+id, tutor.Token, nil)
		if got := content.String("data.userId"); got != strconv.FormatInt(tutor.ID, 10) {
			t.Errorf("content owner %s, want the tutor %d", got, tutor.ID)
		}
		library := content.String("data.mainLibrary") + " " + content.String("data.libraryVersion")
		edit := env.Do(apitest.Request{Method: "PATCH", Path: "/h5p/contents/" + id, Token: tutor.Token,
			Body: map[string]any{"library": library, "params": map[string]any{
				"params": content.Get("data.parameters"), "metadata": map[string]any{"title": "Edited quiz"}}}})
		if edit.Status != 200 {
			t.Errorf("tutor edits the content: %d %s", edit.Status, edit.Body)
		}

		// Only the internal token may name the acting user.
		student := env.As("student")
		body, ct = form(t, "h5p_file", pkg, nil)
		forged := env.Do(apitest.Request{Method: "POST", Path: "/h5p/contents/upload", Token: tutor.Token,
			Headers: map[string]string{h5p.ActingUserHeader: strconv.FormatInt(student.ID, 10)}, Body: body, Type: ct})
		if forged.Status != 201 {
			t.Fatalf("tutor upload: %d %s", forged.Status, forged.Body)
		}
		owner := env.Call(t, 200, "GET", "/h5p/contents/"+forged.String("data.contentId"), tutor.Token, nil).String("data.userId")
		if owner != strconv.FormatInt(tutor.ID, 10) {
			t.Errorf("a tutor's upload naming another user belongs to %s, want the tutor", owner)
		}
	})
}

// TestRefusedPackage: a package the H5P service refuses is refused to the
// topic's creator with 422 and the service's message, which names the
// package's problems.
func TestRefusedPackage(t *testing.T) {
	broken := []byte("not a zip archive")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		body, ct := form(t, "h5p_file", broken, nil)
		direct := env.Do(apitest.Request{Method: "POST", Path: "/h5p/contents/upload", Token: admin.Token, Body: body, Type: ct})
		if direct.Status != 422 || direct.String("errors.0.message") == "" {
			t.Fatalf("broken package at the service: %d %s", direct.Status, direct.Body)
		}

		body, ct = form(t, "package", broken, topicFields(t, env, admin.Token))
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token, Body: body, Type: ct})
		if res.Status != 422 || res.String("errors.package.0") != direct.String("message") {
			t.Errorf("broken package as a topic: %d %s, want 422 with %q", res.Status, res.Body, direct.String("message"))
		}
	})
}

// TestServiceUnreachable: while the H5P service cannot be reached, an H5P
// topic is refused with 503, whether it uploads a package or names
// existing content.
func TestServiceUnreachable(t *testing.T) {
	pkg := fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		fields := topicFields(t, env, admin.Token)
		// A port nothing listens on.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		env.Server.H5P.API.SetBaseURL("http://" + l.Addr().String())

		body, ct := form(t, "package", pkg, fields)
		if res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token, Body: body, Type: ct}); res.Status != 503 {
			t.Errorf("package upload: %d %s, want 503", res.Status, res.Body)
		}
		fields["content_id"] = "1"
		body, ct = form(t, "", nil, fields)
		if res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token, Body: body, Type: ct}); res.Status != 503 {
			t.Errorf("existing content: %d %s, want 503", res.Status, res.Body)
		}
	})
}

// topicFields are the form fields of a new H5P topic in a new lesson.
func topicFields(t *testing.T, env *apitest.Env, token string) map[string]string {
	course := env.Call(t, 201, "POST", "/api/admin/courses", token, map[string]any{"title": "Course"}).Number("data.id")
	lesson := env.Call(t, 201, "POST", "/api/admin/lessons", token, map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")
	return map[string]string{"lesson": strconv.FormatFloat(lesson, 'f', -1, 64), "title": "Quiz", "topicable": h5pcontent.Class}
}

// form is a multipart body with the package as field (none when field is
// "") and the fields.
func form(t *testing.T, field string, pkg []byte, fields map[string]string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	if field != "" {
		part, err := w.CreateFormFile(field, "quiz.h5p")
		if err != nil {
			t.Fatal(err)
		}
		part.Write(pkg)
	}
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}
