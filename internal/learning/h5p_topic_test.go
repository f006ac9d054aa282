package learning_test

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/lms-platform/lms/client"
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
		ctx, admin := t.Context(), env.ClientAs("admin")

		// The topic form does not list the H5P package's file field: it
		// goes as an extra file.
		create := func(title, name string, data []byte) (*client.View, error) {
			return admin.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: lessons[0], Title: title,
				Topicable: h5pcontent.Class, ExtraFiles: map[string]client.File{"package": {Name: name, Content: bytes.NewReader(data)}}})
		}
		res := apitest.Must(create("True or false", "H5P.TrueFalse.h5p", pkg))(t)
		content, _ := res.Topicable.(map[string]any)
		text := func(key string) string { s, _ := content[key].(string); return s }
		contentID, topicID := text("content_id"), res.ID
		if contentID == "" || res.Kind != "h5p" || text("embed_url") != "/h5p/embed/play/"+contentID ||
			text("play_url") != "/h5p/contents/"+contentID+"/play" || text("library") == "" {
			t.Fatalf("created %+v", res)
		}
		if got := apitest.Must(admin.GetH5PContentsID(ctx, contentID))(t); got.ID != contentID {
			t.Errorf("H5P content: %+v", got)
		}

		// A broken package is refused with the service's reason.
		_, err := create("Broken", "broken.h5p", []byte("not a zip"))
		if e := apitest.Refused(t, err, 422); !apitest.Says(e, "H5P") {
			t.Errorf("broken package: %v", e)
		}

		u := env.NewUser("student")
		learner := env.UserClient(u)
		statement := func(verb, object string, part bool) *client.H5PStatement {
			t.Helper()
			return apitest.Must(learner.PostCoursesProgressIDH5P(ctx, topicID, map[string]any{"statement": h5pStatement(verb, object, part)}))(t)
		}
		complete := func() int {
			return count(t, env, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1 AND topic_id = $2 AND status = 1`,
				u.ID, topicID)
		}
		events := eventsOf(env, func() {
			statement("completed", contentID, true)
			statement("answered", contentID, false)
			statement("completed", contentID+"0", false)
		})
		if complete() != 0 || slices.Contains(events, "TopicFinished") {
			t.Fatalf("completed by a part, an answer or other content: %v", events)
		}
		var st *client.H5PStatement
		events = eventsOf(env, func() { st = statement("passed", contentID, false) })
		if complete() != 1 || !slices.Contains(events, "TopicFinished") || !st.Completed {
			t.Errorf("passed: complete %d, events %v, answer %+v", complete(), events, st)
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
