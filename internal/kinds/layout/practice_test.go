package layout_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/layout"
)

// topicStatus is the learner's status of a topic: 0 incomplete, 1
// complete, 2 in progress.
func topicStatus(t *testing.T, env *apitest.Env, u *apitest.User, course, topic int64) int64 {
	t.Helper()
	for _, p := range apitest.Must(env.UserClient(u).GetCoursesProgressID(t.Context(), course))(t).Topics {
		if p.TopicID == topic {
			return p.Status
		}
	}
	return 0
}

// program reads the learner's program raw: the checks that it holds no
// answers read every byte sent, not only the fields the client knows.
func program(t *testing.T, w *world) *apitest.Response {
	t.Helper()
	return w.env.Call(t, 200, "GET", "/api/courses/"+num(w.course)+"/program", w.learner.Token, nil)
}

// at is the element i of xs, or -1.
func at(xs []int64, i int) int64 {
	if i < len(xs) {
		return xs[i]
	}
	return -1
}

// text is the element i of xs, or "".
func text(xs []string, i int) string {
	if i < len(xs) {
		return xs[i]
	}
	return ""
}

// TestPracticeCheck: the learner's page holds no answers; a check answers
// them and completes the topic; only those who may learn the course check.
func TestPracticeCheck(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		tutor, learner := env.ClientAs("tutor"), env.UserClient(w.learner)
		topic := apitest.Must(tutor.PostAdminTopics(ctx, w.topic(t, []any{callout(), practice()}, "Practise adding numbers.")))(t).ID
		plain := apitest.Must(tutor.PostAdminTopics(ctx, w.topic(t, []any{callout()}, "Read the note.")))(t).ID

		program := program(t, w)
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

		// Practice cannot be skipped with a progress write; a plain layout
		// completes that way when viewed.
		write := func(topic, status int64) error {
			_, err := learner.PatchCoursesProgressID(ctx, w.course, client.WriteInputBody{
				Progress: []client.ProgressWrite{{TopicID: topic, Status: status}}})
			return err
		}
		apitest.Refused(t, write(topic, 1), 422)
		apitest.OK(t, write(topic, 2))
		apitest.OK(t, write(plain, 1))
		if s := topicStatus(t, env, w.learner, w.course, topic); s != 2 {
			t.Fatalf("status before a check: %v", s)
		}
		check := func(c *client.Client, topic int64, in client.CheckInput) (*client.CheckResult, error) {
			return c.PostTopicsIDPracticeCheck(ctx, topic, in)
		}
		wrong := apitest.Must(check(learner, topic, client.CheckInput{Node: 1, Question: 0, Selected: []int64{0}}))(t)
		if wrong.Correct || wrong.Score != 0 || text(wrong.Hints, 0) != "Count on your fingers twice." ||
			at(wrong.CorrectOptions, 0) != 1 || wrong.Solution == nil || *wrong.Solution != "Two and two make four, always." {
			t.Errorf("wrong answer: %+v", wrong)
		}
		if s := topicStatus(t, env, w.learner, w.course, topic); s != 1 {
			t.Errorf("status after the first check: %v, want 1 (complete)", s)
		}
		right := apitest.Must(check(learner, topic, client.CheckInput{Node: 1, Question: 1, Selected: []int64{2, 0}}))(t)
		if !right.Correct || right.Score != 3 || len(right.Hints) != 0 {
			t.Errorf("right answer: %+v", right)
		}
		partial := apitest.Must(check(learner, topic, client.CheckInput{Node: 1, Question: 1, Selected: []int64{0}}))(t)
		if partial.Correct {
			t.Errorf("half the right options: %+v", partial)
		}

		for _, c := range []struct {
			name   string
			as     *client.Client
			topic  int64
			body   client.CheckInput
			status int
		}{
			{"anonymous", env.ClientAs("anonymous"), topic, client.CheckInput{Node: 1, Question: 0, Selected: []int64{1}}, 401},
			{"not assigned", env.UserClient(env.NewUser("student")), topic, client.CheckInput{Node: 1, Question: 0, Selected: []int64{1}}, 403},
			{"other tutor", env.UserClient(env.NewUser("tutor")), topic, client.CheckInput{Node: 1, Question: 0, Selected: []int64{1}}, 403},
			{"not a practice node", learner, topic, client.CheckInput{Node: 0, Question: 0, Selected: []int64{1}}, 422},
			{"node out of range", learner, topic, client.CheckInput{Node: 9, Question: 0, Selected: []int64{1}}, 422},
			{"question out of range", learner, topic, client.CheckInput{Node: 1, Question: 2, Selected: []int64{1}}, 422},
			{"option out of range", learner, topic, client.CheckInput{Node: 1, Question: 0, Selected: []int64{5}}, 422},
			{"too many options", learner, topic, client.CheckInput{Node: 1, Question: 0, Selected: make([]int64, 11)}, 422},
			{"no practice in the topic", learner, plain, client.CheckInput{Node: 0, Question: 0, Selected: []int64{0}}, 422},
			{"unknown topic", learner, 999999, client.CheckInput{Node: 0, Question: 0, Selected: []int64{0}}, 404},
		} {
			_, err := check(c.as, c.topic, c.body)
			refusal(t, c.name, err, c.status)
		}
		// The author tries the topic out.
		apitest.Must(check(tutor, topic, client.CheckInput{Node: 1, Question: 0, Selected: []int64{1}}))(t)
	})
}

