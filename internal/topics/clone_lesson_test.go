package topics_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

func TestCloneLessonTopics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		createRich(t, w, w.tutor, w.lesson, "One")
		pdf := num(createPDF(t, w, w.tutor, w.lesson), "data.id")
		body, ct := multipartBody(t, file("resource", "sheet.txt", []byte("sheet")))
		send(t, env, 201, "POST", "/api/admin/topics/"+id(pdf)+"/resources/", w.tutor, body, ct)
		target := insertLesson(t, env, w.course, 3)

		exec(t, env, func(tn *platform.Tenant) error {
			return tn.Tx(context.Background(), func(tx *sqldb.Tx) error {
				return topics.CloneLessonTopics(context.Background(), tx, tn, env.Server.Kinds, w.lesson, target)
			})
		})
		res := send(t, env, 200, "GET", "/api/admin/topics?lesson_id="+id(target), w.tutor, nil, "")
		if res.Number("meta.total") != 2 || res.String("data.0.title") != "One" || res.Number("data.0.order") != 1 ||
			res.String("data.1.kind") != "pdf" || res.Number("data.1.order") != 2 {
			t.Fatalf("cloned lesson: %s", res.Body)
		}
		clonedPDF := num(res, "data.1.id")
		one := send(t, env, 200, "GET", "/api/admin/topics/"+id(clonedPDF), w.tutor, nil, "")
		if one.String("data.resources.0.name") != "sheet.txt" {
			t.Errorf("cloned resources: %s", one.Body)
		}
		content := blobKeys(t, env, "content/")
		if len(content) != 2 || content[0] == content[1] || !bytes.Equal(blobBytes(t, env, content[0]), blobBytes(t, env, content[1])) {
			t.Errorf("cloned content files: %v", content)
		}
		if n := len(blobKeys(t, env, "resources/")); n != 2 {
			t.Errorf("%d resource files, want 2", n)
		}
		// A failing transaction leaves no copies behind.
		before := len(blobKeys(t, env, ""))
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		err := tn.Tx(context.Background(), func(tx *sqldb.Tx) error {
			return topics.CloneLessonTopics(context.Background(), tx, tn, env.Server.Kinds, w.lesson, 999999)
		})
		if err == nil {
			t.Fatal("clone into an unknown lesson succeeded")
		}
		if after := len(blobKeys(t, env, "")); after != before {
			t.Errorf("files after a failed clone: %d, want %d", after, before)
		}
	})
}

// TestUploadsLeaveNoTempFiles checks that the files a form spools are
// removed whether the request succeeds or fails.
func TestUploadsLeaveNoTempFiles(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	w := newWorld(t, env)
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	createPDF(t, w, w.tutor, w.lesson)
	body, ct := multipartBody(t, text("lesson", id(w.lesson)), text("title", "x"), text("topicable", pdfClass),
		file("file", "fake.pdf", pngData))
	send(t, env, 422, "POST", "/api/admin/topics", w.tutor, body, ct)
	reader, ct := bigUpload(map[string]string{"lesson": id(w.lesson), "title": "Big", "topicable": pdfClass}, "file", "big.pdf", 50<<20+1)
	send(t, env, 413, "POST", "/api/admin/topics", w.tutor, reader, ct)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}
