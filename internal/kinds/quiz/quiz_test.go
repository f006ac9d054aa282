package quiz_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
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
	api                          *client.Client // no token yet; as gives one
	wire                         *wire
}

func newWorld(t testing.TB, env *apitest.Env) *world {
	t.Helper()
	w := &world{env: env, admin: env.As("admin"), tutor: env.As("tutor"), other: env.NewUser("tutor"),
		learner: env.NewUser("student"), outsider: env.NewUser("student"), wire: &wire{next: env.HTTP.Client()}}
	api, err := client.New(env.HTTP.URL, w.wire)
	if err != nil {
		t.Fatal(err)
	}
	w.api = api.WithHost(env.Host)
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

// as is the typed client signed in as u (nil: anonymous), with its
// answers kept by the world's wire. It reads u's token at each call, so
// a test that signs u in again goes on with the new session.
func (w *world) as(u *apitest.User) *client.Client {
	if u == nil {
		return w.api.WithToken("")
	}
	return w.api.WithToken(u.Token)
}

// shown is the body of the last answer a client of the world got.
func (w *world) shown() string {
	_, body := w.wire.last()
	return body
}

// wire keeps the status and bytes of the last answer. The typed client
// decodes the fields it knows and drops the rest, so the checks that an
// answer leaves out the right answers read the bytes (a leak may hide in
// any field); and a start tells a new attempt (201) from the open one
// again (200) only by its status.
type wire struct {
	next   client.Doer
	mu     sync.Mutex
	status int
	body   []byte
}

func (r *wire) Do(req *http.Request) (*http.Response, error) {
	res, err := r.next.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		return nil, err
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.status, r.body = res.StatusCode, body
	r.mu.Unlock()
	return res, nil
}

func (r *wire) last() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, string(r.body)
}

func exec(t testing.TB, env *apitest.Env, fn func(*platform.Tenant) error) {
	t.Helper()
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	if err := fn(tn); err != nil {
		t.Fatal(err)
	}
}

func gift(text string) client.PostAdminTopicsBodyQuestionsItem {
	return client.PostAdminTopicsBodyQuestionsItem{Gift: &text}
}

func option(text string, correct bool) client.PostAdminTopicsBodyQuestionsItemOptionsItem {
	return client.PostAdminTopicsBodyQuestionsItemOptionsItem{Text: &text, Correct: &correct}
}

// questions covers every question type; the scored ones add up to 9
// points, of which the essay is 2.
var questions = []client.PostAdminTopicsBodyQuestionsItem{
	{Prompt: client.Ptr("Which is a prime?"), Options: []client.PostAdminTopicsBodyQuestionsItemOptionsItem{option("4", false), option("7", true)}},
	gift("::TF:: The sun is a star. {T#No, it is.#Right.}"),
	gift("Capital of France? {=Paris =%50%Paname}"),
	{Gift: client.Ptr("Pi to two places? {#3.14:0.005}"), Score: client.Ptr(2.0)},
	gift("Match: {=cat -> meow =dog -> woof = -> moo}"),
	gift("Pick the continents {~%50%Asia ~%50%Africa ~%-100%Paris}"),
	{Gift: client.Ptr("Write about cats. {}"), Score: client.Ptr(2.0)},
	gift("This is a description."),
}

// createQuiz has the tutor create a quiz of all questions, changed by
// edit (nil: as it is), and returns the topic's id.
func createQuiz(t testing.TB, w *world, edit func(*client.PostAdminTopicsBody)) int64 {
	t.Helper()
	body := client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Quiz", Topicable: quizClass, Value: "Read **this** first.",
		Questions: questions}
	if edit != nil {
		edit(&body)
	}
	return apitest.Must(w.as(w.tutor).PostAdminTopics(t.Context(), body))(t).ID
}

// topicable is the kind's part of a topic: its shape depends on the kind,
// so the API describes it as any JSON object.
func topicable(t *testing.T, v *client.View) map[string]any {
	t.Helper()
	m, ok := v.Topicable.(map[string]any)
	if !ok {
		t.Fatalf("topicable of topic %d: %#v", v.ID, v.Topicable)
	}
	return m
}

