package quiz_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/platform"
)

const quizClass = `Lms\TopicTypeGift\Models\GiftQuiz`

// world is a published course authored by a tutor, with one lesson and an
// assigned learner.
type world struct {
	env                          *apitest.Env
	admin, tutor, other, learner *apitest.User
	outsider                     *apitest.User
	course, lesson               int64
}

func newWorld(t testing.TB, env *apitest.Env) *world {
	t.Helper()
	w := &world{env: env, admin: env.As("admin"), tutor: env.As("tutor"), other: env.NewUser("tutor"),
		learner: env.NewUser("student"), outsider: env.NewUser("student")}
	// Course rows belong to package courses; a test writes them directly.
	exec(t, env, func(tn *platform.Tenant) error {
		ctx, now := context.Background(), env.Clock.Now()
		err := tn.DB.QueryRowContext(ctx, `INSERT INTO courses (title, status, created_at, updated_at)
			VALUES ('Quiz course', 'published', $1, $1) RETURNING id`, now).Scan(&w.course)
		if err == nil {
			_, err = tn.DB.ExecContext(ctx, `INSERT INTO course_authors (course_id, user_id) VALUES ($1, $2)`, w.course, w.tutor.ID)
		}
		if err == nil {
			err = tn.DB.QueryRowContext(ctx, `INSERT INTO lessons (course_id, title, position, created_at, updated_at)
				VALUES ($1, 'Lesson', 1, $2, $2) RETURNING id`, w.course, now).Scan(&w.lesson)
		}
		if err == nil {
			_, err = tn.DB.ExecContext(ctx, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`,
				w.course, w.learner.ID, now)
		}
		return err
	})
	return w
}

func exec(t testing.TB, env *apitest.Env, fn func(*platform.Tenant) error) {
	t.Helper()
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	if err := fn(tn); err != nil {
		t.Fatal(err)
	}
}

func call(t testing.TB, env *apitest.Env, want int, method, path string, u *apitest.User, body any) *apitest.Response {
	t.Helper()
	token := ""
	if u != nil {
		token = u.Token
	}
	return env.Call(t, want, method, path, token, body)
}

func id(v float64) string { return fmt.Sprint(int64(v)) }

// questions covers every question type; the scored ones add up to 9
// points, of which the essay is 2.
var questions = []map[string]any{
	{"prompt": "Which is a prime?", "options": []map[string]any{{"text": "4", "correct": false}, {"text": "7", "correct": true}}},
	{"gift": "::TF:: The sun is a star. {T#No, it is.#Right.}"},
	{"gift": "Capital of France? {=Paris =%50%Paname}"},
	{"gift": "Pi to two places? {#3.14:0.005}", "score": 2},
	{"gift": "Match: {=cat -> meow =dog -> woof = -> moo}"},
	{"gift": "Pick the continents {~%50%Asia ~%50%Africa ~%-100%Paris}"},
	{"gift": "Write about cats. {}", "score": 2},
	{"gift": "This is a description."},
}

func createQuiz(t testing.TB, w *world, extra map[string]any) float64 {
	t.Helper()
	body := map[string]any{"lesson": w.lesson, "title": "Quiz", "topicable": quizClass, "value": "Read **this** first.",
		"questions": questions}
	for k, v := range extra {
		body[k] = v
	}
	res := call(t, w.env, 201, "POST", "/api/admin/topics", w.tutor, body)
	return res.Number("data.id")
}

func start(t *testing.T, w *world, want int, u *apitest.User, topic float64) *apitest.Response {
	t.Helper()
	return call(t, w.env, want, "POST", "/api/quiz-attempts", u, map[string]any{"topic_id": topic})
}

// questionIDs maps each question's position to its id in an attempt.
func questionIDs(t *testing.T, res *apitest.Response) []float64 {
	t.Helper()
	var ids []float64
	for _, q := range res.Get("data.questions").([]any) {
		ids = append(ids, q.(map[string]any)["id"].(float64))
	}
	return ids
}

func answer(t *testing.T, w *world, want int, u *apitest.User, attempt, question float64, a map[string]any) *apitest.Response {
	t.Helper()
	return call(t, w.env, want, "POST", "/api/quiz-attempts/"+id(attempt)+"/answer", u,
		map[string]any{"question_id": question, "answer": a})
}

func topicStatus(t *testing.T, w *world, user int64, topic float64) int {
	t.Helper()
	return w.env.Count(t, `SELECT COALESCE(MAX(status), 0) FROM topic_progress WHERE user_id = $1 AND topic_id = $2`, user, int64(topic))
}

func TestAttemptScoringAndEssayGrading(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := createQuiz(t, w, map[string]any{"maxAttempts": 2, "minPassScore": 7})

		// The topic shows the rules, never the questions.
		res := call(t, env, 200, "GET", "/api/admin/topics/"+id(topic), w.tutor, nil)
		if res.Number("data.topicable.question_count") != 8 || res.Number("data.topicable.max_score") != 9 ||
			strings.Contains(string(res.Body), "Paname") {
			t.Fatalf("quiz topic: %s", res.Body)
		}

		// Who may start: the course's learner and its editors; not a
		// student outside the course, nor another tutor.
		start(t, w, 403, w.outsider, topic)
		start(t, w, 403, w.other, topic)
		call(t, env, 401, "POST", "/api/quiz-attempts", nil, map[string]any{"topic_id": topic})
		res = start(t, w, 201, w.learner, topic)
		attempt := res.Number("data.id")
		if again := start(t, w, 200, w.learner, topic); again.Number("data.id") != attempt {
			t.Fatalf("a second start made another attempt: %s", again.Body)
		}

		// Nothing in the questions tells the right answers.
		for _, leak := range []string{"weight", "correct", "feedback", "Right.", "Paname", "3.14", "meow\",\"woof", `"review":{`} {
			if strings.Contains(string(res.Body), leak) {
				t.Errorf("the attempt shows %q: %s", leak, res.Body)
			}
		}
		if res.Get("data.score") != nil || res.Number("data.seconds_left") != 3600 || res.String("data.review") != "after_end" {
			t.Errorf("open attempt: %s", res.Body)
		}
		q := questionIDs(t, res)

		// Another learner cannot see or answer this attempt.
		call(t, env, 404, "GET", "/api/quiz-attempts/"+id(attempt), w.outsider, nil)
		answer(t, w, 404, w.outsider, attempt, q[0], map[string]any{"choices": []int{1}})
		// Malformed answers are refused.
		answer(t, w, 422, w.learner, attempt, q[0], map[string]any{"choices": []int{0, 1}})
		answer(t, w, 422, w.learner, attempt, q[0], map[string]any{"choices": []int{5}})
		answer(t, w, 422, w.learner, attempt, q[7], map[string]any{"text": "a description takes none"})
		answer(t, w, 422, w.learner, attempt, 999, map[string]any{"text": "x"})

		// A first answer replaced by a second: the last one counts.
		answer(t, w, 200, w.learner, attempt, q[0], map[string]any{"choices": []int{0}})
		saved := answer(t, w, 200, w.learner, attempt, q[0], map[string]any{"choices": []int{1}})
		if strings.Contains(string(saved.Body), "fraction") || strings.Contains(string(saved.Body), "earned") {
			t.Errorf("a saved answer tells its score: %s", saved.Body)
		}
		answer(t, w, 200, w.learner, attempt, q[1], map[string]any{"truth": true})                       // 1
		answer(t, w, 200, w.learner, attempt, q[2], map[string]any{"text": "paname"})                    // 0.5
		answer(t, w, 200, w.learner, attempt, q[3], map[string]any{"text": "3.144"})                     // 2
		answer(t, w, 200, w.learner, attempt, q[4], map[string]any{"matches": []string{"meow", "meow"}}) // 0.5
		answer(t, w, 200, w.learner, attempt, q[5], map[string]any{"choices": []int{0, 2}})              // 0
		answer(t, w, 200, w.learner, attempt, q[6], map[string]any{"text": "Cats purr."})                // graded later

		// Saved answers are there after a reload.
		res = call(t, env, 200, "GET", "/api/quiz-attempts/"+id(attempt), w.learner, nil)
		if res.String("data.questions.2.answer.text") != "paname" || res.Number("data.questions.0.answer.choices.0") != 1 {
			t.Fatalf("saved answers: %s", res.Body)
		}

		res = call(t, env, 200, "POST", "/api/quiz-attempts/"+id(attempt)+"/end", w.learner, nil)
		// 1 + 1 + 0.5 + 2 + 0.5 + 0 = 5 points before the essay.
		if res.Number("data.score") != 5 || res.Get("data.passed") != nil || res.Get("data.pending_grading") != true ||
			res.String("data.status") != "ended" {
			t.Fatalf("ended attempt: %s", res.Body)
		}
		if res.Number("data.questions.2.review.earned") != 0.5 || res.Get("data.questions.6.review.earned") != nil ||
			res.String("data.questions.1.review.gift.rightFeedback.text") != "Right." {
			t.Fatalf("review: %s", res.Body)
		}
		answer(t, w, 409, w.learner, attempt, q[0], map[string]any{"choices": []int{0}})
		if topicStatus(t, w, w.learner.ID, topic) == 1 {
			t.Fatal("the topic completed before the essay was graded")
		}

		// Grading: the course's tutor and admins; not another tutor, not
		// the learner.
		grade := "/api/admin/quiz-attempts/" + id(attempt) + "/grade"
		call(t, env, 403, "POST", grade, w.other, map[string]any{"question_id": q[6], "score": 2})
		call(t, env, 403, "POST", grade, w.learner, map[string]any{"question_id": q[6], "score": 2})
		call(t, env, 422, "POST", grade, w.tutor, map[string]any{"question_id": q[6], "score": 3})
		call(t, env, 422, "POST", grade, w.tutor, map[string]any{"question_id": q[2], "score": 1})
		res = call(t, env, 200, "POST", grade, w.tutor, map[string]any{"question_id": q[6], "score": 1.5})
		if res.Number("data.score") != 6.5 || res.Get("data.passed") != false || res.Get("data.pending_grading") != false {
			t.Fatalf("graded below the pass score: %s", res.Body)
		}
		res = call(t, env, 200, "POST", grade, w.admin, map[string]any{"question_id": q[6], "score": 2})
		if res.Number("data.score") != 7 || res.Get("data.passed") != true {
			t.Fatalf("graded to a pass: %s", res.Body)
		}
		if topicStatus(t, w, w.learner.ID, topic) != 1 {
			t.Fatal("a passed attempt did not complete the topic")
		}

		// Listing: the learner sees their own; the course's tutor sees all.
		res = call(t, env, 200, "GET", fmt.Sprintf("/api/quiz-attempts?topic_id=%d", int64(topic)), w.learner, nil)
		if res.Number("meta.total") != 1 {
			t.Fatalf("my attempts: %s", res.Body)
		}
		if res = call(t, env, 200, "GET", "/api/quiz-attempts", w.outsider, nil); res.Number("meta.total") != 0 {
			t.Fatalf("another learner's list: %s", res.Body)
		}
		list := "/api/admin/topics/" + id(topic) + "/quiz-attempts"
		if res = call(t, env, 200, "GET", list, w.tutor, nil); res.Number("meta.total") != 1 {
			t.Fatalf("tutor's list: %s", res.Body)
		}
		call(t, env, 403, "GET", list, w.other, nil)
		call(t, env, 403, "GET", list, w.learner, nil)
		call(t, env, 200, "GET", "/api/admin/quiz-attempts/"+id(attempt), w.tutor, nil)
		call(t, env, 403, "GET", "/api/admin/quiz-attempts/"+id(attempt), w.learner, nil)

		// Two attempts at most.
		second := start(t, w, 201, w.learner, topic)
		if second.Number("data.number") != 2 {
			t.Fatalf("second attempt: %s", second.Body)
		}
		call(t, env, 200, "POST", "/api/quiz-attempts/"+id(second.Number("data.id"))+"/end", w.learner, nil)
		start(t, w, 403, w.learner, topic)
	})
}

// TestReviewSettings: after_answer shows each answer's review when it is
// saved and makes the answer final; never shows learners only the score
// and the pass, while graders see everything; an attempt keeps the
// setting it started with.
func TestReviewSettings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := call(t, env, 422, "POST", "/api/admin/topics", w.tutor, map[string]any{"lesson": w.lesson, "title": "Quiz",
			"topicable": quizClass, "questions": questions[:3], "review": "sometimes"})
		if errs, _ := res.Get("errors").(map[string]any); errs["review"] == nil {
			t.Fatalf("bad review setting: %s", res.Body)
		}
		three := func(review string) float64 {
			return call(t, env, 201, "POST", "/api/admin/topics", w.tutor, map[string]any{"lesson": w.lesson, "title": "Quiz",
				"topicable": quizClass, "questions": questions[:3], "minPassScore": 2, "review": review}).Number("data.id")
		}
		hidden := func(what string, res *apitest.Response) {
			t.Helper()
			for _, leak := range []string{`"review":{`, "Right.", "Paname", "weight"} {
				if strings.Contains(string(res.Body), leak) {
					t.Errorf("%s shows %q: %s", what, leak, res.Body)
				}
			}
		}

		// after_answer.
		topic := three("after_answer")
		if res = call(t, env, 200, "GET", "/api/admin/topics/"+id(topic), w.tutor, nil); res.String("data.topicable.review") != "after_answer" {
			t.Fatalf("quiz topic: %s", res.Body)
		}
		res = start(t, w, 201, w.learner, topic)
		attempt, q := res.Number("data.id"), questionIDs(t, res)
		if res.String("data.review") != "after_answer" {
			t.Fatalf("attempt: %s", res.Body)
		}
		hidden("a new after_answer attempt", res)
		saved := answer(t, w, 200, w.learner, attempt, q[1], map[string]any{"truth": true})
		if saved.Number("data.review.earned") != 1 || saved.String("data.review.gift.rightFeedback.text") != "Right." {
			t.Fatalf("saved answer without its review: %s", saved.Body)
		}
		// The author's later change does not reach the attempt under way.
		call(t, env, 200, "PATCH", "/api/admin/topics/"+id(topic), w.tutor, map[string]any{"review": "never"})
		res = call(t, env, 200, "GET", "/api/quiz-attempts/"+id(attempt), w.learner, nil)
		if res.Number("data.questions.1.review.earned") != 1 || res.Get("data.questions.0.review") != nil ||
			res.Get("data.questions.2.review") != nil || strings.Contains(string(res.Body), "Paname") || res.Get("data.score") != nil {
			t.Fatalf("after_answer attempt with one answer: %s", res.Body)
		}
		// A reviewed answer is final.
		res = answer(t, w, 409, w.learner, attempt, q[1], map[string]any{"truth": false})
		if !strings.Contains(res.String("message"), "cannot be changed") {
			t.Errorf("changed answer: %s", res.Body)
		}
		answer(t, w, 200, w.learner, attempt, q[2], map[string]any{"text": "Paname"})
		res = call(t, env, 200, "POST", "/api/quiz-attempts/"+id(attempt)+"/end", w.learner, nil)
		if res.Number("data.score") != 1.5 || res.Get("data.passed") != false || res.Number("data.questions.0.review.earned") != 0 ||
			res.Number("data.questions.2.review.earned") != 0.5 {
			t.Fatalf("ended after_answer attempt: %s", res.Body)
		}
		// The next attempt follows the quiz's setting now: never.
		res = start(t, w, 201, w.learner, topic)
		if res.String("data.review") != "never" {
			t.Fatalf("next attempt: %s", res.Body)
		}

		// never.
		topic = three("never")
		res = start(t, w, 201, w.learner, topic)
		attempt, q = res.Number("data.id"), questionIDs(t, res)
		saved = answer(t, w, 200, w.learner, attempt, q[1], map[string]any{"truth": true})
		hidden("a saved answer under never", saved)
		answer(t, w, 200, w.learner, attempt, q[1], map[string]any{"truth": false})
		answer(t, w, 200, w.learner, attempt, q[0], map[string]any{"choices": []int{1}})
		answer(t, w, 200, w.learner, attempt, q[2], map[string]any{"text": "Paris"})
		hidden("an answered attempt under never", call(t, env, 200, "GET", "/api/quiz-attempts/"+id(attempt), w.learner, nil))
		res = call(t, env, 200, "POST", "/api/quiz-attempts/"+id(attempt)+"/end", w.learner, nil)
		if res.Number("data.score") != 2 || res.Get("data.passed") != true {
			t.Fatalf("ended never attempt: %s", res.Body)
		}
		hidden("an ended attempt under never", res)
		hidden("an ended attempt under never, listed", call(t, env, 200, "GET", "/api/quiz-attempts?topic_id="+id(topic), w.learner, nil))
		hidden("an ended attempt under never, shown again", call(t, env, 200, "GET", "/api/quiz-attempts/"+id(attempt), w.learner, nil))
		// The course's tutor and admins see everything.
		for _, u := range []*apitest.User{w.tutor, w.admin} {
			res = call(t, env, 200, "GET", "/api/admin/quiz-attempts/"+id(attempt), u, nil)
			if res.Number("data.questions.1.review.earned") != 0 || res.String("data.questions.1.review.gift.rightFeedback.text") != "Right." ||
				res.Number("data.questions.2.review.earned") != 1 {
				t.Fatalf("grader's view under never: %s", res.Body)
			}
		}
		call(t, env, 403, "GET", "/api/admin/quiz-attempts/"+id(attempt), w.other, nil)
	})
}

func TestTimeLimitOnTheClock(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		call(t, env, 200, "POST", "/api/admin/config", w.admin,
			map[string]any{"config": []map[string]any{{"key": "lms_gift_quiz.max_quiz_time", "value": 3}}})
		// No pass score: an ended attempt completes the topic.
		topic := createQuiz(t, w, nil)
		res := start(t, w, 201, w.learner, topic)
		attempt, q := res.Number("data.id"), questionIDs(t, res)
		if res.Number("data.seconds_left") != 180 {
			t.Fatalf("time limit: %s", res.Body)
		}
		env.Clock.Advance(2*time.Minute + 59*time.Second)
		answer(t, w, 200, w.learner, attempt, q[1], map[string]any{"truth": true})
		env.Clock.Advance(time.Second)
		// Time is over: the answer is refused and the attempt ends itself,
		// at its time limit, with what was saved.
		res = answer(t, w, 409, w.learner, attempt, q[2], map[string]any{"text": "Paris"})
		if !strings.Contains(res.String("message"), "time") {
			t.Errorf("late answer: %s", res.Body)
		}
		res = call(t, env, 200, "GET", "/api/quiz-attempts/"+id(attempt), w.learner, nil)
		if res.String("data.status") != "ended" || res.Number("data.score") != 1 || res.String("data.ended_at") != res.String("data.ends_at") {
			t.Fatalf("expired attempt: %s", res.Body)
		}
		if topicStatus(t, w, w.learner.ID, topic) != 1 {
			t.Fatal("an ended attempt of a quiz without pass score did not complete the topic")
		}

		// An attempt left alone ends when the learner next looks.
		start(t, w, 201, w.learner, topic)
		env.Clock.Advance(4 * time.Minute)
		// Sessions last 5 minutes by default.
		w.learner.Token, _ = env.Login(env.Host, w.learner.Email, w.learner.Password)
		res = call(t, env, 200, "GET", "/api/quiz-attempts?topic_id="+id(topic), w.learner, nil)
		if res.String("data.0.status") != "ended" || res.Get("data.0.score") == nil {
			t.Fatalf("abandoned attempt: %s", res.Body)
		}

		// A passing attempt nobody looks at again is ended by the hourly
		// job, at its limit, and completes its topic.
		w.tutor.Token, _ = env.Login(env.Host, w.tutor.Email, w.tutor.Password)
		passing := createQuiz(t, w, map[string]any{"minPassScore": 1})
		res = start(t, w, 201, w.learner, passing)
		left, lq := res.Number("data.id"), questionIDs(t, res)
		answer(t, w, 200, w.learner, left, lq[1], map[string]any{"truth": true})
		env.Clock.Advance(time.Hour)
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if topicStatus(t, w, w.learner.ID, passing) != 1 {
			t.Fatal("the job did not end a passing attempt left alone")
		}
		n := env.Count(t, `SELECT COUNT(*) FROM quiz_attempts WHERE id = $1 AND ended_at = ends_at AND score = 1`, int64(left))
		if n != 1 {
			t.Fatal("the job did not end the attempt at its limit with its saved answer")
		}
	})
}

// TestStartWhereProgressCounts: learners take a quiz only where its
// completion would count; the course's editors may always try it.
func TestStartWhereProgressCounts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		var later int64
		exec(t, env, func(tn *platform.Tenant) error {
			return tn.DB.QueryRowContext(context.Background(), `INSERT INTO lessons (course_id, title, position, active_from,
				created_at, updated_at) VALUES ($1, 'Later', 2, $2, $3, $3) RETURNING id`, w.course,
				env.Clock.Now().Add(48*time.Hour), env.Clock.Now()).Scan(&later)
		})
		res := call(t, env, 201, "POST", "/api/admin/topics", w.tutor, map[string]any{"lesson": later, "title": "Later quiz",
			"topicable": quizClass, "questions": questions[:2]})
		topic := res.Number("data.id")
		if msg := start(t, w, 403, w.learner, topic).String("message"); msg == "" {
			t.Error("no message for a closed lesson")
		}
		start(t, w, 201, w.tutor, topic)
		// An inactive quiz is not there for learners.
		open := createQuiz(t, w, nil)
		call(t, env, 200, "PATCH", "/api/admin/topics/"+id(open), w.tutor, map[string]any{"active": false})
		start(t, w, 404, w.learner, open)
		// A topic of another kind is no quiz.
		rich := call(t, env, 201, "POST", "/api/admin/topics", w.tutor, map[string]any{"lesson": w.lesson, "title": "Text",
			"topicable": `Lms\TopicTypes\Models\TopicContent\RichText`, "markdown": "Hello"})
		start(t, w, 422, w.learner, rich.Number("data.id"))
		call(t, env, 422, "POST", "/api/admin/gift-questions", w.tutor, map[string]any{"topic_id": rich.Number("data.id"), "value": "Q {T}"})
		// A quiz is not skipped with a progress write.
		active := createQuiz(t, w, nil)
		skip := call(t, env, 422, "PATCH", "/api/courses/progress/"+fmt.Sprint(w.course), w.learner,
			map[string]any{"progress": []any{map[string]any{"topic_id": active, "status": 1}}})
		if !strings.Contains(string(skip.Body), "its own activity") {
			t.Errorf("progress write completing a quiz: %s", skip.Body)
		}
	})
}

func TestQuestionAuthoring(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		// Validation names each bad question.
		res := call(t, env, 422, "POST", "/api/admin/topics", w.tutor, map[string]any{"lesson": w.lesson, "title": "Quiz",
			"topicable": quizClass, "questions": []map[string]any{
				{"gift": "Broken {=a"},
				{"prompt": "No right option", "options": []map[string]any{{"text": "a"}, {"text": "b"}}},
				{"gift": "Fine {T}", "score": -1},
			}})
		errs, _ := res.Get("errors").(map[string]any)
		for _, f := range []string{"questions.0.gift", "questions.1", "questions.2.score"} {
			if errs[f] == nil {
				t.Errorf("no error for %s: %s", f, res.Body)
			}
		}
		if !strings.Contains(fmt.Sprint(errs["questions.0.gift"]), "line 1: expected }") {
			t.Errorf("GIFT error: %s", res.Body)
		}
		call(t, env, 422, "POST", "/api/admin/topics", w.tutor, map[string]any{"lesson": w.lesson, "title": "Quiz", "topicable": quizClass})

		topic := createQuiz(t, w, nil)
		path := "/api/admin/topics/" + id(topic) + "/gift-questions"
		res = call(t, env, 200, "GET", path, w.tutor, nil)
		if len(res.Get("data").([]any)) != 8 || !strings.Contains(res.String("data.0.value"), "=7") || res.String("data.0.type") != "multichoice" {
			t.Fatalf("questions: %s", res.Body)
		}
		first := res.Number("data.0.id")

		add := map[string]any{"topic_id": topic, "value": "2 + 2 = {#4}", "score": 3}
		// Who may add: the course's editors only.
		for _, u := range []*apitest.User{w.learner, w.other} {
			call(t, env, 403, "POST", "/api/admin/gift-questions", u, add)
		}
		call(t, env, 403, "GET", path, w.learner, nil)
		call(t, env, 401, "POST", "/api/admin/gift-questions", nil, add)
		res = call(t, env, 201, "POST", "/api/admin/gift-questions", w.tutor, add)
		added := res.Number("data.id")
		if res.String("data.type") != "numerical" || res.Number("data.score") != 3 || res.Number("data.order") != 9 {
			t.Fatalf("added: %s", res.Body)
		}
		res = call(t, env, 422, "POST", "/api/admin/gift-questions", w.tutor, map[string]any{"topic_id": topic, "value": "Bad {~only}"})
		if !strings.Contains(string(res.Body), "expected at least two answers") {
			t.Errorf("bad GIFT: %s", res.Body)
		}

		// Editors adding at the same moment lose nothing: each edit rewrites
		// the whole list, one at a time.
		var wg sync.WaitGroup
		statuses := make([]int, 6)
		for i := range statuses {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses[i] = env.Do(apitest.Request{Method: "POST", Path: "/api/admin/gift-questions", Token: w.tutor.Token,
					Body: map[string]any{"topic_id": topic, "value": fmt.Sprintf("%d + 1 = {#%d}", i, i+1)}}).Status
			}()
		}
		wg.Wait()
		res = call(t, env, 200, "GET", path, w.tutor, nil)
		if n := len(res.Get("data").([]any)); n != 9+len(statuses) || slices.ContainsFunc(statuses, func(s int) bool { return s != 201 }) {
			t.Fatalf("concurrent adds: statuses %v, %d questions", statuses, n)
		}
		for range statuses {
			call(t, env, 200, "DELETE", path+"/"+id(res.Number("data.9.id")), w.tutor, nil)
			res = call(t, env, 200, "GET", path, w.tutor, nil)
		}

		// Update, reorder, delete.
		res = call(t, env, 200, "PUT", path+"/"+id(added), w.admin, map[string]any{"value": "3 + 3 = {#6}"})
		if res.Number("data.id") != added || !strings.Contains(res.String("data.value"), "#6") || res.Number("data.score") != 3 {
			t.Fatalf("updated: %s", res.Body)
		}
		call(t, env, 403, "PUT", path+"/"+id(added), w.other, map[string]any{"score": 1})
		list := call(t, env, 200, "GET", path, w.tutor, nil).Get("data").([]any)
		var ids []float64
		for i := len(list) - 1; i >= 0; i-- {
			ids = append(ids, list[i].(map[string]any)["id"].(float64))
		}
		call(t, env, 422, "PUT", path+"/order", w.tutor, map[string]any{"ids": ids[:3]})
		res = call(t, env, 200, "PUT", path+"/order", w.tutor, map[string]any{"ids": ids})
		if res.Number("data.0.id") != added || res.Number("data.8.id") != first {
			t.Fatalf("reordered: %s", res.Body)
		}
		call(t, env, 200, "DELETE", path+"/"+id(first), w.tutor, nil)
		call(t, env, 200, "DELETE", path+"/"+id(first), w.tutor, nil)
		call(t, env, 403, "DELETE", path+"/"+id(added), w.other, nil)
		if n := len(call(t, env, 200, "GET", path, w.tutor, nil).Get("data").([]any)); n != 8 {
			t.Fatalf("%d questions after the delete", n)
		}

		// Another tenant's admin reaches none of it.
		call(t, env, 401, "GET", path, env.As("other-admin"), nil)
	})
}
