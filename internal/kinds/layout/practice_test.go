package layout_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/layout"
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
		// LiaScriptLesson is approved: it names a LiaScript course.
		required, _ := res.Get("data.schemas.LiaScriptLessonProps.required").([]any)
		if res.String("data.components.4.name") != "LiaScriptLesson" || !slices.Contains(required, any("course_id")) ||
			strings.Contains(string(res.Body), "do not exist") {
			t.Errorf("LiaScriptLesson in the catalogue: %s", res.Body)
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

// TestGIFTPractice: GIFT questions reach the learner as the quiz shows
// them, without weights or feedback, and a check grades each type with
// the GIFT weights and answers the right answer and the feedback.
func TestGIFTPractice(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		tutor := env.As("tutor")
		questions := []any{
			map[string]any{"gift": "Capital of France? {=Paris #Right, the Seine city. ~Lyon #Lyon is second. ####Paris since Clovis.}", "score": 2},
			map[string]any{"gift": "Primes? {~%50%Two ~%50%Three ~%-100%Four}"},
			map[string]any{"gift": "The sun is a star. {T#Look again at the sky.#Yes, a yellow dwarf.}"},
			map[string]any{"gift": "Largest planet? {=Jupiter =%50%Saturn #Second largest.}"},
			map[string]any{"gift": "Pi to two decimals? {#3.14:0.005}"},
			map[string]any{"gift": "Match. {=cat -> meow =dog -> woof}"},
		}
		doc := []any{callout(), node("PracticeActivity", map[string]any{"title": "GIFT", "questions": questions})}
		topic := env.Call(t, 201, "POST", "/api/admin/topics", tutor.Token, w.body(doc, "Practise facts.")).Number("data.id")

		program := env.Call(t, 200, "GET", "/api/courses/"+num(w.course)+"/program", w.learner.Token, nil)
		page := string(program.Body)
		for _, secret := range []string{"Seine", "Clovis", "%50%", "weight", "feedback", "yellow dwarf", "3.14", "Second largest", "=Paris", "meow ="} {
			if strings.Contains(page, secret) {
				t.Errorf("the learner's program holds %q: %s", secret, page)
			}
		}
		qs := "data.lessons.0.topics.0.topicable.document.1.props.questions."
		if program.String(qs+"0.gift.type") != "multichoice" || program.String(qs+"0.gift.options.1.text") != "Lyon" ||
			program.String(qs+"0.prompt") != "Capital of France?" || program.Get(qs+"0.multiple") != false ||
			program.Get(qs+"1.multiple") != true || program.String(qs+"2.gift.type") != "truefalse" ||
			program.String(qs+"5.gift.items.0.text") != "cat" || program.String(qs+"5.gift.targets.1") != "woof" ||
			program.Get("data.lessons.0.topics.0.topicable.practice") != true {
			t.Errorf("learner view: %s", page)
		}

		check := "/api/topics/" + num(topic) + "/practice/check"
		answer := func(q int, a map[string]any) *apitest.Response {
			return env.Call(t, 200, "POST", check, w.learner.Token, map[string]any{"node": 1, "question": q, "answer": a})
		}
		yes, no := true, false
		if r := answer(0, map[string]any{"choices": []int{1}}); r.Get("data.correct") != false || r.Number("data.score") != 0 ||
			r.Number("data.correct_options.0") != 0 || r.Number("data.right_answer.choices.0") != 0 ||
			r.String("data.feedback.0") != "Lyon is second." || r.String("data.feedback.1") != "Paris since Clovis." {
			t.Errorf("multiple choice, wrong: %s", r.Body)
		}
		if r := answer(0, map[string]any{"choices": []int{0}}); r.Get("data.correct") != true || r.Number("data.score") != 2 ||
			r.String("data.feedback.0") != "Right, the Seine city." {
			t.Errorf("multiple choice, right: %s", r.Body)
		}
		if r := answer(1, map[string]any{"choices": []int{0}}); r.Get("data.correct") != false || r.Number("data.score") != 0.5 ||
			r.Number("data.right_answer.choices.1") != 1 {
			t.Errorf("several answers, half: %s", r.Body)
		}
		if r := answer(1, map[string]any{"choices": []int{0, 1}}); r.Get("data.correct") != true || r.Number("data.score") != 1 {
			t.Errorf("several answers, all: %s", r.Body)
		}
		if r := answer(2, map[string]any{"truth": no}); r.Get("data.correct") != false || r.Get("data.right_answer.truth") != true ||
			r.String("data.feedback.0") != "Look again at the sky." {
			t.Errorf("true/false, wrong: %s", r.Body)
		}
		if r := answer(2, map[string]any{"truth": yes}); r.Get("data.correct") != true || r.String("data.feedback.0") != "Yes, a yellow dwarf." {
			t.Errorf("true/false, right: %s", r.Body)
		}
		if r := answer(3, map[string]any{"text": " saturn "}); r.Get("data.correct") != false || r.Number("data.score") != 0.5 ||
			r.String("data.feedback.0") != "Second largest." || r.String("data.right_answer.text") != "Jupiter" {
			t.Errorf("short answer, partial: %s", r.Body)
		}
		if r := answer(3, map[string]any{"text": "JUPITER"}); r.Get("data.correct") != true {
			t.Errorf("short answer, right: %s", r.Body)
		}
		if r := answer(4, map[string]any{"text": "3,142"}); r.Get("data.correct") != true || r.String("data.right_answer.text") != "3.14" {
			t.Errorf("numerical, within tolerance: %s", r.Body)
		}
		if r := answer(4, map[string]any{"text": "3.2"}); r.Get("data.correct") != false || r.Number("data.score") != 0 {
			t.Errorf("numerical, outside: %s", r.Body)
		}
		if r := answer(5, map[string]any{"matches": []string{"meow", "meow"}}); r.Get("data.correct") != false || r.Number("data.score") != 0.5 ||
			r.String("data.right_answer.matches.1") != "woof" {
			t.Errorf("matching, half: %s", r.Body)
		}
		if s := topicStatus(t, env, w.learner, w.course, topic); s != 1 {
			t.Errorf("status after a check: %v, want 1 (complete)", s)
		}
		for _, c := range []struct {
			name string
			body map[string]any
		}{
			{"no answer", map[string]any{"node": 1, "question": 0, "selected": []int{0}}},
			{"choice out of range", map[string]any{"node": 1, "question": 0, "answer": map[string]any{"choices": []int{7}}}},
			{"two choices to a one-answer question", map[string]any{"node": 1, "question": 0, "answer": map[string]any{"choices": []int{0, 1}}}},
			{"too many matches", map[string]any{"node": 1, "question": 5, "answer": map[string]any{"matches": []string{"a", "b", "c"}}}},
		} {
			if res := env.Do(apitest.Request{Method: "POST", Path: check, Token: w.learner.Token, Body: c.body}); res.Status != 422 {
				t.Errorf("%s: %d, want 422: %s", c.name, res.Status, res.Body)
			}
		}
	})
}