// start starts an attempt as u and fails the test unless the answer's
// status is want: 201 for a new attempt, 200 for the one already open.
func start(t *testing.T, w *world, want int, u *apitest.User, topic int64) *client.AttemptView {
	t.Helper()
	a := apitest.Must(w.as(u).PostQuizAttempts(t.Context(), client.StartInputBody{TopicID: topic}))(t)
	if status, body := w.wire.last(); status != want {
		t.Fatalf("start: status %d, want %d: %s", status, want, body)
	}
	return a
}

// startRefused tries to start an attempt as u and fails the test unless
// the answer is a refusal with status want.
func startRefused(t *testing.T, w *world, want int, u *apitest.User, topic int64) *client.Error {
	t.Helper()
	_, err := w.as(u).PostQuizAttempts(t.Context(), client.StartInputBody{TopicID: topic})
	return apitest.Refused(t, err, want)
}

// questionIDs lists the ids of an attempt's questions, in their order.
func questionIDs(a *client.AttemptView) []int64 {
	ids := make([]int64, len(a.Questions))
	for i, q := range a.Questions {
		ids[i] = q.ID
	}
	return ids
}

func choices(c ...int64) client.Response { return client.Response{Choices: c} }
func truth(b bool) client.Response       { return client.Response{Truth: &b} }
func text(s string) client.Response      { return client.Response{Text: &s} }

// answer saves an answer as u and fails the test unless it was saved.
func answer(t *testing.T, w *world, u *apitest.User, attempt, question int64, a client.Response) *client.SavedAnswer {
	t.Helper()
	return apitest.Must(w.as(u).PostQuizAttemptsIDAnswer(t.Context(), attempt, client.AnswerInputBody{QuestionID: question, Answer: a}))(t)
}

// answerRefused tries to save an answer as u and fails the test unless
// the answer is a refusal with status want.
func answerRefused(t *testing.T, w *world, want int, u *apitest.User, attempt, question int64, a client.Response) *client.Error {
	t.Helper()
	_, err := w.as(u).PostQuizAttemptsIDAnswer(t.Context(), attempt, client.AnswerInputBody{QuestionID: question, Answer: a})
	return apitest.Refused(t, err, want)
}

// is says whether an optional boolean is there and v.
func is(p *bool, v bool) bool { return p != nil && *p == v }

