package cmi5_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
	"github.com/lms-platform/lms/internal/lrs"
)

// The limits the README documents for launches, spelled out here so the
// tests also run (and fail) against an LRS without them.
const (
	statementsPerMinute = 200
	maxStatement        = 1 << 20
)

// secondLearner enrols another learner in w's course and returns a world
// that launches as them.
func secondLearner(t *testing.T, w *world) *world {
	t.Helper()
	other := *w
	other.learner = w.env.NewUser("student")
	tn, release := w.env.OpenTenant(w.env.Tenant)
	defer release()
	if _, err := tn.DB.ExecContext(context.Background(), `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`,
		w.course, other.learner.ID, w.env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	return &other
}

// admin calls the LRS with the tenant admin's token.
func (w *world) adminXAPI(method, path string, body any, headers map[string]string) *apitest.Response {
	h := map[string]string{"X-Experience-API-Version": "1.0.3"}
	for k, v := range headers {
		h[k] = v
	}
	return w.env.Do(apitest.Request{Method: method, Path: "/api/xapi/" + path, Token: w.admin.Token, Body: body, Headers: h})
}

func (w *world) stored(t *testing.T, id string) int {
	t.Helper()
	return w.env.Count(t, `SELECT COUNT(*) FROM lrs_statements WHERE id = $1`, id)
}

func TestLaunchStatementLimits(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := launch(t, w, masteryTopic(t, w), "")
		s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
		sent := 1

		// One statement above 1 MiB: 413, nothing stored.
		big := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		big["result"] = map[string]any{"extensions": map[string]any{"https://example.com/blob": strings.Repeat("x", maxStatement)}}
		res := s.xapi("POST", "statements", big)
		if res.Status != 413 || w.stored(t, big["id"].(string)) != 0 {
			t.Fatalf("statement above 1 MiB: %d %.200s", res.Status, res.Body)
		}
		if !strings.Contains(res.String("message"), "1 MiB") {
			t.Fatalf("413 without the error envelope: %.300s", res.Body)
		}
		res = s.xapi("PUT", "statements?statementId="+big["id"].(string), big)
		if res.Status != 413 || w.stored(t, big["id"].(string)) != 0 {
			t.Fatalf("PUT above 1 MiB: %d %.200s", res.Status, res.Body)
		}
		// A batch of statements each under the cap but above 10 MiB in
		// all: 413, none stored.
		var batch []any
		var ids []string
		for range 11 {
			st := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
			st["result"] = map[string]any{"extensions": map[string]any{"https://example.com/blob": strings.Repeat("y", maxStatement-4096)}}
			batch = append(batch, st)
			ids = append(ids, st["id"].(string))
		}
		res = s.xapi("POST", "statements", batch)
		if res.Status != 413 || env.Count(t, `SELECT COUNT(*) FROM lrs_statements WHERE id IN ($1, $2)`, ids[0], ids[10]) != 0 {
			t.Fatalf("batch above 10 MiB: %d %.200s", res.Status, res.Body)
		}
		// A batch of more statements than a request may carry: 413.
		batch = nil
		for range 501 {
			batch = append(batch, s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false))
		}
		if res = s.xapi("POST", "statements", batch); res.Status != 413 {
			t.Fatalf("batch of 501: %d %.200s", res.Status, res.Body)
		}

		// The session may send 200 statements a minute: so far it sent
		// initialized (a request refused for its size counts nothing).
		batch = nil
		for range 150 {
			batch = append(batch, s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false))
		}
		if res = s.xapi("POST", "statements", batch); res.Status != 200 {
			t.Fatalf("150 statements: %d %.200s", res.Status, res.Body)
		}
		sent += 150
		for sent < statementsPerMinute {
			s.send(t, 200, s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false))
			sent++
		}
		over := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		res = s.xapi("POST", "statements", over)
		if res.Status != 429 || res.Header.Get("Retry-After") == "" || w.stored(t, over["id"].(string)) != 0 {
			t.Fatalf("statement %d of the minute: %d %s %v", statementsPerMinute+1, res.Status, res.Body, res.Header)
		}
		// An admin is not counted.
		if res := w.adminXAPI("POST", "statements", stmtOf(s), nil); res.Status != 200 {
			t.Fatalf("admin while the launch is throttled: %d %s", res.Status, res.Body)
		}
		// The next minute's window takes statements again.
		env.Clock.Advance(time.Minute)
		s.send(t, 200, over)
		if w.stored(t, over["id"].(string)) != 1 {
			t.Fatal("statement of the next window not stored")
		}
	})
}

