package quiz_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestFalseAndZeroAnswersShown: the right answer of a false true/false
// question and a numerical bound of 0 are answer data like any other:
// the authoring listing and the learner's review after the end show
// them, where omitempty dropped both.
func TestFalseAndZeroAnswersShown(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		ctx := t.Context()
		tutor, learner := env.UserClient(w.tutor), env.UserClient(w.learner)
		topic := createQuiz(t, w, func(b *client.PostAdminTopicsBody) {
			b.Questions = []client.PostAdminTopicsBodyQuestionsItem{gift("The moon is a star. {F}"),
				gift("Pick a number from -5 to 0. {#-5..0}"), gift("Which is a prime? {=7 ~4}")}
		})
		check := func(where string, qs []client.Question) {
			t.Helper()
			tf, num, mc := qs[0], qs[1], qs[2]
			if tf.Truth == nil || *tf.Truth {
				t.Errorf("%s: the false question's truth is %v, want false", where, tf.Truth)
			}
			if a := num.Answers; len(a) != 1 || a[0].Min == nil || *a[0].Min != -5 || a[0].Max == nil || *a[0].Max != 0 {
				t.Errorf("%s: numerical answers %+v, want min -5 and max 0", where, a)
			}
			if mc.Single == nil || !*mc.Single || mc.Truth != nil {
				t.Errorf("%s: multiple choice single %v, truth %v", where, mc.Single, mc.Truth)
			}
		}
		listed := apitest.Must(tutor.GetAdminTopicsIDGiftQuestions(ctx, topic))(t)
		check("listing", []client.Question{listed[0].Gift, listed[1].Gift, listed[2].Gift})

		a := apitest.Must(learner.PostQuizAttempts(ctx, client.StartInputBody{TopicID: topic}))(t)
		ended := apitest.Must(learner.PostQuizAttemptsIDEnd(ctx, a.ID))(t)
		var reviewed []client.Question
		for _, q := range ended.Questions {
			if q.Review == nil {
				t.Fatalf("no review after the end: %+v", ended)
			}
			reviewed = append(reviewed, q.Review.Gift)
		}
		check("review", reviewed)
	})
}

// TestAnswerOfWrongShape: an answer given in a field the question does
// not read is refused, naming the field it reads, instead of saved and
// scored 0.
func TestAnswerOfWrongShape(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		ctx := t.Context()
		learner := env.UserClient(w.learner)
		topic := createQuiz(t, w, nil)
		a := apitest.Must(learner.PostQuizAttempts(ctx, client.StartInputBody{TopicID: topic}))(t)
		mc, tf, num := a.Questions[0].ID, a.Questions[1].ID, a.Questions[3].ID
		yes := true
		for _, c := range []struct {
			question int64
			answer   client.Response
			field    string
		}{
			{mc, client.Response{Text: client.Ptr("7")}, "answer.choices"},
			{num, client.Response{Truth: &yes}, "answer.text"},
			{tf, client.Response{Choices: []int64{0}}, "answer.truth"},
		} {
			_, err := learner.PostQuizAttemptsIDAnswer(ctx, a.ID, client.AnswerInputBody{QuestionID: c.question, Answer: c.answer})
			e := apitest.Refused(t, err, 422)
			if _, ok := e.Errors[c.field]; !ok {
				t.Errorf("answer %+v: %v, want %s named", c.answer, e, c.field)
			}
		}
		// The right shape is saved.
		apitest.Must(learner.PostQuizAttemptsIDAnswer(ctx, a.ID, client.AnswerInputBody{QuestionID: num,
			Answer: client.Response{Text: client.Ptr("3.14")}}))(t)
	})
}
