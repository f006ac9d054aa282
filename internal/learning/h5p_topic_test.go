package learning_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"slices"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
)

// h5pStatement is a statement about H5P content contentID; sub makes it
// about a part of it.
func h5pStatement(verb, contentID string, sub bool) map[string]any {
	object := map[string]any{"id": "http://school.test/h5p/embed/play/" + contentID, "definition": map[string]any{
		"extensions": map[string]any{"http://h5p.org/x-api/h5p-local-content-id": contentID}}}
	st := map[string]any{
		"actor":  map[string]any{"name": "Learner"},
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/" + verb},
		"object": object,
		"result": map[string]any{"score": map[string]any{"raw": 1.0, "max": 1.0}, "completion": true},
	}
	if sub {
		object["id"] = "http://school.test/h5p/embed/play/" + contentID + "?subContentId=abc"
		object["definition"].(map[string]any)["extensions"].(map[string]any)["http://h5p.org/x-api/h5p-subContentId"] = "abc"
		st["context"] = map[string]any{"contextActivities": map[string]any{
			"parent": []any{map[string]any{"id": "http://school.test/h5p/embed/play/" + contentID}}}}
	}
	return st
}

func TestH5PTopicCompletes(t *testing.T) {
	pkg := fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		courseID, lessons, _ := grid(t, env, courseRow{Public: true}, 1, 0)
		admin := env.As("admin")

		var b bytes.Buffer
		w := multipart.NewWriter(&b)
		for k, v := range map[string]string{"lesson": id(lessons[0]), "title": "True or false", "topicable": h5pcontent.Class} {
			w.WriteField(k, v)
		}
		part, _ := w.CreateFormFile("package", "H5P.TrueFalse.h5p")
		part.Write(pkg)
		w.Close()
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token,
			Body: b.Bytes(), Type: w.FormDataContentType()})
		if res.Status != 201 {
			t.Fatalf("create H5P topic: %d %s", res.Status, res.Body)
		}
		contentID := res.String("data.topicable.content_id")
		topicID := int64(res.Number("data.id"))
		if contentID == "" || res.String("data.kind") != "h5p" ||
			res.String("data.topicable.embed_url") != "/h5p/embed/play/"+contentID ||
			res.String("data.topicable.play_url") != "/h5p/contents/"+contentID+"/play" ||
			res.String("data.topicable.library") == "" {
			t.Fatalf("created %s", res.Body)
		}
		got := call(t, env, 200, "GET", "/h5p/contents/"+contentID, admin, nil)
		if got.String("data.id") != contentID {
			t.Errorf("H5P content: %s", got.Body)
		}

		// A broken package is refused with the service's reason.
		var bad bytes.Buffer
		bw := multipart.NewWriter(&bad)
		bw.WriteField("lesson", id(lessons[0]))
		bw.WriteField("title", "Broken")
		bw.WriteField("topicable", h5pcontent.Class)
		bp, _ := bw.CreateFormFile("package", "broken.h5p")
		bp.Write([]byte("not a zip"))
		bw.Close()
		if res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token,
			Body: bad.Bytes(), Type: bw.FormDataContentType()}); res.Status != 422 || !bytes.Contains(res.Body, []byte("H5P")) {
			t.Errorf("broken package: %d %s", res.Status, res.Body)
		}

		u := env.NewUser("student")
		path := "/api/courses/progress/" + id(topicID) + "/h5p"
		complete := func() int {
			return count(t, env, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1 AND topic_id = $2 AND status = 1`,
				u.ID, topicID)
		}
		events := eventsOf(env, func() {
			call(t, env, 201, "POST", path, u, map[string]any{"statement": h5pStatement("completed", contentID, true)})
			call(t, env, 201, "POST", path, u, map[string]any{"statement": h5pStatement("answered", contentID, false)})
			call(t, env, 201, "POST", path, u, map[string]any{"statement": h5pStatement("completed", contentID+"0", false)})
		})
		if complete() != 0 || slices.Contains(events, "TopicFinished") {
			t.Fatalf("completed by a part, an answer or other content: %v", events)
		}
		var st *apitest.Response
		events = eventsOf(env, func() {
			st = call(t, env, 201, "POST", path, u, map[string]any{"statement": h5pStatement("passed", contentID, false)})
		})
		if complete() != 1 || !slices.Contains(events, "TopicFinished") || st.Get("data.completed") != true {
			t.Errorf("passed: complete %d, events %v, answer %s", complete(), events, st.Body)
		}
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		var score, max float64
		if err := tenant.DB.QueryRowContext(context.Background(), `SELECT score, max_score FROM topic_h5p_statements
			WHERE topic_id = $1 ORDER BY id DESC LIMIT 1`, topicID).Scan(&score, &max); err != nil || score != 1 || max != 1 {
			t.Errorf("score %v/%v %v", score, max, err)
		}
		_ = courseID
	})
}