// TestComponentCatalogue: authors read the components with their props
// schemas, which the OpenAPI description carries too.
func TestComponentCatalogue(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		res := apitest.Must(env.ClientAs("tutor").GetAdminLayoutComponents(ctx))(t)
		list := res.Components
		if len(list) != 9 || list[0].Name != "Callout" || list[0].Props != "#/components/schemas/CalloutProps" ||
			apitest.Lookup(res.Schemas, "PracticeActivityProps.properties.questions") == nil || len(res.Rules) == 0 || res.Rules[0] == "" {
			t.Fatalf("catalogue: %+v", res)
		}
		// LiaScriptLesson is approved: it names a LiaScript course. Every
		// field of the answer is read back, the schemas whole.
		required, _ := apitest.Lookup(res.Schemas, "LiaScriptLessonProps.required").([]any)
		whole, _ := json.Marshal(res)
		if list[4].Name != "LiaScriptLesson" || !slices.Contains(required, any("course_id")) ||
			strings.Contains(string(whole), "do not exist") {
			t.Errorf("LiaScriptLesson in the catalogue: %s", whole)
		}
		apitest.Must(env.ClientAs("admin").GetAdminLayoutComponents(ctx))(t)
		_, err := env.ClientAs("student").GetAdminLayoutComponents(ctx)
		apitest.Refused(t, err, 403)
		_, err = env.ClientAs("anonymous").GetAdminLayoutComponents(ctx)
		apitest.Refused(t, err, 401)
		// The OpenAPI description is a document, not an API answer: raw.
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
		ctx, w := t.Context(), newWorld(t, env)
		tutor, learner := env.ClientAs("tutor"), env.UserClient(w.learner)
		questions := []any{
			map[string]any{"gift": "Capital of France? {=Paris #Right, the Seine city. ~Lyon #Lyon is second. ####Paris since Clovis.}", "score": 2},
			map[string]any{"gift": "Primes? {~%50%Two ~%50%Three ~%-100%Four}"},
			map[string]any{"gift": "The sun is a star. {T#Look again at the sky.#Yes, a yellow dwarf.}"},
			map[string]any{"gift": "Largest planet? {=Jupiter =%50%Saturn #Second largest.}"},
			map[string]any{"gift": "Pi to two decimals? {#3.14:0.005}"},
			map[string]any{"gift": "Match. {=cat -> meow =dog -> woof}"},
		}
		doc := []any{callout(), node("PracticeActivity", map[string]any{"title": "GIFT", "questions": questions})}
		topic := apitest.Must(tutor.PostAdminTopics(ctx, w.topic(t, doc, "Practise facts.")))(t).ID

		program := program(t, w)
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

		answer := func(q int64, a client.Response) *client.CheckResult {
			t.Helper()
			return apitest.Must(learner.PostTopicsIDPracticeCheck(ctx, topic, client.CheckInput{Node: 1, Question: q, Answer: &a}))(t)
		}
		// right is the right answer a check gives back.
		right := func(r *client.CheckResult) client.Response {
			if r.RightAnswer == nil {
				return client.Response{}
			}
			return *r.RightAnswer
		}
		yes, no := true, false
		if r := answer(0, client.Response{Choices: []int64{1}}); r.Correct || r.Score != 0 ||
			at(r.CorrectOptions, 0) != 0 || at(right(r).Choices, 0) != 0 ||
			text(r.Feedback, 0) != "Lyon is second." || text(r.Feedback, 1) != "Paris since Clovis." {
			t.Errorf("multiple choice, wrong: %+v", r)
		}
		if r := answer(0, client.Response{Choices: []int64{0}}); !r.Correct || r.Score != 2 ||
			text(r.Feedback, 0) != "Right, the Seine city." {
			t.Errorf("multiple choice, right: %+v", r)
		}
		if r := answer(1, client.Response{Choices: []int64{0}}); r.Correct || r.Score != 0.5 ||
			at(right(r).Choices, 1) != 1 {
			t.Errorf("several answers, half: %+v", r)
		}
		if r := answer(1, client.Response{Choices: []int64{0, 1}}); !r.Correct || r.Score != 1 {
			t.Errorf("several answers, all: %+v", r)
		}
		if r := answer(2, client.Response{Truth: &no}); r.Correct || right(r).Truth == nil || !*right(r).Truth ||
			text(r.Feedback, 0) != "Look again at the sky." {
			t.Errorf("true/false, wrong: %+v", r)
		}
		if r := answer(2, client.Response{Truth: &yes}); !r.Correct || text(r.Feedback, 0) != "Yes, a yellow dwarf." {
			t.Errorf("true/false, right: %+v", r)
		}
		if r := answer(3, client.Response{Text: client.Ptr(" saturn ")}); r.Correct || r.Score != 0.5 ||
			text(r.Feedback, 0) != "Second largest." || right(r).Text == nil || *right(r).Text != "Jupiter" {
			t.Errorf("short answer, partial: %+v", r)
		}
		if r := answer(3, client.Response{Text: client.Ptr("JUPITER")}); !r.Correct {
			t.Errorf("short answer, right: %+v", r)
		}
		if r := answer(4, client.Response{Text: client.Ptr("3,142")}); !r.Correct || right(r).Text == nil || *right(r).Text != "3.14" {
			t.Errorf("numerical, within tolerance: %+v", r)
		}
		if r := answer(4, client.Response{Text: client.Ptr("3.2")}); r.Correct || r.Score != 0 {
			t.Errorf("numerical, outside: %+v", r)
		}
		if r := answer(5, client.Response{Matches: []string{"meow", "meow"}}); r.Correct || r.Score != 0.5 ||
			text(right(r).Matches, 1) != "woof" {
			t.Errorf("matching, half: %+v", r)
		}
		if s := topicStatus(t, env, w.learner, w.course, topic); s != 1 {
			t.Errorf("status after a check: %v, want 1 (complete)", s)
		}
		for _, c := range []struct {
			name string
			body client.CheckInput
		}{
			{"no answer", client.CheckInput{Node: 1, Question: 0, Selected: []int64{0}}},
			{"choice out of range", client.CheckInput{Node: 1, Question: 0, Answer: &client.Response{Choices: []int64{7}}}},
			{"two choices to a one-answer question", client.CheckInput{Node: 1, Question: 0, Answer: &client.Response{Choices: []int64{0, 1}}}},
			{"too many matches", client.CheckInput{Node: 1, Question: 5, Answer: &client.Response{Matches: []string{"a", "b", "c"}}}},
		} {
			_, err := learner.PostTopicsIDPracticeCheck(ctx, topic, c.body)
			refusal(t, c.name, err, 422)
		}
	})
}

