package learning_test

import (
	"context"
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
		ctx, learner := t.Context(), env.UserClient(u)
		st := apitest.Must(learner.PostCoursesProgressIDH5P(ctx, quiz, map[string]any{"statement": statement("completed", false)}))(t)
		if st.Verb != "http://adlnet.gov/expapi/verbs/completed" || st.Score == nil || *st.Score != 7 ||
			st.MaxScore == nil || *st.MaxScore != 10 {
			t.Errorf("stored %+v", st)
		}
		apitest.Must(learner.PostCoursesProgressIDH5P(ctx, quiz, statement("answered", true)))(t)
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
		_, err := learner.PostCoursesProgressIDH5P(ctx, quiz, map[string]any{"statement": map[string]any{"object": map[string]any{}}})
		apitest.Refused(t, err, 422)
		// Raw: a body that is not a JSON object, which the client's types cannot send.
		env.Call(t, 422, "POST", "/api/courses/progress/"+id(quiz)+"/h5p", u.Token, "[1, 2]")
		_, err = learner.PostCoursesProgressIDH5P(ctx, 999999, statement("completed", false))
		apitest.Refused(t, err, 404)
		_, err = learner.PostCoursesProgressIDH5P(ctx, private[0][0], statement("completed", false))
		apitest.Refused(t, err, 403)
		_, err = env.ClientAs("anonymous").PostCoursesProgressIDH5P(ctx, quiz, statement("completed", false))
		apitest.Refused(t, err, 401)
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
		ctx, learner := t.Context(), env.UserClient(env.NewUser("student"))
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
			_, err := learner.PostCoursesProgressIDH5P(ctx, quiz, about42(score))
			if e := apitest.Refused(t, err, 422); len(e.Errors["statement.result.score."+field]) == 0 {
				t.Errorf("%v: errors %v, want statement.result.score.%s", score, e.Errors, field)
			}
		}
		for _, score := range []map[string]any{{"raw": -1.0, "max": 1.0}, {"raw": 1.0, "min": 2.0, "max": 3.0}, {"raw": "1"}} {
			_, err := learner.PostCoursesProgressIDH5P(ctx, quiz, about42(score))
			apitest.Refused(t, err, 422)
		}
		_, err := learner.PostCoursesProgressIDH5P(ctx, topics[0][0], about42(map[string]any{"raw": 1.0, "max": 1.0}))
		if e := apitest.Refused(t, err, 422); !apitest.Says(e, "Only H5P topics") {
			t.Errorf("statement on a rich-text topic: %v", e)
		}
		if n := count(t, env, `SELECT COUNT(*) FROM topic_h5p_statements`) + count(t, env, `SELECT COUNT(*) FROM topic_progress`); n != 0 {
			t.Fatalf("refused statements stored %d rows", n)
		}
		// A full score within bounds completes the topic.
		if st := apitest.Must(learner.PostCoursesProgressIDH5P(ctx, quiz, about42(map[string]any{"raw": 1.0, "max": 1.0, "scaled": 1.0})))(t); !st.Completed {
			t.Errorf("valid completing statement: %+v", st)
		}
	})
}
