package lti_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/kinds/lti"
)

// TestGradeAfterPlatformOutage: the platform's token service answers 503
// for 10 minutes of the injected clock, then 200. The other listeners of
// the TopicFinished event are delivered at the first try; the grade is
// retried with backoff, each retry taken when the clock reaches it with no
// other event, and arrives once, with the kept score.
func TestGradeAfterPlatformOutage(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			env := w.env
			tenant, release := env.OpenTenant(env.Tenant)
			defer release()
			w.platform.mu.Lock()
			w.platform.toolKey = &tenant.Keys.Private.PublicKey
			w.platform.mu.Unlock()
			w.gradesTo(t)
			_, topic := w.textTopic(t)
			state, nonce := w.login(t)
			c := w.claims(nonce, "sub-learner")
			c[lti.ClaimCustom] = map[string]any{"topic_id": strconv.FormatInt(topic, 10)}
			c[lti.ClaimAGSEndpoint] = map[string]any{"scope": []string{lti.ScopeScore},
				"lineitem": w.platform.srv.URL + "/lineitems/topic-item"}
			r := w.launch(t, env.Host, sign(t, c, "platform-key-1", w.platform.key("platform-key-1")), state)
			if r.status != http.StatusSeeOther {
				t.Fatalf("launch: %d %s", r.status, r.code)
			}
			token := w.tokenFor(t, r.loc.Query().Get("code"))

			start := env.Clock.Now()
			back := start.Add(10 * time.Minute)
			w.platform.mu.Lock()
			w.platform.unavailable = func() bool { return env.Clock.Now().Before(back) }
			w.platform.now = env.Clock.Now
			w.platform.mu.Unlock()
			w.platform.tokenCalls.Store(0)
			w.finish(t, token, topic)
			env.DeliverEvents()

			ctx := context.Background()
			pairs := func() map[string]events.Delivery {
				list, _, err := events.ListDeliveries(ctx, tenant.DB, events.Filter{Event: events.TopicFinished})
				if err != nil {
					t.Fatal(err)
				}
				out := map[string]events.Delivery{}
				for _, d := range list {
					out[d.Listener] = d
				}
				return out
			}
			first := pairs()
			for name, d := range first {
				if name == "lti_grades" {
					continue
				}
				if d.State != events.StateDelivered || d.Attempts != 1 {
					t.Errorf("listener %s: %s after %d attempts, want delivered at the first try", name, d.State, d.Attempts)
				}
			}
			if first["notifications"].State != events.StateDelivered {
				t.Errorf("no notification delivered: %+v", first)
			}
			grade := first["lti_grades"]
			if grade.State != events.StatePending || grade.Attempts != 1 || grade.NextAttemptAt == nil {
				t.Fatalf("grade after the first 503: %+v", grade)
			}
			// Each retry when it is due, and only then.
			for grade.State == events.StatePending {
				if grade.Attempts > 20 {
					t.Fatalf("grade still pending after %d attempts: %s", grade.Attempts, grade.LastError)
				}
				env.Clock.Set(*grade.NextAttemptAt)
				env.DeliverEvents()
				grade = pairs()["lti_grades"]
			}
			if grade.State != events.StateDelivered {
				t.Fatalf("grade: %+v", grade)
			}
			elapsed := env.Clock.Now().Sub(start)
			t.Logf("grade delivered at attempt %d, %s after the event (platform down 10m); %d token requests",
				grade.Attempts, elapsed.Round(time.Second), w.platform.tokenCalls.Load())
			if elapsed < 10*time.Minute || elapsed > 30*time.Minute {
				t.Errorf("delivered %s after the event", elapsed)
			}
			if int(w.platform.tokenCalls.Load()) != grade.Attempts {
				t.Errorf("%d token requests for %d attempts", w.platform.tokenCalls.Load(), grade.Attempts)
			}
			select {
			case s := <-w.platform.scores:
				if s.score["scoreGiven"] != 1.0 || s.score["scoreMaximum"] != 1.0 || s.score["userId"] != "sub-learner" {
					t.Errorf("score: %v", s.score)
				}
				if ts, _ := time.Parse(time.RFC3339, s.score["timestamp"].(string)); ts.After(start.Add(time.Second)) {
					t.Errorf("score stamped %v, the event was at %v", ts, start)
				}
			default:
				t.Fatal("no score arrived")
			}
			env.Clock.Advance(24 * time.Hour)
			env.DeliverEvents()
			select {
			case s := <-w.platform.scores:
				t.Fatalf("a second score: %v", s.score)
			default:
			}
			for name, d := range pairs() {
				if d.Attempts != first[name].Attempts && name != "lti_grades" {
					t.Errorf("listener %s ran again", name)
				}
			}
		})
	}
}

// TestGradeRefusedForGood: a platform that refuses the scope (400
// invalid_scope) fails the grade delivery at once, with the reason.
func TestGradeRefusedForGood(t *testing.T) {
	w := newWorld(t, "sqlite")
	env := w.env
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	w.platform.mu.Lock()
	w.platform.toolKey = &tenant.Keys.Private.PublicKey
	w.platform.mu.Unlock()
	w.gradesTo(t)
	// The launch into the course grants line items too: the token request
	// asks for both scopes, which the platform refuses.
	state, nonce := w.login(t)
	c := w.claims(nonce, "sub-learner")
	c[lti.ClaimResourceLink] = map[string]any{"id": "course-link"}
	c[lti.ClaimAGSEndpoint] = map[string]any{"scope": []string{lti.ScopeLineItem, lti.ScopeScore},
		"lineitems": w.platform.srv.URL + "/lineitems"}
	r := w.launch(t, env.Host, sign(t, c, "platform-key-1", w.platform.key("platform-key-1")), state)
	if r.status != http.StatusSeeOther {
		t.Fatalf("launch: %d", r.status)
	}
	token := w.tokenFor(t, r.loc.Query().Get("code"))
	_, topic := w.textTopic(t)
	w.finish(t, token, topic)
	env.DeliverEvents()
	list, _, err := events.ListDeliveries(context.Background(), tenant.DB,
		events.Filter{Event: events.CourseFinished, Listener: "lti_grades"})
	if err != nil || len(list) != 1 {
		t.Fatalf("%v %v", list, err)
	}
	if d := list[0]; d.State != events.StateFailed || d.Attempts != 1 || d.LastError == "" {
		t.Errorf("refused grade: %+v, want failed at once with the reason", d)
	}
}
