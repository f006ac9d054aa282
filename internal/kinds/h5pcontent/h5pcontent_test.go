package h5pcontent_test

import (
	"bytes"
	"net"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/client"
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
		ctx, tutor := t.Context(), env.As("tutor")
		c := env.UserClient(tutor)
		res := apitest.Must(c.PostAdminTopicsMultipart(ctx, topicForm(t, c, pkg, nil)))(t)
		topicable, _ := res.Topicable.(map[string]any)
		id, _ := topicable["content_id"].(string)

		content := apitest.Must(c.GetH5PContentsID(ctx, id))(t)
		if content.UserID != strconv.FormatInt(tutor.ID, 10) {
			t.Errorf("content owner %s, want the tutor %d", content.UserID, tutor.ID)
		}
		library := content.MainLibrary + " " + content.LibraryVersion
		if _, err := c.PatchH5PContentsID(ctx, id, client.ContentBody{Library: library, Params: client.ContentParams{
			Params: content.Parameters, Metadata: map[string]any{"title": "Edited quiz"}}}); err != nil {
			t.Errorf("tutor edits the content: %v", err)
		}

		// Only the internal token may name the acting user.
		student := env.As("student")
		forged := apitest.Must(c.WithHeader(h5p.ActingUserHeader, strconv.FormatInt(student.ID, 10)).PostH5PContentsUpload(ctx,
			client.PostH5PContentsUploadForm{H5PFile: quiz(pkg)}))(t)
		owner := apitest.Must(c.GetH5PContentsID(ctx, forged.ContentID))(t).UserID
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
		ctx, admin := t.Context(), env.ClientAs("admin")
		_, err := admin.PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{H5PFile: quiz(broken)})
		direct := apitest.Refused(t, err, 422)
		if len(direct.Problems) == 0 || direct.Problems[0].Message == "" {
			t.Fatalf("broken package at the service: %v %+v", direct, direct.Problems)
		}

		_, err = admin.PostAdminTopicsMultipart(ctx, topicForm(t, admin, broken, nil))
		if e := apitest.Refused(t, err, 422); len(e.Errors["package"]) == 0 || e.Errors["package"][0] != direct.Message {
			t.Errorf("broken package as a topic: %v, want 422 with %q", e, direct.Message)
		}
	})
}

// TestServiceUnreachable: while the H5P service cannot be reached, an H5P
// topic is refused with 503, whether it uploads a package or names
// existing content.
func TestServiceUnreachable(t *testing.T) {
	pkg := fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		withPackage := topicForm(t, admin, pkg, nil)
		existing := withPackage
		existing.ExtraFiles, existing.Extra = nil, map[string]string{"content_id": "1"}
		// A port nothing listens on.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		l.Close()
		env.Server.H5P.API.SetBaseURL("http://" + l.Addr().String())

		_, err = admin.PostAdminTopicsMultipart(ctx, withPackage)
		apitest.Refused(t, err, 503)
		_, err = admin.PostAdminTopicsMultipart(ctx, existing)
		apitest.Refused(t, err, 503)
	})
}

// topicForm is the form of a new H5P topic in a new course and lesson of
// the client's user, with the package (none when nil) and extra fields.
// The topic form does not list the H5P package's file field: it goes as
// an extra file.
func topicForm(t *testing.T, c *client.Client, pkg []byte, extra map[string]string) client.PostAdminTopicsForm {
	t.Helper()
	course := apitest.Must(c.PostAdminCourses(t.Context(), client.CourseBody{Title: "Course"}))(t).ID
	lesson := apitest.Must(c.PostAdminLessons(t.Context(), client.CreateLessonInputBody{CourseID: course, Title: "Lesson"}))(t).ID
	f := client.PostAdminTopicsForm{Lesson: lesson, Title: "Quiz", Topicable: h5pcontent.Class, Extra: extra}
	if pkg != nil {
		f.ExtraFiles = map[string]client.File{"package": *quiz(pkg)}
	}
	return f
}

// quiz is the package as an uploaded file.
func quiz(pkg []byte) *client.File {
	return &client.File{Name: "quiz.h5p", Content: bytes.NewReader(pkg)}
}
