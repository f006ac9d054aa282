package scan_test

import (
	"archive/zip"
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/scan/scantest"
)

// TestUploadsAreScanned sends the EICAR test file through every route that
// takes an upload: each refuses it with a 422 naming the field and what
// clamd found, and stores nothing; clean files still pass.
func TestUploadsAreScanned(t *testing.T) {
	addr := scantest.Addr(t)
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.ClamAVAddr = addr }})
	ctx := t.Context()
	admin, student := env.ClientAs("admin"), env.ClientAs("student")
	if h := apitest.Must(env.ClientAs("").GetHealth(ctx))(t); h.Services["clamav"] != "ok" {
		t.Errorf("health: %+v", h)
	}
	course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Scanned"}))(t).ID
	lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "One"}))(t).ID
	topic := apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Notes",
		Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, HTML: client.Ptr("<p>x</p>")}))(t).ID
	topicsBefore := env.Count(t, `SELECT COUNT(*) FROM topics`)

	infectedPDF := []byte("%PDF-1.4\n" + scantest.EICAR + "\n%%EOF\n")
	infectedPNG := append(apitest.PNG(t), scantest.EICAR...)
	var pkg bytes.Buffer
	zw := zip.NewWriter(&pkg)
	f, _ := zw.Create("content/eicar.txt")
	f.Write([]byte(scantest.EICAR))
	zw.Close()
	file := func(name string, data []byte) *client.File {
		return &client.File{Name: name, Content: bytes.NewReader(data)}
	}

	for _, c := range []struct {
		name, field string
		upload      func() error
	}{
		{"topic file", "file", func() error {
			_, err := admin.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: lesson, Title: "PDF",
				Topicable: `Lms\TopicTypes\Models\TopicContent\PDF`, File: file("notes.pdf", infectedPDF)})
			return err
		}},
		{"topic attachment", "resource", func() error {
			_, err := admin.PostAdminTopicsIDResources(ctx, topic, client.PostAdminTopicsIDResourcesForm{
				Resource: file("notes.pdf", infectedPDF)})
			return err
		}},
		{"avatar", "avatar", func() error {
			_, err := student.PostProfileUploadAvatar(ctx, client.PostProfileUploadAvatarForm{Avatar: file("me.png", infectedPNG)})
			return err
		}},
		{"course image", "image", func() error {
			_, err := admin.PostAdminCoursesIDMultipart(ctx, course, client.PostAdminCoursesIDForm{Image: file("cover.png", infectedPNG)})
			return err
		}},
		{"H5P package", "h5p_file", func() error {
			_, err := admin.PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{H5PFile: file("quiz.h5p", pkg.Bytes())})
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := apitest.Refused(t, c.upload(), 422)
			if !slices.ContainsFunc(e.Errors[c.field], func(m string) bool {
				return strings.Contains(m, "contains malware (Eicar-Test-Signature")
			}) {
				t.Errorf("want the malware named on %s: %v", c.field, e)
			}
		})
	}
	if n := env.Count(t, `SELECT COUNT(*) FROM topics`); n != topicsBefore {
		t.Errorf("an infected upload created a topic")
	}
	apitest.Must(student.PostProfileUploadAvatar(ctx, client.PostProfileUploadAvatarForm{Avatar: file("me.png", apitest.PNG(t))}))(t)
}
