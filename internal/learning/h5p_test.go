package learning_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
	"github.com/lms-platform/lms/internal/learning"
)

func statement(verb string, sub bool) map[string]any {
	object := map[string]any{"id": "http://example.test/h5p/1", "definition": map[string]any{
		"extensions": map[string]any{"http://h5p.org/x-api/h5p-local-content-id": 1}}}
	st := map[string]any{
		"actor":  map[string]any{"name": "Learner"},
		"verb":   map[string]any{"id": "http://adlnet.gov/expapi/verbs/" + verb},
		"object": object,
		"result": map[string]any{"score": map[string]any{"raw": 7.0, "max": 10.0}, "completion": true},
	}
	if sub {
		object["definition"].(map[string]any)["extensions"].(map[string]any)["http://h5p.org/x-api/h5p-subContentId"] = "abc"
		st["context"] = map[string]any{"contextActivities": map[string]any{
			"parent": []any{map[string]any{"id": "http://example.test/h5p/1"}}}}
	}
	return st
}

func TestCompletesTopic(t *testing.T) {
	parentOnly := statement("completed", false)
	parentOnly["context"] = map[string]any{"contextActivities": map[string]any{"parent": []any{map[string]any{"id": "x"}}}}
	for name, c := range map[string]struct {
		st   map[string]any
		want bool
	}{
		"completed, top level":             {statement("completed", false), true},
		"passed, top level":                {statement("passed", false), true},
		"answered":                         {statement("answered", false), false},
		"failed":                           {statement("failed", false), false},
		"completed sub-content":            {statement("completed", true), false},
		"completed with a parent activity": {parentOnly, false},
		"no verb":                          {map[string]any{"object": map[string]any{}}, false},
		"wrapped":                          {learning.StatementOf(map[string]any{"statement": statement("completed", false)}), true},
	} {
		if got := learning.CompletesTopic(c.st); got != c.want {
			t.Errorf("%s: CompletesTopic = %v, want %v", name, got, c.want)
		}
	}
}

func TestStoreStatement(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, lessons, _ := grid(t, env, courseRow{Public: true}, 1, 0)
		quiz := addTopic(t, env, c, lessons[0], topicRow{Type: h5pcontent.Class})
		_, _, private := grid(t, env, courseRow{}, 1, 1)
		u := env.NewUser("student")
		path := "/api/courses/progress/" + id(quiz) + "/h5p"
		res := call(t, env, 201, "POST", path, u, map[string]any{"statement": statement("completed", false)})
		if res.String("data.verb") != "http://adlnet.gov/expapi/verbs/completed" || res.Number("data.score") != 7 ||
			res.Number("data.max_score") != 10 {
			t.Errorf("stored %s", res.Body)
		}
		call(t, env, 201, "POST", path, u, statement("answered", true))
		if n := count(t, env, `SELECT COUNT(*) FROM topic_h5p_statements WHERE user_id = $1 AND topic_id = $2`,
			u.ID, quiz); n != 2 {
			t.Errorf("%d statements stored, want 2", n)
		}
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		var verb string
		var score, max float64
		if err := tenant.DB.QueryRowContext(context.Background(), `SELECT verb, score, max_score FROM topic_h5p_statements
			ORDER BY id LIMIT 1`).Scan(&verb, &score, &max); err != nil || score != 7 || max != 10 {
			t.Errorf("row: %s %v %v %v", verb, score, max, err)
		}
		// Storing does not complete the topic (the H5P issue decides).
		if n := count(t, env, `SELECT COUNT(*) FROM topic_progress WHERE status = 1`); n != 0 {
			t.Errorf("a statement completed %d topics", n)
		}
		call(t, env, 422, "POST", path, u, map[string]any{"statement": map[string]any{"object": map[string]any{}}})
		call(t, env, 422, "POST", path, u, "[1, 2]")
		call(t, env, 404, "POST", "/api/courses/progress/999999/h5p", u, statement("completed", false))
		call(t, env, 403, "POST", "/api/courses/progress/"+id(private[0][0])+"/h5p", u, statement("completed", false))
		call(t, env, 401, "POST", path, nil, statement("completed", false))
		if n := count(t, env, `SELECT COUNT(*) FROM topic_h5p_statements`); n != 2 {
			t.Errorf("%d statements after refused posts, want 2", n)
		}
	})
}

// Statements come from the learner's browser: scores outside their bounds
// and statements on topics that are not H5P are refused, and store nothing.
func TestStatementBounds(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		c, lessons, topics := grid(t, env, courseRow{Public: true}, 1, 1)
		quiz := addTopic(t, env, c, lessons[0], topicRow{Type: h5pcontent.Class})
		u := env.NewUser("student")
		path := "/api/courses/progress/" + id(quiz) + "/h5p"
		about42 := func(score map[string]any) map[string]any {
			st := statement("completed", false)
			st["object"].(map[string]any)["definition"].(map[string]any)["extensions"].(map[string]any)["http://h5p.org/x-api/h5p-local-content-id"] = 42
			st["result"] = map[string]any{"score": score}
			return st
		}
		for field, score := range map[string]map[string]any{
			"raw":    {"raw": 1000.0, "max": 1.0},
			"max":    {"raw": 0.0, "max": 0.0},
			"scaled": {"raw": 1.0, "max": 1.0, "scaled": 1.5},
		} {
			res := call(t, env, 422, "POST", path, u, about42(score))
			if !strings.Contains(string(res.Body), `"statement.result.score.`+field+`"`) {
				t.Errorf("%v: errors %s, want statement.result.score.%s", score, res.Body, field)
			}
		}
		for _, score := range []map[string]any{{"raw": -1.0, "max": 1.0}, {"raw": 1.0, "min": 2.0, "max": 3.0}, {"raw": "1"}} {
			call(t, env, 422, "POST", path, u, about42(score))
		}
		res := call(t, env, 422, "POST", "/api/courses/progress/"+id(topics[0][0])+"/h5p", u, about42(map[string]any{"raw": 1.0, "max": 1.0}))
		if !strings.Contains(string(res.Body), "Only H5P topics") {
			t.Errorf("statement on a rich-text topic: %s", res.Body)
		}
		if n := count(t, env, `SELECT COUNT(*) FROM topic_h5p_statements`) + count(t, env, `SELECT COUNT(*) FROM topic_progress`); n != 0 {
			t.Fatalf("refused statements stored %d rows", n)
		}
		// A full score within bounds completes the topic.
		res = call(t, env, 201, "POST", path, u, about42(map[string]any{"raw": 1.0, "max": 1.0, "scaled": 1.0}))
		if res.Get("data.completed") != true {
			t.Errorf("valid completing statement: %s", res.Body)
		}
	})
}