// TestComponentExamples: the example of every component in the catalogue
// is a valid node (the content an H5PFrame and a LiaScriptLesson name made
// first), so that authors and agents can start from it: a document of all
// of them is accepted as it is served.
func TestComponentExamples(t *testing.T) {
	pkg := fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		admin, tutor := env.ClientAs("admin"), env.ClientAs("tutor")
		h5p := apitest.Must(admin.PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
			H5PFile: &client.File{Name: "content.h5p", Content: bytes.NewReader(pkg)}}))(t).ContentID
		lia := apitest.Must(tutor.PostAdminLiascript(ctx, client.PostAdminLiascriptBody{Markdown: "# Soil\n\nIntro\n"}))(t).ID
		if h5p != "1" || lia != 1 {
			t.Fatalf("the examples name H5P content 1 and LiaScript course 1; made %s and %d", h5p, lia)
		}
		catalogue := apitest.Must(tutor.GetAdminLayoutComponents(ctx))(t)
		var doc []any
		for _, c := range catalogue.Components {
			if c.Example == nil {
				t.Fatalf("%s has no example", c.Name)
			}
			doc = append(doc, node(c.Name, c.Example.(map[string]any)))
		}
		apitest.Must(tutor.PostAdminTopics(ctx, w.topic(t, doc, "Every component.")))(t)
	})
}