// num is an optional number, or -1 when it is missing (no score checked
// here is negative).
func num(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

// earned is the points a question's review gives, or -1 without a
// review or points.
func earned(q client.AttemptQuestion) float64 {
	if q.Review == nil {
		return -1
	}
	return num(q.Review.Earned)
}

// rightFeedback is the feedback a review shows for a right answer, or "".
func rightFeedback(r *client.QuestionReview) string {
	if r == nil || r.Gift.RightFeedback == nil {
		return ""
	}
	return r.Gift.RightFeedback.Text
}

func topicStatus(t *testing.T, w *world, user int64, topic int64) int {
	t.Helper()
	return w.env.Count(t, `SELECT COALESCE(MAX(status), 0) FROM topic_progress WHERE user_id = $1 AND topic_id = $2`, user, topic)
}

func TestAttemptScoringAndEssayGrading(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		tutor, learner := w.as(w.tutor), w.as(w.learner)
		topic := createQuiz(t, w, func(b *client.PostAdminTopicsBody) {
			b.MaxAttempts, b.MinPassScore = client.Ptr[int64](2), client.Ptr(7.0)
		})

		// The topic shows the rules, never the questions.
		v := apitest.Must(tutor.GetAdminTopicsID(ctx, topic))(t)
		if tq := topicable(t, v); tq["question_count"] != 8.0 || tq["max_score"] != 9.0 || strings.Contains(w.shown(), "Paname") {
			t.Fatalf("quiz topic: %s", w.shown())
		}

		// Who may start: the course's learner and its editors; not a
		// student outside the course, nor another tutor.
		startRefused(t, w, 403, w.outsider, topic)
		startRefused(t, w, 403, w.other, topic)
		startRefused(t, w, 401, nil, topic)
		a := start(t, w, 201, w.learner, topic)
		// The bytes of the start's answer, for the check below.
		body := w.shown()
		if again := start(t, w, 200, w.learner, topic); again.ID != a.ID {
			t.Fatalf("a second start made another attempt: %+v", again)
		}

		// Nothing in the questions tells the right answers.
		for _, leak := range []string{"weight", "correct", "feedback", "Right.", "Paname", "3.14", "meow\",\"woof", `"review":{`} {
			if strings.Contains(body, leak) {
				t.Errorf("the attempt shows %q: %s", leak, body)
			}
		}
		if a.Score != nil || a.SecondsLeft != 3600 || a.Review != "after_end" {
			t.Errorf("open attempt: %s", body)
		}
		q := questionIDs(a)

		// Another learner cannot see or answer this attempt.
		_, err := w.as(w.outsider).GetQuizAttemptsID(ctx, a.ID)
		apitest.Refused(t, err, 404)
		answerRefused(t, w, 404, w.outsider, a.ID, q[0], choices(1))
		// Malformed answers are refused.
		answerRefused(t, w, 422, w.learner, a.ID, q[0], choices(0, 1))
		answerRefused(t, w, 422, w.learner, a.ID, q[0], choices(5))
		answerRefused(t, w, 422, w.learner, a.ID, q[7], text("a description takes none"))
		answerRefused(t, w, 422, w.learner, a.ID, 999, text("x"))

		// A first answer replaced by a second: the last one counts.
		answer(t, w, w.learner, a.ID, q[0], choices(0))
		answer(t, w, w.learner, a.ID, q[0], choices(1))
		if saved := w.shown(); strings.Contains(saved, "fraction") || strings.Contains(saved, "earned") {
			t.Errorf("a saved answer tells its score: %s", saved)
		}
		answer(t, w, w.learner, a.ID, q[1], truth(true))                                        // 1
		answer(t, w, w.learner, a.ID, q[2], text("paname"))                                     // 0.5
		answer(t, w, w.learner, a.ID, q[3], text("3.144"))                                      // 2
		answer(t, w, w.learner, a.ID, q[4], client.Response{Matches: []string{"meow", "meow"}}) // 0.5
		answer(t, w, w.learner, a.ID, q[5], choices(0, 2))                                      // 0
		answer(t, w, w.learner, a.ID, q[6], text("Cats purr."))                                 // graded later

		// Saved answers are there after a reload.
		got := apitest.Must(learner.GetQuizAttemptsID(ctx, a.ID))(t)
		if t2 := got.Questions[2].Answer.Text; t2 == nil || *t2 != "paname" || !slices.Equal(got.Questions[0].Answer.Choices, []int64{1}) {
			t.Fatalf("saved answers: %s", w.shown())
		}

		ended := apitest.Must(learner.PostQuizAttemptsIDEnd(ctx, a.ID))(t)
		// 1 + 1 + 0.5 + 2 + 0.5 + 0 = 5 points before the essay.
		if num(ended.Score) != 5 || ended.Passed != nil || !ended.PendingGrading || ended.Status != "ended" {
			t.Fatalf("ended attempt: %s", w.shown())
		}
		if essay := ended.Questions[6].Review; earned(ended.Questions[2]) != 0.5 || (essay != nil && essay.Earned != nil) ||
			rightFeedback(ended.Questions[1].Review) != "Right." {
			t.Fatalf("review: %s", w.shown())
		}
		answerRefused(t, w, 409, w.learner, a.ID, q[0], choices(0))
		if topicStatus(t, w, w.learner.ID, topic) == 1 {
			t.Fatal("the topic completed before the essay was graded")
		}

		// Grading: the course's tutor and admins; not another tutor, not
		// the learner.
		grade := func(u *apitest.User, question int64, score float64) (*client.AttemptView, error) {
			return w.as(u).PostAdminQuizAttemptsIDGrade(ctx, a.ID, client.GradeInputBody{QuestionID: question, Score: score})
		}
		apitest.Refused(t, second(grade(w.other, q[6], 2)), 403)
		apitest.Refused(t, second(grade(w.learner, q[6], 2)), 403)
		apitest.Refused(t, second(grade(w.tutor, q[6], 3)), 422)
		apitest.Refused(t, second(grade(w.tutor, q[2], 1)), 422)
		graded := apitest.Must(grade(w.tutor, q[6], 1.5))(t)
		if num(graded.Score) != 6.5 || !is(graded.Passed, false) || graded.PendingGrading {
			t.Fatalf("graded below the pass score: %s", w.shown())
		}
		graded = apitest.Must(grade(w.admin, q[6], 2))(t)
		if num(graded.Score) != 7 || !is(graded.Passed, true) {
			t.Fatalf("graded to a pass: %s", w.shown())
		}
		if topicStatus(t, w, w.learner.ID, topic) != 1 {
			t.Fatal("a passed attempt did not complete the topic")
		}

		// Listing: the learner sees their own; the course's tutor sees all.
		if mine := apitest.Must(learner.GetQuizAttempts(ctx, client.GetQuizAttemptsParams{TopicID: &topic}))(t); mine.Meta.Total != 1 {
			t.Fatalf("my attempts: %s", w.shown())
		}
		if theirs := apitest.Must(w.as(w.outsider).GetQuizAttempts(ctx, client.GetQuizAttemptsParams{}))(t); theirs.Meta.Total != 0 {
			t.Fatalf("another learner's list: %s", w.shown())
		}
		list := func(u *apitest.User) (*client.Page[client.AttemptView], error) {
			return w.as(u).GetAdminTopicsIDQuizAttempts(ctx, topic, client.GetAdminTopicsIDQuizAttemptsParams{})
		}
		if all := apitest.Must(list(w.tutor))(t); all.Meta.Total != 1 {
			t.Fatalf("tutor's list: %s", w.shown())
		}
		apitest.Refused(t, second(list(w.other)), 403)
		apitest.Refused(t, second(list(w.learner)), 403)
		apitest.Must(tutor.GetAdminQuizAttemptsID(ctx, a.ID))(t)
		apitest.Refused(t, second(learner.GetAdminQuizAttemptsID(ctx, a.ID)), 403)

		// Two attempts at most.
		next := start(t, w, 201, w.learner, topic)
		if next.Number != 2 {
			t.Fatalf("second attempt: %s", w.shown())
		}
		apitest.Must(learner.PostQuizAttemptsIDEnd(ctx, next.ID))(t)
		startRefused(t, w, 403, w.learner, topic)
	})
}

