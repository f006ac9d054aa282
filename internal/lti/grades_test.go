package lti_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lti"
)

// TestGradesBack: a learner launched by a platform that offers AGS
// finishes what was launched, and the platform gets a completed, fully
// graded score on each launch's line item: the launch of a topic when the
// topic is finished, the launch of the course when the course is. The
// service token comes from the platform's token URL for a client
// assertion signed with the tenant's key.
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
			// The learner was launched into the topic, and into the course by
			// another link; a second learner's platform grants no score scope.
			launch("sub-learner", func(c jwt.MapClaims) {
				c[lti.ClaimCustom] = map[string]any{"topic_id": strconv.FormatInt(topic, 10)}
				c[lti.ClaimAGSEndpoint] = ags("topic-item", lti.ScopeLineItem, lti.ScopeScore)
			})
			code := launch("sub-learner", func(c jwt.MapClaims) {
				c[lti.ClaimAGSEndpoint] = ags("course-item?term=2026", lti.ScopeScore)
			})
			readOnly := launch("sub-reader", func(c jwt.MapClaims) {
				c[lti.ClaimAGSEndpoint] = ags("reader-item", lti.ScopeLineItem+".readonly")
			})

			// Each learner reads the course's one topic: it and the course
			// are finished; the reader first.
			for _, c := range []string{readOnly, code} {
				token := w.exchange(t, c).String("data.token")
				env.Call(t, 200, "PATCH", "/api/courses/progress/"+strconv.FormatInt(w.courseID, 10), token,
					map[string]any{"progress": []map[string]any{{"topic_id": topic, "status": 1}}})
			}

			got := map[string]postedScore{}
			for len(got) < 2 {
				select {
				case s := <-w.platform.scores:
					got[s.path+"?"+s.query] = s
				case <-time.After(time.Minute):
					t.Fatalf("scores received: %v", got)
				}
			}
			for _, item := range []string{"/lineitems/topic-item/scores?", "/lineitems/course-item/scores?term=2026"} {
				s, ok := got[item]
				if !ok {
					t.Fatalf("no score on %s: %v", item, got)
				}
				if s.score["userId"] != "sub-learner" || s.score["scoreGiven"] != float64(1) || s.score["scoreMaximum"] != float64(1) ||
					s.score["activityProgress"] != "Completed" || s.score["gradingProgress"] != "FullyGraded" || s.score["timestamp"] == nil {
					t.Fatalf("score on %s: %v", item, s.score)
				}
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
