package scan_test

import (
	"archive/zip"
	"bytes"
	"mime/multipart"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/scan/scantest"
)

// form is a multipart body of text fields and one file.
func form(t *testing.T, fields map[string]string, field, name string, data []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		w.WriteField(k, v)
	}
	part, err := w.CreateFormFile(field, name)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	w.Close()
	return b.Bytes(), w.FormDataContentType()
}

// TestUploadsAreScanned sends the EICAR test file through every route that
// takes an upload: each refuses it with a 422 naming the field and what
// clamd found, and stores nothing; clean files still pass.
func TestUploadsAreScanned(t *testing.T) {
	addr := scantest.Addr(t)
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.ClamAVAddr = addr }})
	admin, student := env.As("admin"), env.As("student")
	if res := env.Call(t, 200, "GET", "/api/health", "", nil); res.String("data.services.clamav") != "ok" {
		t.Errorf("health: %s", res.Body)
	}
	course := int64(env.Call(t, 201, "POST", "/api/admin/courses", admin.Token, map[string]any{"title": "Scanned"}).Number("data.id"))
	lesson := int64(env.Call(t, 201, "POST", "/api/admin/lessons", admin.Token,
		map[string]any{"course_id": course, "title": "One"}).Number("data.id"))
	topic := int64(env.Call(t, 201, "POST", "/api/admin/topics", admin.Token, map[string]any{"lesson": lesson, "title": "Notes",
		"topicable": `Lms\TopicTypes\Models\TopicContent\RichText`, "html": "<p>x</p>"}).Number("data.id"))
	topicsBefore := env.Count(t, `SELECT COUNT(*) FROM topics`)

	infectedPDF := []byte("%PDF-1.4\n" + scantest.EICAR + "\n%%EOF\n")
	infectedPNG := append(apitest.PNG(t), scantest.EICAR...)
	var pkg bytes.Buffer
	zw := zip.NewWriter(&pkg)
	f, _ := zw.Create("content/eicar.txt")
	f.Write([]byte(scantest.EICAR))
	zw.Close()

	for _, c := range []struct {
		name, method, path, token, field, file string
		fields                                 map[string]string
		data                                   []byte
	}{
		{"topic file", "POST", "/api/admin/topics", admin.Token, "file", "notes.pdf",
			map[string]string{"lesson": strconv.FormatInt(lesson, 10), "title": "PDF", "topicable": `Lms\TopicTypes\Models\TopicContent\PDF`}, infectedPDF},
		{"topic attachment", "POST", "/api/admin/topics/" + strconv.FormatInt(topic, 10) + "/resources", admin.Token, "resource", "notes.pdf",
			nil, infectedPDF},
		{"avatar", "POST", "/api/profile/upload-avatar", student.Token, "avatar", "me.png", nil, infectedPNG},
		{"course image", "POST", "/api/admin/courses/" + strconv.FormatInt(course, 10), admin.Token, "image", "cover.png",
			map[string]string{"_method": "PATCH"}, infectedPNG},
		{"H5P package", "POST", "/h5p/contents/upload", admin.Token, "h5p_file", "quiz.h5p", nil, pkg.Bytes()},
	} {
		body, ct := form(t, c.fields, c.field, c.file, c.data)
		res := env.Do(apitest.Request{Method: c.method, Path: c.path, Token: c.token, Body: body, Type: ct})
		if res.Status != 422 || !strings.Contains(string(res.Body), "contains malware (Eicar-Test-Signature") ||
			!strings.Contains(string(res.Body), `"`+c.field+`"`) {
			t.Errorf("%s: %d %s, want 422 naming the malware", c.name, res.Status, res.Body)
		}
	}
	if n := env.Count(t, `SELECT COUNT(*) FROM topics`); n != topicsBefore {
		t.Errorf("an infected upload created a topic")
	}
	body, ct := form(t, nil, "avatar", "me.png", apitest.PNG(t))
	if res := env.Do(apitest.Request{Method: "POST", Path: "/api/profile/upload-avatar", Token: student.Token, Body: body, Type: ct}); res.Status != 200 {
		t.Errorf("clean avatar: %d %s", res.Status, res.Body)
	}
}
