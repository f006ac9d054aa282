package layout_test

import (
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/content/layout"
)

// topicStatus is the learner's status of a topic: 0 incomplete, 1
// complete, 2 in progress.
func topicStatus(t *testing.T, env *apitest.Env, u *apitest.User, course, topic float64) float64 {
	t.Helper()
	res := env.Call(t, 200, "GET", "/api/courses/progress/"+num(course), u.Token, nil)
	list, _ := res.Get("data.topics").([]any)
	for _, item := range list {
		m, _ := item.(map[string]any)
		if m["topic_id"] == topic {
			return m["status"].(float64)
		}
	}
	return 0
}

// TestPracticeCheck: the learner's page holds no answers; a check answers
// them and completes the topic; only those who may learn the course check.
func TestPracticeCheck(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		tutor := env.As("tutor")
		created := env.Call(t, 201, "POST", "/api/admin/topics", tutor.Token, w.body([]any{callout(), practice()}, "Practise adding numbers."))
		topic := created.Number("data.id")
		plain := env.Call(t, 201, "POST", "/api/admin/topics", tutor.Token, w.body([]any{callout()}, "Read the note.")).Number("data.id")

		program := env.Call(t, 200, "GET", "/api/courses/"+num(w.course)+"/program", w.learner.Token, nil)
		page := string(program.Body)
		for _, secret := range []string{"correct", "hints", "fingers", "solution", "always"} {
			if strings.Contains(page, secret) {
				t.Errorf("the learner's program holds %q: %s", secret, page)
			}
		}
		if program.String("data.lessons.0.topics.0.topicable.document.1.props.questions.0.options.1.text") != "4" ||
			program.Get("data.lessons.0.topics.0.topicable.practice") != true ||
			program.Get("data.lessons.0.topics.0.topicable.document.1.props.questions.1.multiple") != true ||
			program.Get("data.lessons.0.topics.1.topicable.practice") != false {
			t.Errorf("learner view: %s", page)
		}

		check := "/api/topics/" + num(topic) + "/practice/check"
		// Practice cannot be skipped with a progress write; a plain layout
		// completes that way when viewed.
		progress := "/api/courses/progress/" + num(w.course)
		skip := env.Do(apitest.Request{Method: "PATCH", Path: progress, Token: w.learner.Token,
			Body: map[string]any{"progress": []any{map[string]any{"topic_id": topic, "status": 1}}}})
		if skip.Status != 422 {
			t.Errorf("completing a practice by a progress write: %d %s", skip.Status, skip.Body)
		}
		env.Call(t, 200, "PATCH", progress, w.learner.Token,
			map[string]any{"progress": []any{map[string]any{"topic_id": topic, "status": 2}}})
		env.Call(t, 200, "PATCH", progress, w.learner.Token,
			map[string]any{"progress": []any{map[string]any{"topic_id": plain, "status": 1}}})
		if s := topicStatus(t, env, w.learner, w.course, topic); s != 2 {
			t.Fatalf("status before a check: %v", s)
		}
		wrong := env.Call(t, 200, "POST", check, w.learner.Token, map[string]any{"node": 1, "question": 0, "selected": []int{0}})
		if wrong.Get("data.correct") != false || wrong.Number("data.score") != 0 || wrong.String("data.hints.0") != "Count on your fingers twice." ||
			wrong.Number("data.correct_options.0") != 1 || wrong.String("data.solution") != "Two and two make four, always." {
			t.Errorf("wrong answer: %s", wrong.Body)
		}
		if s := topicStatus(t, env, w.learner, w.course, topic); s != 1 {
			t.Errorf("status after the first check: %v, want 1 (complete)", s)
		}
		right := env.Call(t, 200, "POST", check, w.learner.Token, map[string]any{"node": 1, "question": 1, "selected": []int{2, 0}})
		if right.Get("data.correct") != true || right.Number("data.score") != 3 || len(right.Get("data.hints").([]any)) != 0 {
			t.Errorf("right answer: %s", right.Body)
		}
		partial := env.Call(t, 200, "POST", check, w.learner.Token, map[string]any{"node": 1, "question": 1, "selected": []int{0}})
		if partial.Get("data.correct") != false {
			t.Errorf("half the right options: %s", partial.Body)
		}

		for _, c := range []struct {
			name   string
			token  string
			path   string
			body   map[string]any
			status int
		}{
			{"anonymous", "", check, map[string]any{"node": 1, "question": 0, "selected": []int{1}}, 401},
			{"not assigned", env.NewUser("student").Token, check, map[string]any{"node": 1, "question": 0, "selected": []int{1}}, 403},
			{"other tutor", env.NewUser("tutor").Token, check, map[string]any{"node": 1, "question": 0, "selected": []int{1}}, 403},
			{"not a practice node", w.learner.Token, check, map[string]any{"node": 0, "question": 0, "selected": []int{1}}, 422},
			{"node out of range", w.learner.Token, check, map[string]any{"node": 9, "question": 0, "selected": []int{1}}, 422},
			{"question out of range", w.learner.Token, check, map[string]any{"node": 1, "question": 2, "selected": []int{1}}, 422},
			{"option out of range", w.learner.Token, check, map[string]any{"node": 1, "question": 0, "selected": []int{5}}, 422},
			{"too many options", w.learner.Token, check, map[string]any{"node": 1, "question": 0, "selected": make([]int, 11)}, 422},
			{"no practice in the topic", w.learner.Token, "/api/topics/" + num(plain) + "/practice/check", map[string]any{"node": 0, "question": 0, "selected": []int{0}}, 422},
			{"unknown topic", w.learner.Token, "/api/topics/999999/practice/check", map[string]any{"node": 0, "question": 0, "selected": []int{0}}, 404},
		} {
			res := env.Do(apitest.Request{Method: "POST", Path: c.path, Token: c.token, Body: c.body})
			if res.Status != c.status {
				t.Errorf("%s: %d, want %d: %s", c.name, res.Status, c.status, res.Body)
			}
		}
		// The author tries the topic out.
		env.Call(t, 200, "POST", check, tutor.Token, map[string]any{"node": 1, "question": 0, "selected": []int{1}})
	})
}

// TestComponentCatalogue: authors read the components with their props
// schemas, which the OpenAPI description carries too.
func TestComponentCatalogue(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		res := env.Call(t, 200, "GET", "/api/admin/layout/components", env.As("tutor").Token, nil)
		list, _ := res.Get("data.components").([]any)
		if len(list) != 9 || res.String("data.components.0.name") != "Callout" ||
			res.String("data.components.0.props") != "#/components/schemas/CalloutProps" ||
			res.Get("data.schemas.PracticeActivityProps.properties.questions") == nil || res.String("data.rules.0") == "" {
			t.Errorf("catalogue: %s", res.Body)
		}
		env.Call(t, 200, "GET", "/api/admin/layout/components", env.As("admin").Token, nil)
		env.Call(t, 403, "GET", "/api/admin/layout/components", env.As("student").Token, nil)
		env.Call(t, 401, "GET", "/api/admin/layout/components", "", nil)
		spec := env.Call(t, 200, "GET", "/api/openapi.json", "", nil)
		for _, c := range layout.Components {
			if spec.Get("components.schemas."+c.SchemaName()+".properties") == nil {
				t.Errorf("the OpenAPI description lacks %s", c.SchemaName())
			}
		}
	})
}
