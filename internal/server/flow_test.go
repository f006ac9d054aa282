package server_test

import (
	"bytes"
	"mime/multipart"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
)

// TestCourseLifecycle follows a course through every capability's real
// routes: an admin authors it, a learner is assigned and finishes it, a new
// topic re-opens it, and submitting a project completes it again.
func TestCourseLifecycle(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin").Token
		learner := env.NewUser("student")
		must := func(res *apitest.Response, status int) *apitest.Response {
			t.Helper()
			if res.Status != status {
				t.Fatalf("%s %s: %d %s", res.Req.Method, res.Req.Path, res.Status, res.Body)
			}
			return res
		}
		course := must(env.Do(apitest.Request{Method: "POST", Path: "/api/admin/courses", Token: admin,
			Body: map[string]any{"title": "Go basics", "status": "published"}}), 201).Number("data.id")
		cid := strconv.Itoa(int(course))
		lesson := must(env.Do(apitest.Request{Method: "POST", Path: "/api/admin/lessons", Token: admin,
			Body: map[string]any{"course_id": course, "title": "Start"}}), 201).Number("data.id")
		topic := func(title string) float64 {
			return must(env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin,
				Body: map[string]any{"lesson": lesson, "title": title, "topicable": `Lms\TopicTypes\Models\TopicContent\RichText`,
					"markdown": "# " + title}}), 201).Number("data.id")
		}
		first := topic("Welcome")
		// Not assigned yet: no program.
		must(env.Do(apitest.Request{Method: "GET", Path: "/api/courses/" + cid + "/program", Token: learner.Token}), 403)
		must(env.Do(apitest.Request{Method: "POST", Path: "/api/admin/courses/" + cid + "/access", Token: admin,
			Body: map[string]any{"users": []map[string]any{{"id": learner.ID}}}}), 200)
		program := must(env.Do(apitest.Request{Method: "GET", Path: "/api/courses/" + cid + "/program", Token: learner.Token}), 200)
		if html := program.String("data.lessons.0.topics.0.topicable.html"); html != "<h1>Welcome</h1>\n" {
			t.Fatalf("program content %q", html)
		}

		before := env.LastEventID()
		must(env.Do(apitest.Request{Method: "PATCH", Path: "/api/courses/progress/" + cid, Token: learner.Token,
			Body: map[string]any{"progress": []map[string]any{{"topic_id": first, "status": 1}}}}), 200)
		assertEvents(t, env, before, "CourseStarted", "TopicFinished", "LessonFinished", "CourseFinished")
		if must(env.Do(apitest.Request{Method: "GET", Path: "/api/courses/progress/" + cid, Token: learner.Token}), 200).
			String("data.status") != "finished" {
			t.Fatal("the course must be finished")
		}

		// A new project topic re-opens the finished course.
		project := must(env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin,
			Body: map[string]any{"lesson": lesson, "title": "Build something", "topicable": `Lms\TopicTypeProject\Models\Project`,
				"value": map[string]any{"instructions": "Upload your program."}}}), 201).Number("data.id")
		env.DeliverEvents()
		if got := must(env.Do(apitest.Request{Method: "GET", Path: "/api/courses/progress/" + cid, Token: learner.Token}), 200); got.String("data.status") != "started" || got.Get("data.finished_at") != nil {
			t.Fatalf("an added topic must re-open the course: %s", got.Body)
		}

		// Submitting the project completes the topic and the course again.
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		part, _ := w.CreateFormFile("file", "main.txt")
		part.Write([]byte("package main\n"))
		w.Close()
		before = env.LastEventID()
		must(env.Do(apitest.Request{Method: "POST", Path: "/api/topics/" + strconv.Itoa(int(project)) + "/project",
			Token: learner.Token, Body: body.Bytes(), Type: w.FormDataContentType()}), 201)
		assertEvents(t, env, before, "TopicFinished", "LessonFinished", "CourseFinished")
	})
}

func assertEvents(t *testing.T, env *apitest.Env, after int64, want ...string) {
	t.Helper()
	got := env.EventNames(after)
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}
}

// TestDeletesLeaveNoFiles deletes a lesson whose nested lesson holds a PDF
// topic with an attachment, then a course, and checks the blob store.
func TestDeletesLeaveNoFiles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin").Token
		upload := func(path, field, name string, data []byte, fields map[string]string) *apitest.Response {
			var body bytes.Buffer
			w := multipart.NewWriter(&body)
			for k, v := range fields {
				w.WriteField(k, v)
			}
			part, _ := w.CreateFormFile(field, name)
			part.Write(data)
			w.Close()
			return env.Do(apitest.Request{Method: "POST", Path: path, Token: admin, Body: body.Bytes(), Type: w.FormDataContentType()})
		}
		files := func() []string {
			tn, release := env.OpenTenant(env.Tenant)
			defer release()
			var keys []string
			tn.Blob.List(t.Context(), "", func(i blob.Info) error { keys = append(keys, i.Key); return nil })
			return keys
		}
		pdf := []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
		for _, target := range []string{"lesson", "course"} {
			course := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/courses", Token: admin,
				Body: map[string]any{"title": "Files " + target}}).Number("data.id")
			outer := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/lessons", Token: admin,
				Body: map[string]any{"course_id": course, "title": "Outer"}}).Number("data.id")
			inner := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/lessons", Token: admin,
				Body: map[string]any{"course_id": course, "parent_lesson_id": outer, "title": "Inner"}}).Number("data.id")
			res := upload("/api/admin/topics", "file", "notes.pdf", pdf, map[string]string{
				"lesson": strconv.Itoa(int(inner)), "title": "Notes", "topicable": `Lms\TopicTypes\Models\TopicContent\PDF`})
			if res.Status != 201 {
				t.Fatalf("pdf topic: %d %s", res.Status, res.Body)
			}
			topic := strconv.Itoa(int(res.Number("data.id")))
			if res := upload("/api/admin/topics/"+topic+"/resources", "resource", "extra.txt", []byte("more"), nil); res.Status != 201 {
				t.Fatalf("attachment: %d %s", res.Status, res.Body)
			}
			if len(files()) < 2 {
				t.Fatalf("files were not stored: %v", files())
			}
			path := "/api/admin/lessons/" + strconv.Itoa(int(outer))
			if target == "course" {
				path = "/api/admin/courses/" + strconv.Itoa(int(course))
			}
			if res := env.Do(apitest.Request{Method: "DELETE", Path: path, Token: admin}); res.Status != 200 {
				t.Fatalf("delete %s: %d %s", target, res.Status, res.Body)
			}
			// The files go once the delete's TopicsRemoved is delivered.
			env.DeliverEvents()
			if left := files(); len(left) != 0 {
				t.Fatalf("deleting the %s left files: %v", target, left)
			}
		}
	})
}