// second is the error of a call whose answer a refusal check leaves
// aside.
func second[T any](_ T, err error) error { return err }

// TestReviewSettings: after_answer shows each answer's review when it is
// saved and makes the answer final; never shows learners only the score
// and the pass, while graders see everything; an attempt keeps the
// setting it started with.
func TestReviewSettings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		tutor, learner := w.as(w.tutor), w.as(w.learner)
		_, err := tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Quiz", Topicable: quizClass,
			Questions: questions[:3], Review: client.Ptr("sometimes")})
		if e := apitest.Refused(t, err, 422); len(e.Errors["review"]) == 0 {
			t.Fatalf("bad review setting: %v", e)
		}
		three := func(review string) int64 {
			return apitest.Must(tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Quiz", Topicable: quizClass,
				Questions: questions[:3], MinPassScore: client.Ptr(2.0), Review: &review}))(t).ID
		}
		// hidden checks the bytes of the last answer.
		hidden := func(what string) {
			t.Helper()
			body := w.shown()
			for _, leak := range []string{`"review":{`, "Right.", "Paname", "weight"} {
				if strings.Contains(body, leak) {
					t.Errorf("%s shows %q: %s", what, leak, body)
				}
			}
		}

		// after_answer.
		topic := three("after_answer")
		if v := apitest.Must(tutor.GetAdminTopicsID(ctx, topic))(t); topicable(t, v)["review"] != "after_answer" {
			t.Fatalf("quiz topic: %s", w.shown())
		}
		a := start(t, w, 201, w.learner, topic)
		if a.Review != "after_answer" {
			t.Fatalf("attempt: %s", w.shown())
		}
		hidden("a new after_answer attempt")
		attempt, q := a.ID, questionIDs(a)
		saved := answer(t, w, w.learner, attempt, q[1], truth(true))
		if saved.Review == nil || num(saved.Review.Earned) != 1 || rightFeedback(saved.Review) != "Right." {
			t.Fatalf("saved answer without its review: %s", w.shown())
		}
		// The author's later change does not reach the attempt under way.
		apitest.Must(tutor.PatchAdminTopicsID(ctx, topic, client.PatchAdminTopicsIDBody{Review: client.Ptr("never")}))(t)
		got := apitest.Must(learner.GetQuizAttemptsID(ctx, attempt))(t)
		if earned(got.Questions[1]) != 1 || got.Questions[0].Review != nil || got.Questions[2].Review != nil ||
			strings.Contains(w.shown(), "Paname") || got.Score != nil {
			t.Fatalf("after_answer attempt with one answer: %s", w.shown())
		}
		// A reviewed answer is final.
		if e := answerRefused(t, w, 409, w.learner, attempt, q[1], truth(false)); !strings.Contains(e.Message, "cannot be changed") {
			t.Errorf("changed answer: %v", e)
		}
		answer(t, w, w.learner, attempt, q[2], text("Paname"))
		ended := apitest.Must(learner.PostQuizAttemptsIDEnd(ctx, attempt))(t)
		if num(ended.Score) != 1.5 || !is(ended.Passed, false) || earned(ended.Questions[0]) != 0 || earned(ended.Questions[2]) != 0.5 {
			t.Fatalf("ended after_answer attempt: %s", w.shown())
		}
		// The next attempt follows the quiz's setting now: never.
		if next := start(t, w, 201, w.learner, topic); next.Review != "never" {
			t.Fatalf("next attempt: %s", w.shown())
		}

		// never.
		topic = three("never")
		a = start(t, w, 201, w.learner, topic)
		attempt, q = a.ID, questionIDs(a)
		answer(t, w, w.learner, attempt, q[1], truth(true))
		hidden("a saved answer under never")
		answer(t, w, w.learner, attempt, q[1], truth(false))
		answer(t, w, w.learner, attempt, q[0], choices(1))
		answer(t, w, w.learner, attempt, q[2], text("Paris"))
		apitest.Must(learner.GetQuizAttemptsID(ctx, attempt))(t)
		hidden("an answered attempt under never")
		ended = apitest.Must(learner.PostQuizAttemptsIDEnd(ctx, attempt))(t)
		if num(ended.Score) != 2 || !is(ended.Passed, true) {
			t.Fatalf("ended never attempt: %s", w.shown())
		}
		hidden("an ended attempt under never")
		apitest.Must(learner.GetQuizAttempts(ctx, client.GetQuizAttemptsParams{TopicID: &topic}))(t)
		hidden("an ended attempt under never, listed")
		apitest.Must(learner.GetQuizAttemptsID(ctx, attempt))(t)
		hidden("an ended attempt under never, shown again")
		// The course's tutor and admins see everything.
		for _, u := range []*apitest.User{w.tutor, w.admin} {
			seen := apitest.Must(w.as(u).GetAdminQuizAttemptsID(ctx, attempt))(t)
			if earned(seen.Questions[1]) != 0 || rightFeedback(seen.Questions[1].Review) != "Right." || earned(seen.Questions[2]) != 1 {
				t.Fatalf("grader's view under never: %s", w.shown())
			}
		}
		apitest.Refused(t, second(w.as(w.other).GetAdminQuizAttemptsID(ctx, attempt)), 403)
	})
}