// stmtOf is a plain statement about the session's learner.
func stmtOf(s *session) map[string]any {
	st := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
	delete(st, "context")
	return st
}

func TestAUVoiding(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		ann := launch(t, w, topic, "")
		ann.send(t, 200, ann.statement(cmi5.VerbInitialized, nil, false))
		bob := launch(t, secondLearner(t, w), topic, "")
		bob.send(t, 200, bob.statement(cmi5.VerbInitialized, nil, false))

		bobs := bob.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		bob.send(t, 200, bobs)
		anns := ann.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		ann.send(t, 200, anns)
		voiding := func(s *session, target string) map[string]any {
			st := s.statement(lrs.VerbVoided, nil, false)
			st["object"] = map[string]any{"objectType": "StatementRef", "id": target}
			return st
		}
		voided := func(id string) bool {
			t.Helper()
			return env.Count(t, `SELECT COUNT(*) FROM lrs_statements WHERE id = $1 AND voided = TRUE`, id) == 1
		}

		// Ann's launch cannot void Bob's statement, whether it is sent
		// alone, in a batch or by PUT.
		v := voiding(ann, bobs["id"].(string))
		if res := ann.xapi("POST", "statements", v); res.Status != 403 || voided(bobs["id"].(string)) || ann.stored(t, v) {
			t.Fatalf("void of another learner's statement: %d %s", res.Status, res.Body)
		}
		v = voiding(ann, bobs["id"].(string))
		if res := ann.xapi("PUT", "statements?statementId="+v["id"].(string), v); res.Status != 403 || voided(bobs["id"].(string)) {
			t.Fatalf("PUT void of another learner's statement: %d %s", res.Status, res.Body)
		}
		if res := w.adminXAPI("GET", "statements?statementId="+bobs["id"].(string), nil, nil); res.Status != 200 {
			t.Fatalf("Bob's statement after the refused voiding: %d %s", res.Status, res.Body)
		}
		// Nor one that is not stored (yet): it would void what another
		// stores under that id later.
		if res := ann.xapi("POST", "statements", voiding(ann, uuid.NewString())); res.Status != 403 {
			t.Fatalf("void of an unknown statement: %d %s", res.Status, res.Body)
		}
		// cmi5 section 6.3: an AU's credentials void nothing, not even its
		// own statements.
		v = voiding(ann, anns["id"].(string))
		if res := ann.xapi("POST", "statements", v); res.Status != 403 || voided(anns["id"].(string)) || ann.stored(t, v) {
			t.Fatalf("AU voiding its own statement: %d %s", res.Status, res.Body)
		}
		// The launch still works after the refusals.
		ann.send(t, 200, ann.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false))

		// An admin voids any statement.
		av := stmtOf(ann)
		av["verb"] = map[string]any{"id": lrs.VerbVoided}
		av["object"] = map[string]any{"objectType": "StatementRef", "id": bobs["id"]}
		if res := w.adminXAPI("POST", "statements", av, nil); res.Status != 200 || !voided(bobs["id"].(string)) {
			t.Fatalf("admin voiding: %d %s", res.Status, res.Body)
		}
		if res := w.adminXAPI("GET", "statements?voidedStatementId="+bobs["id"].(string), nil, nil); res.Status != 200 {
			t.Fatalf("voided statement by voidedStatementId: %d %s", res.Status, res.Body)
		}
	})
}

func (s *session) stored(t *testing.T, st map[string]any) bool {
	t.Helper()
	return s.env.Count(t, `SELECT COUNT(*) FROM lrs_statements WHERE id = $1`, st["id"]) == 1
}

