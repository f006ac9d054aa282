package topics_test

import (
	"bytes"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

func TestUpdate(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := createRich(t, w, w.tutor, w.lesson, "Old")
		foreign := createRich(t, w, w.admin, w.foreignLesson, "Foreign")
		path := "/api/admin/topics/" + id(topic)
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "patch title only", As: "tutor", Method: "PATCH", Path: path, Body: map[string]any{"title": "New"}, Status: 200,
				Events: []string{"CourseContentChanged"}, JSON: map[string]any{"data.title": "New", "data.topicable.html": "<p>Old</p>", "data.active": true}},
			{Name: "put hides and edits content", As: "tutor", Method: "PUT", Path: path,
				Body: map[string]any{"active": false, "can_skip": true, "markdown": "*new*", "order": 7}, Status: 200,
				JSON: map[string]any{"data.active": false, "data.can_skip": true, "data.order": 7, "data.topicable.html": "<p><em>new</em></p>\n"}},
			{Name: "move to another lesson of the course", As: "tutor", Method: "PATCH", Path: path,
				Body: map[string]any{"lesson": w.lesson2}, Status: 200, JSON: map[string]any{"data.lesson_id": w.lesson2, "data.order": 1}},
			{Name: "no move into a course the tutor does not author", As: "tutor", Method: "PATCH", Path: path,
				Body: map[string]any{"lesson": w.foreignLesson}, Status: 403},
			{Name: "empty title", As: "tutor", Method: "PATCH", Path: path, Body: map[string]any{"title": " "}, Status: 422,
				JSON: map[string]any{"errors.title": apitest.Present}},
			// Common fields sent empty are checked, not taken for left
			// out (nor "" for false); optional text is cleared.
			{Name: "empty typed fields", As: "tutor", Method: "PATCH", Path: path,
				Body: map[string]any{"lesson": "", "order": "", "topicable": "", "active": "", "preview": "", "can_skip": ""}, Status: 422,
				JSON: map[string]any{"errors.lesson": apitest.Present, "errors.order": apitest.Present, "errors.active": apitest.Present,
					"errors.preview": apitest.Present, "errors.can_skip": apitest.Present}},
			{Name: "empty topicable", As: "tutor", Method: "PATCH", Path: path, Body: map[string]any{"topicable": ""}, Status: 422,
				JSON: map[string]any{"errors.topicable": apitest.Present}},
			{Name: "summary set", As: "tutor", Method: "PATCH", Path: path, Body: map[string]any{"summary": "Soil.", "duration": "5 min"},
				Status: 200, JSON: map[string]any{"data.summary": "Soil.", "data.duration": "5 min"}},
			{Name: "summary and duration cleared", As: "tutor", Method: "PATCH", Path: path, Body: map[string]any{"summary": "", "duration": ""},
				Status: 200, JSON: map[string]any{"data.summary": "", "data.duration": ""}},
			{Name: "unknown class", As: "tutor", Method: "PATCH", Path: path, Body: map[string]any{"topicable": "Nope"}, Status: 422},
			{Name: "tutor cannot edit another's", As: "tutor", Method: "PATCH", Path: "/api/admin/topics/" + id(foreign),
				Body: map[string]any{"title": "x"}, Status: 403},
			{Name: "student cannot edit", As: "student", Method: "PUT", Path: path, Body: map[string]any{"title": "x"}, Status: 403},
			{Name: "unknown topic", As: "admin", Method: "PATCH", Path: "/api/admin/topics/999999", Body: map[string]any{"title": "x"}, Status: 404},
			{Name: "admin edits any", As: "admin", Method: "PATCH", Path: "/api/admin/topics/" + id(foreign),
				Body: map[string]any{"preview": true}, Status: 200, JSON: map[string]any{"data.preview": true, "data.title": "Foreign"}},
		})

		// POST with form data: the class changes to PDF and the file comes
		// with it; then a new file replaces the old one, whose file is
		// deleted.
		body, ct := multipartBody(t, text("topicable", pdfClass), text("active", "true"), file("file", "a.pdf", pdfData))
		res := send(t, env, 200, "POST", path, w.tutor, body, ct)
		if res.String("data.kind") != "pdf" || res.Get("data.active") != true {
			t.Fatalf("class change: %s", res.Body)
		}
		first := blobKeys(t, env, "content/")
		if len(first) != 1 {
			t.Fatalf("files after the class change: %v", first)
		}
		second := append(bytes.Clone(pdfData), []byte("% second\n")...)
		body, ct = multipartBody(t, file("file", "b.pdf", second))
		res = send(t, env, 200, "POST", path, w.tutor, body, ct)
		if res.String("data.topicable.name") != "b.pdf" {
			t.Fatalf("replace file: %s", res.Body)
		}
		keys := blobKeys(t, env, "content/")
		if len(keys) != 1 || keys[0] == first[0] || !bytes.Equal(blobBytes(t, env, keys[0]), second) {
			t.Errorf("after replacing: %v (before %v)", keys, first)
		}
		// A refused file changes nothing.
		body, ct = multipartBody(t, file("file", "c.pdf", pngData))
		send(t, env, 422, "POST", path, w.tutor, body, ct)
		if now := blobKeys(t, env, "content/"); len(now) != 1 || now[0] != keys[0] {
			t.Errorf("a refused update changed files: %v", now)
		}
		// Back to rich text: the PDF file goes.
		send(t, env, 200, "PATCH", path, w.tutor, map[string]any{"topicable": richClass, "html": "<p>again</p>"}, "")
		if left := blobKeys(t, env, "content/"); len(left) != 0 {
			t.Errorf("files left after changing to rich text: %v", left)
		}
	})
}

