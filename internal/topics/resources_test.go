package topics_test

import (
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

func TestResources(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := createRich(t, w, w.tutor, w.lesson, "With files")
		foreign := createRich(t, w, w.admin, w.foreignLesson, "Foreign")
		base := "/api/admin/topics/" + id(topic) + "/resources"

		body, ct := multipartBody(t, file("resource", "Work Sheet.pdf", pdfData))
		res := send(t, env, 201, "POST", base+"/", w.tutor, body, ct)
		first := num(res, "data.id")
		if res.String("data.name") != "Work Sheet.pdf" || res.String("data.content_type") != "application/pdf" ||
			num(res, "data.size") != int64(len(pdfData)) || num(res, "data.topic_id") != topic {
			t.Errorf("added: %s", res.Body)
		}
		got := fetch(t, env, res.String("data.url"), nil)
		if got.Status != 200 || string(got.Body) != string(pdfData) {
			t.Errorf("resource link: %d", got.Status)
		}
		// Without the final slash, with a name of its own; HTML is served
		// as a download.
		body, ct = multipartBody(t, text("name", "Notes"), file("resource", "page.html", []byte("<script>alert(1)</script>")))
		res = send(t, env, 201, "POST", base, w.admin, body, ct)
		second := num(res, "data.id")
		got = fetch(t, env, res.String("data.url"), nil)
		if res.String("data.name") != "Notes" || !strings.HasPrefix(got.Header.Get("Content-Disposition"), "attachment") ||
			got.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("html resource: %s %v", res.Body, got.Header)
		}
		stored := blobKeys(t, env, "resources/")

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "list", As: "tutor", Method: "GET", Path: base, Status: 200,
				JSON: map[string]any{"data.0.id": first, "data.1.id": second, "data.1.name": "Notes", "data.0.url": apitest.Present}},
			{Name: "topic shows resources", As: "tutor", Method: "GET", Path: "/api/admin/topics/" + id(topic), Status: 200,
				JSON: map[string]any{"data.resources.0.id": first}},
			{Name: "student cannot list", As: "student", Method: "GET", Path: base, Status: 403},
			{Name: "tutor cannot list another's", As: "tutor", Method: "GET", Path: "/api/admin/topics/" + id(foreign) + "/resources", Status: 403},
			{Name: "unknown topic", As: "admin", Method: "GET", Path: "/api/admin/topics/999999/resources", Status: 404},
			{Name: "rename", As: "tutor", Method: "PATCH", Path: base + "/" + id(first), Body: map[string]any{"name": "Sheet"},
				Status: 200, JSON: map[string]any{"data.name": "Sheet", "data.id": first}},
			{Name: "rename needs a name", As: "tutor", Method: "PATCH", Path: base + "/" + id(first), Body: map[string]any{"name": ""}, Status: 422},
			{Name: "rename of another topic's resource", As: "admin", Method: "PATCH",
				Path: "/api/admin/topics/" + id(foreign) + "/resources/" + id(first), Body: map[string]any{"name": "x"}, Status: 404},
			{Name: "student cannot rename", As: "student", Method: "PATCH", Path: base + "/" + id(first), Body: map[string]any{"name": "x"}, Status: 403},
			{Name: "student cannot delete", As: "student", Method: "DELETE", Path: base + "/" + id(first), Status: 403},
			{Name: "other tutor cannot delete", As: "tutor", Method: "DELETE",
				Path: "/api/admin/topics/" + id(foreign) + "/resources/" + id(first), Status: 403},
			{Name: "delete", As: "tutor", Method: "DELETE", Path: base + "/" + id(first), Status: 200, Events: []string{}},
			{Name: "delete again", As: "tutor", Method: "DELETE", Path: base + "/" + id(first), Status: 200},
			{Name: "list after delete", As: "tutor", Method: "GET", Path: base, Status: 200,
				JSON: map[string]any{"data.0.id": second}},
		})
		if left := blobKeys(t, env, "resources/"); len(left) != len(stored)-1 {
			t.Errorf("files after deleting one of %v: %v", stored, left)
		}

		// Refusals store nothing.
		before := len(blobKeys(t, env, ""))
		body, ct = multipartBody(t, file("resource", "a.pdf", pdfData))
		send(t, env, 403, "POST", base+"/", w.student, body, ct)
		send(t, env, 403, "POST", "/api/admin/topics/"+id(foreign)+"/resources/", w.tutor, body, ct)
		send(t, env, 404, "POST", "/api/admin/topics/999999/resources/", w.admin, body, ct)
		body, ct = multipartBody(t, text("name", "no file"))
		send(t, env, 422, "POST", base+"/", w.tutor, body, ct)
		reader, ct := bigUpload(nil, "resource", "huge.pdf", 100<<20+1)
		res = send(t, env, 413, "POST", base+"/", w.tutor, reader, ct)
		if !strings.Contains(res.String("message"), "100 MiB") {
			t.Errorf("oversized resource: %s", res.Body)
		}
		if after := len(blobKeys(t, env, "")); after != before {
			t.Errorf("refused uploads stored files: %d, want %d", after, before)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM topic_resources`); n != 1 {
			t.Errorf("%d resources, want 1", n)
		}
	})
}