func TestLaunchDocumentAccess(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		s := launch(t, w, topic, "")
		bob := launch(t, secondLearner(t, w), topic, "")
		agent := url.QueryEscape(s.launch["actor"])
		reg := s.launch["registration"]
		state := func(activity, registration, id string) string {
			q := "activities/state?activityId=" + url.QueryEscape(activity) + "&agent=" + agent
			if registration != "" {
				q += "&registration=" + registration
			}
			if id != "" {
				q += "&stateId=" + id
			}
			return q
		}
		do := func(want int, method, path string, body any) {
			t.Helper()
			if res := s.xapi(method, path, body); res.Status != want {
				t.Fatalf("%s %s: want %d, got %d %s", method, path, want, res.Status, res.Body)
			}
		}
		// The AU's own state: its activity, learner and registration.
		do(204, "PUT", state(s.activityID, reg, "suspend"), map[string]any{"page": 3})
		do(200, "GET", state(s.activityID, reg, "suspend"), nil)
		// Another activity's, another registration's, none: 403.
		for _, path := range []string{state("https://example.com/other-au", reg, "suspend"), state(s.activityID, uuid.NewString(), "suspend"),
			state(s.activityID, "", "suspend")} {
			do(403, "PUT", path, map[string]any{"page": 1})
			do(403, "GET", path, nil)
			do(403, "DELETE", path, nil)
		}
		// Another learner's state: 403.
		other := "activities/state?activityId=" + url.QueryEscape(bob.activityID) + "&agent=" + url.QueryEscape(bob.launch["actor"]) +
			"&registration=" + bob.launch["registration"] + "&stateId=suspend"
		do(403, "PUT", other, map[string]any{"page": 1})

		// LMS.LaunchData: GET only.
		launchData := state(s.activityID, reg, cmi5.LaunchDataID)
		do(200, "GET", launchData, nil)
		do(403, "PUT", launchData, map[string]any{"launchMode": "Review"})
		do(403, "POST", launchData, map[string]any{"launchMode": "Review"})
		do(403, "DELETE", launchData, nil)
		// Deleting all of the AU's state leaves LMS.LaunchData.
		do(204, "DELETE", state(s.activityID, reg, ""), nil)
		do(404, "GET", state(s.activityID, reg, "suspend"), nil)
		if res := s.xapi("GET", launchData, nil); res.Status != 200 || res.String("launchMode") != "Normal" {
			t.Fatalf("LMS.LaunchData after the AU's delete: %d %s", res.Status, res.Body)
		}

		// Activity profiles: an admin writes, a launch reads.
		profile := "activities/profile?activityId=" + url.QueryEscape(s.activityID) + "&profileId=p1"
		if res := w.adminXAPI("PUT", profile, map[string]any{"a": 1}, map[string]string{"If-None-Match": "*"}); res.Status != 204 {
			t.Fatalf("admin profile PUT: %d %s", res.Status, res.Body)
		}
		do(200, "GET", profile, nil)
		do(403, "PUT", profile, map[string]any{"a": 2})
		do(403, "POST", profile, map[string]any{"b": 2})
		do(403, "DELETE", profile, nil)
		do(403, "PUT", "activities/profile?activityId="+url.QueryEscape("https://example.com/any")+"&profileId=new", map[string]any{"a": 2})
		if res := w.adminXAPI("GET", profile, nil, nil); res.Status != 200 || fmt.Sprint(res.Get("a")) != "1" {
			t.Fatalf("profile after the refused writes: %d %s", res.Status, res.Body)
		}
		// Agent profiles: the learner's own, not another's.
		do(403, "GET", "agents/profile?agent="+url.QueryEscape(bob.launch["actor"])+"&profileId="+cmi5.PreferencesID, nil)
		do(403, "PUT", "agents/profile?agent="+url.QueryEscape(bob.launch["actor"])+"&profileId=x", map[string]any{"a": 1})
		do(200, "GET", "agents/profile?agent="+agent+"&profileId="+cmi5.PreferencesID, nil)
		// An admin still writes LMS.LaunchData and any state.
		if res := w.adminXAPI("PUT", launchData, map[string]any{"launchMode": "Normal"}, nil); res.Status != 204 {
			t.Fatalf("admin LaunchData PUT: %d %s", res.Status, res.Body)
		}
	})
}