func TestDelete(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := createPDF(t, w, w.tutor, w.lesson)
		topic := num(res, "data.id")
		foreign := createRich(t, w, w.admin, w.foreignLesson, "Foreign")
		body, ct := multipartBody(t, file("resource", "extra.txt", []byte("extra")))
		send(t, env, 201, "POST", "/api/admin/topics/"+id(topic)+"/resources/", w.tutor, body, ct)
		path := "/api/admin/topics/" + id(topic)
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "student refused", As: "student", Method: "DELETE", Path: path, Status: 403},
			{Name: "tutor refused on another's", As: "tutor", Method: "DELETE", Path: "/api/admin/topics/" + id(foreign), Status: 403},
			{Name: "author deletes", As: "tutor", Method: "DELETE", Path: path, Status: 200, Events: []string{"CourseContentChanged"},
				JSON: map[string]any{"success": true, "message": "Topic deleted."}},
			{Name: "second delete succeeds too", As: "tutor", Method: "DELETE", Path: path, Status: 200},
			{Name: "student still refused", As: "student", Method: "DELETE", Path: path, Status: 403},
			{Name: "gone", As: "admin", Method: "GET", Path: path, Status: 404},
		})
		if keys := blobKeys(t, env, ""); len(keys) != 0 {
			t.Errorf("files left after delete: %v", keys)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM topic_resources`); n != 0 {
			t.Errorf("%d resources left", n)
		}
	})
}

func TestClone(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		createRich(t, w, w.tutor, w.lesson, "First")
		res := createPDF(t, w, w.tutor, w.lesson)
		topic := num(res, "data.id")
		body, ct := multipartBody(t, file("resource", "sheet.txt", []byte("worksheet")))
		send(t, env, 201, "POST", "/api/admin/topics/"+id(topic)+"/resources/", w.tutor, body, ct)
		path := "/api/admin/topics/" + id(topic) + "/clone"

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "student refused", As: "student", Method: "POST", Path: path, Status: 403},
			{Name: "anonymous refused", Method: "POST", Path: path, Status: 401},
			{Name: "into a course the tutor does not author", As: "tutor", Method: "POST", Path: path,
				Body: map[string]any{"lesson_id": w.foreignLesson}, Status: 403},
			{Name: "into an unknown lesson", As: "tutor", Method: "POST", Path: path, Body: map[string]any{"lesson_id": 999999}, Status: 404},
			{Name: "unknown topic", As: "tutor", Method: "POST", Path: "/api/admin/topics/999999/clone", Status: 404},
		})
		send(t, env, 403, "POST", path, w.otherTutor, nil, "")
		if n := env.Count(t, `SELECT COUNT(*) FROM topics`); n != 2 {
			t.Fatalf("refused clones stored topics: %d", n)
		}

		clone := send(t, env, 201, "POST", path, w.tutor, nil, "")
		cloneID := num(clone, "data.id")
		if cloneID == topic || num(clone, "data.order") != 3 || num(clone, "data.lesson_id") != w.lesson ||
			clone.String("data.title") != "Reading" || clone.String("data.kind") != "pdf" {
			t.Errorf("clone: %s", clone.Body)
		}
		if clone.String("data.resources.0.name") != "sheet.txt" {
			t.Errorf("clone resources: %s", clone.Body)
		}
		// Different keys, same bytes.
		content := blobKeys(t, env, "content/")
		resources := blobKeys(t, env, "resources/")
		if len(content) != 2 || len(resources) != 2 {
			t.Fatalf("files after clone: %v %v", content, resources)
		}
		if !bytes.Equal(blobBytes(t, env, content[0]), blobBytes(t, env, content[1])) ||
			!bytes.Equal(blobBytes(t, env, resources[0]), blobBytes(t, env, resources[1])) {
			t.Error("the copies differ from the originals")
		}
		// Deleting the original leaves the clone's files.
		send(t, env, 200, "DELETE", "/api/admin/topics/"+id(topic), w.tutor, nil, "")
		got := fetch(t, env, clone.String("data.topicable.url"), nil)
		if got.Status != 200 || !bytes.Equal(got.Body, pdfData) {
			t.Errorf("clone's file after deleting the original: %d", got.Status)
		}
		if got := fetch(t, env, clone.String("data.resources.0.url"), nil); got.Status != 200 || string(got.Body) != "worksheet" {
			t.Errorf("clone's resource after deleting the original: %d %q", got.Status, got.Body)
		}
		// Into another lesson, after its last topic.
		createRich(t, w, w.tutor, w.lesson2, "Only")
		res = send(t, env, 201, "POST", "/api/admin/topics/"+id(cloneID)+"/clone", w.tutor, map[string]any{"lesson_id": w.lesson2}, "")
		if num(res, "data.lesson_id") != w.lesson2 || num(res, "data.order") != 2 || num(res, "data.course_id") != w.course {
			t.Errorf("clone into lesson 2: %s", res.Body)
		}
		// Admins clone into any course.
		res = send(t, env, 201, "POST", "/api/admin/topics/"+id(cloneID)+"/clone", w.admin, map[string]any{"lesson_id": w.foreignLesson}, "")
		if num(res, "data.course_id") != w.foreignCourse {
			t.Errorf("clone into the foreign course: %s", res.Body)
		}
	})
}
