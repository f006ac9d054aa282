package lti_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

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
			admin := env.As("admin")
			env.Call(t, 200, "PUT", "/api/admin/lti/registrations/"+strconv.FormatInt(w.regID, 10), admin.Token, map[string]any{
				"name": "Moodle", "issuer": issuer, "client_id": clientID, "auth_login_url": issuer + "/mod/lti/auth.php",
				"jwks_url": w.platform.srv.URL + "/jwks", "token_url": w.platform.srv.URL + "/token",
				"deployment_ids": []string{deploy}, "course_id": w.courseID,
			})
			lesson := env.Call(t, 201, "POST", "/api/admin/lessons", admin.Token, map[string]any{"title": "L", "course_id": w.courseID})
			topic := int64(env.Call(t, 201, "POST", "/api/admin/topics", admin.Token, map[string]any{
				"lesson": lesson.Number("data.id"), "title": "Read me", "topicable": `Lms\TopicTypes\Models\TopicContent\RichText`,
				"markdown": "Some text.",
			}).Number("data.id"))
			// Two questions of a point each, the right answer second; with
			// no pass score, every ended attempt completes the topic.
			question := func(prompt string) map[string]any {
				return map[string]any{"prompt": prompt, "options": []map[string]any{{"text": "no", "correct": false},
					{"text": "yes", "correct": true}}}
			}
			quiz := int64(env.Call(t, 201, "POST", "/api/admin/topics", admin.Token, map[string]any{
				"lesson": lesson.Number("data.id"), "title": "Quiz", "topicable": quiz.Class, "value": "Two questions.",
				"questions": []map[string]any{question("Is 7 a prime?"), question("Is 4 even?")},
			}).Number("data.id"))

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
				token = w.exchange(t, c).String("data.token")
				env.Call(t, 200, "PATCH", "/api/courses/progress/"+strconv.FormatInt(w.courseID, 10), token,
					map[string]any{"progress": []map[string]any{{"topic_id": topic, "status": 1}}})
			}
			expect("/lineitems/topic-item/scores? 1/1")

			// attempt answers the quiz, right or wrong question by
			// question, and ends the attempt.
			attempt := func(right ...bool) {
				t.Helper()
				res := env.Call(t, 201, "POST", "/api/quiz-attempts", token, map[string]any{"topic_id": quiz})
				id := strconv.FormatInt(int64(res.Number("data.id")), 10)
				for i, q := range res.Get("data.questions").([]any) {
					choice := 0
					if right[i] {
						choice = 1
					}
					env.Call(t, 200, "POST", "/api/quiz-attempts/"+id+"/answer", token, map[string]any{
						"question_id": q.(map[string]any)["id"], "answer": map[string]any{"choices": []int{choice}}})
				}
				env.Call(t, 200, "POST", "/api/quiz-attempts/"+id+"/end", token, nil)
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
