package topics_test

import (
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

func TestProjectSubmissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := send(t, env, 201, "POST", "/api/admin/topics", w.tutor, map[string]any{"lesson": w.lesson, "title": "Essay",
			"topicable": projectClass, "instructions": "Write **500** words.", "accept": "pdf, txt", "max_size": 1024}, "")
		topic := num(res, "data.id")
		if res.String("data.kind") != "project" || res.String("data.topicable.instructions") != "<p>Write <strong>500</strong> words.</p>\n" ||
			res.Number("data.topicable.max_size") != 1024 || res.String("data.topicable.accept.0") != ".pdf" {
			t.Fatalf("project topic: %s", res.Body)
		}
		rich := createRich(t, w, w.tutor, w.lesson, "Not a project")
		learner := env.NewUser("student")
		assign(t, env, w.course, learner.ID)
		submit := "/api/topics/" + id(topic) + "/project"

		body, ct := multipartBody(t, file("file", "essay.pdf", pdfData))
		res = send(t, env, 201, "POST", submit, learner, body, ct)
		sub := num(res, "data.id")
		if num(res, "data.user_id") != learner.ID || res.String("data.name") != "essay.pdf" || num(res, "data.topic_id") != topic {
			t.Errorf("submission: %s", res.Body)
		}
		keys := blobKeys(t, env, "topics/"+id(topic)+"/submissions/"+id(learner.ID)+"/")
		if len(keys) != 1 {
			t.Fatalf("stored submissions: %v", keys)
		}
		before := len(blobKeys(t, env, ""))

		refuse := func(name string, status int, u *apitest.User, path string, parts ...part) {
			t.Helper()
			body, ct := multipartBody(t, parts...)
			res := send(t, env, status, "POST", path, u, body, ct)
			if res.String("message") == "" {
				t.Errorf("%s: no message", name)
			}
		}
		refuse("not assigned", 403, w.student, submit, file("file", "essay.pdf", pdfData))
		refuse("tutor not authoring", 403, w.otherTutor, submit, file("file", "essay.pdf", pdfData))
		refuse("wrong type", 422, learner, submit, file("file", "essay.exe", pdfData))
		refuse("HTML named .pdf", 422, learner, submit, file("file", "x.pdf", []byte("<html><script>alert(1)</script></html>")))
		refuse("HTML named .txt", 422, learner, submit, file("file", "x.txt", []byte("<!DOCTYPE html><p>hi</p>")))
		refuse("no file", 422, learner, submit, text("note", "x"))
		refuse("not a project", 422, learner, "/api/topics/"+id(rich)+"/project", file("file", "essay.pdf", pdfData))
		refuse("unknown topic", 404, learner, "/api/topics/999999/project", file("file", "essay.pdf", pdfData))
		refuse("over the topic's cap", 413, learner, submit, file("file", "big.txt", []byte(strings.Repeat("x", 1025))))
		if after := len(blobKeys(t, env, "")); after != before {
			t.Errorf("refused submissions stored files: %d, want %d", after, before)
		}
		// A hidden topic takes no submissions from learners.
		send(t, env, 200, "PATCH", "/api/admin/topics/"+id(topic), w.tutor, map[string]any{"active": false}, "")
		refuse("inactive topic", 404, learner, submit, file("file", "essay.pdf", pdfData))
		send(t, env, 200, "PATCH", "/api/admin/topics/"+id(topic), w.tutor, map[string]any{"active": true}, "")
		if n := env.Count(t, `SELECT COUNT(*) FROM project_submissions`); n != 1 {
			t.Errorf("%d submissions, want 1", n)
		}

		list := "/api/admin/topics/" + id(topic) + "/project/submissions"
		download := list + "/" + id(sub) + "/download"
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "author lists", As: "tutor", Method: "GET", Path: list, Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": sub, "data.0.user.email": learner.Email, "data.0.user.id": learner.ID}},
			{Name: "admin lists", As: "admin", Method: "GET", Path: list, Status: 200, JSON: map[string]any{"meta.total": 1}},
			{Name: "learner cannot list", As: "student", Method: "GET", Path: list, Status: 403},
			{Name: "other tutor cannot list", Method: "GET", Path: list, Status: 401},
			{Name: "learner cannot download", As: "student", Method: "GET", Path: download, Status: 403},
			{Name: "unknown submission", As: "tutor", Method: "GET", Path: list + "/999999/download", Status: 404},
		})
		send(t, env, 403, "GET", list, w.otherTutor, nil, "")
		send(t, env, 403, "GET", download, w.otherTutor, nil, "")
		got := send(t, env, 200, "GET", download, w.tutor, nil, "")
		if string(got.Body) != string(pdfData) || !strings.HasPrefix(got.Header.Get("Content-Disposition"), "attachment") ||
			!strings.Contains(got.Header.Get("Content-Disposition"), "essay.pdf") {
			t.Errorf("download: %q %v", got.Body, got.Header)
		}
		// Deleting the topic deletes its submissions' files.
		send(t, env, 200, "DELETE", "/api/admin/topics/"+id(topic), w.tutor, nil, "")
		if left := blobKeys(t, env, "topics/"); len(left) != 0 {
			t.Errorf("submission files left: %v", left)
		}
	})
}
