package lti_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/lti"
	"github.com/lms-platform/lms/internal/kinds/quiz"
)

// TestGradesBack: a learner launched by a platform that offers AGS
// finishes what was launched, and the platform gets a completed, fully
// graded score on each launch's line item: the launch of a topic when the
// topic is finished, the launch of the course when the course is. A topic
// whose kind measures no score sends 1 of 1; a quiz sends its attempt's
// points, and again when a later attempt beats them (a lower one sends
// nothing). The service token comes from the platform's token URL for a
// client assertion signed with the tenant's key.
func TestGradesBack(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			env := w.env
			tenant, release := env.OpenTenant(env.Tenant)
			w.platform.mu.Lock()
			w.platform.toolKey = &tenant.Keys.Private.PublicKey
			w.platform.mu.Unlock()
			release()
			w.gradesTo(t)
			lesson, topic := w.textTopic(t)
			admin := env.ClientAs("admin")
			ctx := context.Background()
			// Two questions of a point each, the right answer second; with
			// no pass score, every ended attempt completes the topic.
			question := func(prompt string) client.PostAdminTopicsBodyQuestionsItem {
				return client.PostAdminTopicsBodyQuestionsItem{Prompt: &prompt, Options: []client.PostAdminTopicsBodyQuestionsItemOptionsItem{
					{Text: ptrTo("no"), Correct: ptrTo(false)}, {Text: ptrTo("yes"), Correct: ptrTo(true)}}}
			}
			quiz := apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Quiz",
				Topicable: quiz.Class, Value: "Two questions.",
				Questions: []client.PostAdminTopicsBodyQuestionsItem{question("Is 7 a prime?"), question("Is 4 even?")}}))(t).ID

			ags := func(item string, scopes ...string) map[string]any {
				return map[string]any{"scope": scopes, "lineitem": w.platform.srv.URL + "/lineitems/" + item}
			}
			launch := func(sub string, edit func(jwt.MapClaims)) string {
				t.Helper()
				state, nonce := w.login(t)
				c := w.claims(nonce, sub)
				edit(c)
				r := w.launch(t, env.Host, sign(t, c, "platform-key-1", w.platform.key("platform-key-1")), state)
				if r.status != http.StatusSeeOther {
					t.Fatalf("launch: %d %s", r.status, r.code)
				}
				return r.loc.Query().Get("code")
			}
			// The learner was launched into each topic, and into the course
			// by another link; a second learner's platform grants no score
			// scope.
			launch("sub-learner", func(c jwt.MapClaims) {
				c[lti.ClaimCustom] = map[string]any{"topic_id": strconv.FormatInt(topic, 10)}
				c[lti.ClaimAGSEndpoint] = ags("topic-item", lti.ScopeLineItem, lti.ScopeScore)
			})
			launch("sub-learner", func(c jwt.MapClaims) {
				c[lti.ClaimResourceLink] = map[string]any{"id": "quiz-link"}
				c[lti.ClaimCustom] = map[string]any{"topic_id": strconv.FormatInt(quiz, 10)}
				c[lti.ClaimAGSEndpoint] = ags("quiz-item", lti.ScopeScore)
			})
			code := launch("sub-learner", func(c jwt.MapClaims) {
				c[lti.ClaimAGSEndpoint] = ags("course-item?term=2026", lti.ScopeScore)
			})
			readOnly := launch("sub-reader", func(c jwt.MapClaims) {
				c[lti.ClaimAGSEndpoint] = ags("reader-item", lti.ScopeLineItem+".readonly")
			})

			// posted waits for n scores and answers them sorted, as "line
			// item given/maximum"; each is the learner's, completed and
			// fully graded.
			posted := func(n int) []string {
				t.Helper()
				var out []string
				for len(out) < n {
					select {
					case s := <-w.platform.scores:
						if s.score["userId"] != "sub-learner" || s.score["activityProgress"] != "Completed" ||
							s.score["gradingProgress"] != "FullyGraded" || s.score["timestamp"] == nil {
							t.Fatalf("score on %s: %v", s.path, s.score)
						}
						out = append(out, fmt.Sprintf("%s?%s %v/%v", s.path, s.query, s.score["scoreGiven"], s.score["scoreMaximum"]))
					case <-time.After(time.Minute):
						t.Fatalf("scores received: %v", out)
					}
				}
				slices.Sort(out)
				return out
			}
			expect := func(want ...string) {
				t.Helper()
				if got := posted(len(want)); !slices.Equal(got, want) {
					t.Fatalf("scores posted: %q, want %q", got, want)
				}
			}

			// Each learner reads the text topic, which has no score of its
			// own: the completion, 1 of 1; the reader first.
			var token string
			for _, c := range []string{readOnly, code} {
				token = w.tokenFor(t, c)
				w.finish(t, token, topic)
			}
			expect("/lineitems/topic-item/scores? 1/1")

			// attempt answers the quiz, right or wrong question by
			// question, and ends the attempt.
			attempt := func(right ...bool) {
				t.Helper()
				learner := env.Client("", token)
				a := apitest.Must(learner.PostQuizAttempts(ctx, client.StartInputBody{TopicID: quiz}))(t)
				for i, q := range a.Questions {
					choice := int64(0)
					if right[i] {
						choice = 1
					}
					apitest.Must(learner.PostQuizAttemptsIDAnswer(ctx, a.ID, client.AnswerInputBody{QuestionID: q.ID,
						Answer: client.Response{Choices: []int64{choice}}}))(t)
				}
				apitest.Must(learner.PostQuizAttemptsIDEnd(ctx, a.ID))(t)
			}
			// Half right: the quiz's line item gets 1 of 2, and the
			// finished course its completion.
			attempt(true, false)
			expect("/lineitems/course-item/scores?term=2026 1/1", "/lineitems/quiz-item/scores? 1/2")
			// All right beats it and is posted; all wrong does not lower it.
			attempt(true, true)
			expect("/lineitems/quiz-item/scores? 2/2")
			attempt(false, false)
			if n := env.Count(t, `SELECT COUNT(*) FROM events WHERE name = 'TopicScored'`); n != 1 {
				t.Fatalf("%d TopicScored events, want 1", n)
			}
			// Nothing went to the line item without the score scope: the
			// reader's events were delivered before the learner's (the
			// outbox delivers a tenant's events in order).
			select {
			case s := <-w.platform.scores:
				t.Fatalf("an unexpected score: %+v", s)
			default:
			}
		})
	}
}