func TestTimeLimitOnTheClock(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		apitest.Must(w.as(w.admin).PostAdminConfig(ctx, client.UpdateInputBody{Config: []client.Item{
			{Key: "lms_gift_quiz.max_quiz_time", Value: 3}}}))(t)
		// No pass score: an ended attempt completes the topic.
		topic := createQuiz(t, w, nil)
		a := start(t, w, 201, w.learner, topic)
		attempt, q := a.ID, questionIDs(a)
		if a.SecondsLeft != 180 {
			t.Fatalf("time limit: %s", w.shown())
		}
		env.Clock.Advance(2*time.Minute + 59*time.Second)
		answer(t, w, w.learner, attempt, q[1], truth(true))
		env.Clock.Advance(time.Second)
		// Time is over: the answer is refused and the attempt ends itself,
		// at its time limit, with what was saved.
		if e := answerRefused(t, w, 409, w.learner, attempt, q[2], text("Paris")); !strings.Contains(e.Message, "time") {
			t.Errorf("late answer: %v", e)
		}
		got := apitest.Must(w.as(w.learner).GetQuizAttemptsID(ctx, attempt))(t)
		if got.Status != "ended" || num(got.Score) != 1 || got.EndedAt == nil || !got.EndedAt.Equal(got.EndsAt) {
			t.Fatalf("expired attempt: %s", w.shown())
		}
		if topicStatus(t, w, w.learner.ID, topic) != 1 {
			t.Fatal("an ended attempt of a quiz without pass score did not complete the topic")
		}

		// An attempt left alone ends when the learner next looks.
		start(t, w, 201, w.learner, topic)
		env.Clock.Advance(4 * time.Minute)
		// Sessions last 5 minutes by default.
		w.learner.Token, _ = env.Login(env.Host, w.learner.Email, w.learner.Password)
		mine := apitest.Must(w.as(w.learner).GetQuizAttempts(ctx, client.GetQuizAttemptsParams{TopicID: &topic}))(t)
		if len(mine.Items) == 0 || mine.Items[0].Status != "ended" || mine.Items[0].Score == nil {
			t.Fatalf("abandoned attempt: %s", w.shown())
		}

		// A passing attempt nobody looks at again is ended by the hourly
		// job, at its limit, and completes its topic.
		w.tutor.Token, _ = env.Login(env.Host, w.tutor.Email, w.tutor.Password)
		passing := createQuiz(t, w, func(b *client.PostAdminTopicsBody) { b.MinPassScore = client.Ptr(1.0) })
		a = start(t, w, 201, w.learner, passing)
		left, lq := a.ID, questionIDs(a)
		answer(t, w, w.learner, left, lq[1], truth(true))
		env.Clock.Advance(time.Hour)
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if topicStatus(t, w, w.learner.ID, passing) != 1 {
			t.Fatal("the job did not end a passing attempt left alone")
		}
		n := env.Count(t, `SELECT COUNT(*) FROM quiz_attempts WHERE id = $1 AND ended_at = ends_at AND score = 1`, left)
		if n != 1 {
			t.Fatal("the job did not end the attempt at its limit with its saved answer")
		}
	})
}

// TestSaveAfterAnEndElsewhere: a server keeps the open attempts it saves
// answers to; an attempt that another replica ended (here: in SQL, as
// one would) takes no more answers from it, and one removed is not found.
func TestSaveAfterAnEndElsewhere(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := createQuiz(t, w, nil)
		a := start(t, w, 201, w.learner, topic)
		q := questionIDs(a)
		answer(t, w, w.learner, a.ID, q[1], truth(true))
		// Another learner's saves find nothing, kept or not.
		answerRefused(t, w, 404, w.other, a.ID, q[1], truth(false))
		exec(t, env, func(tn *platform.Tenant) error {
			_, err := tn.DB.ExecContext(t.Context(), `UPDATE quiz_attempts SET ended_at = $2 WHERE id = $1`, a.ID, env.Clock.Now())
			return err
		})
		if e := answerRefused(t, w, 409, w.learner, a.ID, q[2], text("Paris")); e.Message != "This attempt has ended." {
			t.Errorf("an answer to an attempt ended elsewhere: %q", e.Message)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM quiz_answers WHERE attempt_id = $1`, a.ID); n != 1 {
			t.Errorf("%d answers saved, want the one before the end", n)
		}

		b := start(t, w, 201, w.learner, topic)
		answer(t, w, w.learner, b.ID, q[1], truth(true))
		exec(t, env, func(tn *platform.Tenant) error {
			_, err := tn.DB.ExecContext(t.Context(), `DELETE FROM quiz_attempts WHERE id = $1`, b.ID)
			return err
		})
		answerRefused(t, w, 404, w.learner, b.ID, q[2], text("Paris"))
	})
}

// TestStartWhereProgressCounts: learners take a quiz only where its
// completion would count; the course's editors may always try it.
func TestStartWhereProgressCounts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		tutor := w.as(w.tutor)
		var later int64
		exec(t, env, func(tn *platform.Tenant) error {
			return tn.DB.QueryRowContext(context.Background(), `INSERT INTO lessons (course_id, title, position, active_from,
				created_at, updated_at) VALUES ($1, 'Later', 2, $2, $3, $3) RETURNING id`, w.course,
				env.Clock.Now().Add(48*time.Hour), env.Clock.Now()).Scan(&later)
		})
		topic := apitest.Must(tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: later, Title: "Later quiz",
			Topicable: quizClass, Questions: questions[:2]}))(t).ID
		// The client gives an answer without a message its status text.
		if e := startRefused(t, w, 403, w.learner, topic); e.Message == "" || e.Message == http.StatusText(http.StatusForbidden) {
			t.Errorf("no message for a closed lesson: %s", w.shown())
		}
		start(t, w, 201, w.tutor, topic)
		// An inactive quiz is not there for learners.
		open := createQuiz(t, w, nil)
		apitest.Must(tutor.PatchAdminTopicsID(ctx, open, client.PatchAdminTopicsIDBody{Active: client.Ptr(false)}))(t)
		startRefused(t, w, 404, w.learner, open)
		// A topic of another kind is no quiz.
		rich := apitest.Must(tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Text",
			Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, Markdown: client.Ptr("Hello")}))(t).ID
		startRefused(t, w, 422, w.learner, rich)
		apitest.Refused(t, second(tutor.PostAdminGiftQuestions(ctx, client.AddQuestionInputBody{TopicID: rich, Value: "Q {T}"})), 422)
		// A quiz is not skipped with a progress write.
		active := createQuiz(t, w, nil)
		_, err := w.as(w.learner).PatchCoursesProgressID(ctx, w.course, client.WriteInputBody{Progress: []client.ProgressWrite{
			{TopicID: active, Status: 1}}})
		if e := apitest.Refused(t, err, 422); !apitest.Says(e, "its own activity") {
			t.Errorf("progress write completing a quiz: %v", e)
		}
	})
}

func TestQuestionAuthoring(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		tutor := w.as(w.tutor)
		// Validation names each bad question.
		_, err := tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Quiz", Topicable: quizClass,
			Questions: []client.PostAdminTopicsBodyQuestionsItem{
				gift("Broken {=a"),
				{Prompt: client.Ptr("No right option"), Options: []client.PostAdminTopicsBodyQuestionsItemOptionsItem{
					{Text: client.Ptr("a")}, {Text: client.Ptr("b")}}},
				{Gift: client.Ptr("Fine {T}"), Score: client.Ptr(-1.0)},
			}})
		e := apitest.Refused(t, err, 422)
		for _, f := range []string{"questions.0.gift", "questions.1", "questions.2.score"} {
			if len(e.Errors[f]) == 0 {
				t.Errorf("no error for %s: %v", f, e)
			}
		}
		if !strings.Contains(strings.Join(e.Errors["questions.0.gift"], " "), "line 1: expected }") {
			t.Errorf("GIFT error: %v", e)
		}
		apitest.Refused(t, second(tutor.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Quiz", Topicable: quizClass})), 422)

		topic := createQuiz(t, w, nil)
		list := func(u *apitest.User) ([]client.QuizQuestion, error) {
			return w.as(u).GetAdminTopicsIDGiftQuestions(ctx, topic)
		}
		qs := apitest.Must(list(w.tutor))(t)
		if len(qs) != 8 || !strings.Contains(qs[0].Value, "=7") || qs[0].Type != "multichoice" {
			t.Fatalf("questions: %s", w.shown())
		}
		first := qs[0].ID

		add := client.AddQuestionInputBody{TopicID: topic, Value: "2 + 2 = {#4}", Score: client.Ptr(3.0)}
		// Who may add: the course's editors only.
		for _, u := range []*apitest.User{w.learner, w.other} {
			apitest.Refused(t, second(w.as(u).PostAdminGiftQuestions(ctx, add)), 403)
		}
		apitest.Refused(t, second(list(w.learner)), 403)
		apitest.Refused(t, second(w.as(nil).PostAdminGiftQuestions(ctx, add)), 401)
		added := apitest.Must(tutor.PostAdminGiftQuestions(ctx, add))(t)
		if added.Type != "numerical" || added.Score != 3 || added.Order != 9 {
			t.Fatalf("added: %s", w.shown())
		}
		_, err = tutor.PostAdminGiftQuestions(ctx, client.AddQuestionInputBody{TopicID: topic, Value: "Bad {~only}"})
		if e := apitest.Refused(t, err, 422); !apitest.Says(e, "expected at least two answers") {
			t.Errorf("bad GIFT: %v", e)
		}

		// Editors adding at the same moment lose nothing: each edit rewrites
		// the whole list, one at a time. The client takes only the
		// documented 201 for a success.
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = tutor.PostAdminGiftQuestions(ctx, client.AddQuestionInputBody{TopicID: topic,
					Value: fmt.Sprintf("%d + 1 = {#%d}", i, i+1)})
			}()
		}
		wg.Wait()
		qs = apitest.Must(list(w.tutor))(t)
		if n := len(qs); n != 9+len(errs) || slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
			t.Fatalf("concurrent adds: errors %v, %d questions", errs, n)
		}
		for range errs {
			apitest.OK(t, tutor.DeleteAdminTopicsIDGiftQuestionsID(ctx, topic, qs[9].ID))
			qs = apitest.Must(list(w.tutor))(t)
		}

		// Update, reorder, delete.
		updated := apitest.Must(w.as(w.admin).PutAdminTopicsIDGiftQuestionsID(ctx, topic, added.ID,
			client.UpdateQuestionInputBody{Value: client.Ptr("3 + 3 = {#6}")}))(t)
		if updated.ID != added.ID || !strings.Contains(updated.Value, "#6") || updated.Score != 3 {
			t.Fatalf("updated: %s", w.shown())
		}
		apitest.Refused(t, second(w.as(w.other).PutAdminTopicsIDGiftQuestionsID(ctx, topic, added.ID,
			client.UpdateQuestionInputBody{Score: client.Ptr(1.0)})), 403)
		qs = apitest.Must(list(w.tutor))(t)
		var ids []int64
		for i := len(qs) - 1; i >= 0; i-- {
			ids = append(ids, qs[i].ID)
		}
		apitest.Refused(t, second(tutor.PutAdminTopicsIDGiftQuestionsOrder(ctx, topic, client.OrderInputBody{IDs: ids[:3]})), 422)
		qs = apitest.Must(tutor.PutAdminTopicsIDGiftQuestionsOrder(ctx, topic, client.OrderInputBody{IDs: ids}))(t)
		if len(qs) != 9 || qs[0].ID != added.ID || qs[8].ID != first {
			t.Fatalf("reordered: %s", w.shown())
		}
		apitest.OK(t, tutor.DeleteAdminTopicsIDGiftQuestionsID(ctx, topic, first))
		apitest.OK(t, tutor.DeleteAdminTopicsIDGiftQuestionsID(ctx, topic, first))
		apitest.Refused(t, w.as(w.other).DeleteAdminTopicsIDGiftQuestionsID(ctx, topic, added.ID), 403)
		if n := len(apitest.Must(list(w.tutor))(t)); n != 8 {
			t.Fatalf("%d questions after the delete", n)
		}

		// Another tenant's admin reaches none of it.
		apitest.Refused(t, second(list(env.As("other-admin"))), 401)
	})
}

// TestConcurrentStarts: a class starts at once, so that on PostgreSQL the
// learners' earlier attempts are read in shared queries. A learner with
// an attempt under way gets it back, one who used every attempt is
// refused, and each of the others gets a first attempt of their own.
func TestConcurrentStarts(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		topic := createQuiz(t, w, func(b *client.PostAdminTopicsBody) { b.MaxAttempts = client.Ptr[int64](1) })
		type learner struct {
			u    *apitest.User
			open int64 // the attempt under way
			used bool  // the one attempt ended
		}
		learners := make([]learner, 18)
		for i := range learners {
			l := &learners[i]
			l.u = env.NewUser("student")
			exec(t, env, func(tn *platform.Tenant) error {
				_, err := tn.DB.ExecContext(ctx, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`,
					w.course, l.u.ID, env.Clock.Now())
				return err
			})
			switch i % 3 {
			case 1:
				l.open = start(t, w, 201, l.u, topic).ID
			case 2:
				apitest.Must(w.as(l.u).PostQuizAttemptsIDEnd(ctx, start(t, w, 201, l.u, topic).ID))(t)
				l.used = true
			}
		}
		ids := make([]int64, len(learners))
		apitest.AtOnce(t, len(learners), func(i int) error {
			l := learners[i]
			a, err := w.as(l.u).PostQuizAttempts(ctx, client.StartInputBody{TopicID: topic})
			switch {
			case l.used:
				if client.StatusOf(err) != 403 {
					return fmt.Errorf("learner %d, who used the one attempt: %v, want 403", i, err)
				}
				return nil
			case err != nil:
				return fmt.Errorf("learner %d: %v", i, err)
			case a.UserID != l.u.ID || a.TopicID != topic || a.Number != 1 || a.EndedAt != nil:
				return fmt.Errorf("learner %d (user %d) got attempt %d of user %d at topic %d, number %d, ended %v",
					i, l.u.ID, a.ID, a.UserID, a.TopicID, a.Number, a.EndedAt)
			case l.open != 0 && a.ID != l.open:
				return fmt.Errorf("learner %d got attempt %d, want the one under way, %d", i, a.ID, l.open)
			}
			ids[i] = a.ID
			return nil
		})
		seen := map[int64]bool{}
		for i, id := range ids {
			if id != 0 && seen[id] {
				t.Errorf("learner %d got attempt %d, another learner's too", i, id)
			}
			seen[id] = true
		}
	})
}
