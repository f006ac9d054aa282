package cmi5_test

// One test per session rule the LMS enforces on a launch's calls (the list
// in docs/content-kinds.md), each checking that a plain LRS client (the
// tenant admin's credentials) is not held to it where that applies.

import (
	"net/url"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
)

// started is a session of the mastery topic that has sent initialized.
func started(t *testing.T, w *world) *session {
	t.Helper()
	s := launch(t, w, masteryTopic(t, w), "")
	s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
	return s
}

func passed(s *session, score map[string]any) map[string]any {
	result := map[string]any{"success": true, "duration": "PT1S"}
	if score != nil {
		result["score"] = score
	}
	return s.statement(cmi5.VerbPassed, result, true)
}

func extensions(st map[string]any) map[string]any {
	return st["context"].(map[string]any)["extensions"].(map[string]any)
}

// §8.1.5: the launch's activityId is the LMS's own, one per AU and
// registration, never the publisher id, which the context template
// carries in grouping and the publisherid extension.
func TestRuleLaunchActivityID(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		s := launch(t, w, topic, "")
		if s.activityID == "https://example.com/au" || !strings.HasPrefix(s.activityID, "https://") {
			t.Fatalf("activityId %s", s.activityID)
		}
		if again := launch(t, w, topic, ""); again.activityID != s.activityID {
			t.Fatalf("the second launch's activityId %s is not the first's %s", again.activityID, s.activityID)
		}
		if other := launch(t, secondLearner(t, w), topic, ""); other.activityID == s.activityID {
			t.Fatal("two registrations share an activityId")
		}
		grouping := s.template["contextActivities"].(map[string]any)["grouping"].([]any)
		ext := s.template["extensions"].(map[string]any)
		if grouping[0].(map[string]any)["id"] != "https://example.com/au" || ext[cmi5.ExtPublisherID] != "https://example.com/au" {
			t.Fatalf("context template: %v", s.template)
		}
		launched := w.adminStatements(t, url.Values{"verb": {cmi5.VerbLaunched}, "registration": {s.launch["registration"]}})
		if launched[0]["object"].(map[string]any)["id"] != s.activityID || extensions(launched[0])[cmi5.ExtPublisherID] != "https://example.com/au" {
			t.Fatalf("launched: %v", launched[0])
		}
		// A cmi5 defined statement about the publisher id is refused.
		s = launch(t, w, topic, "")
		init := s.statement(cmi5.VerbInitialized, nil, false)
		init["object"] = map[string]any{"id": "https://example.com/au"}
		s.send(t, 403, init)
		s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
	})
}

// §8.2.1, §8.2.3: the fetch URL answers 200 to every call; after the
// first, and for a code it does not know, with the error object.
func TestRuleFetchURLOnce(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		// open checks the second call's answer: 200, error-code 1.
		open(t, w, masteryTopic(t, w), "")
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/cmi5/fetch?code=nonsense"})
		if res.Status != 200 || res.String("error-code") != "2" || res.String("auth-token") != "" {
			t.Fatalf("unknown code: %d %s", res.Status, res.Body)
		}
	})
}

// §11.0 to §11.2: an AU's write of the learner preferences must leave a
// valid document (403 otherwise); it deletes nothing. An admin is not
// judged.
func TestRuleLearnerPreferences(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := launch(t, w, masteryTopic(t, w), "")
		path := "agents/profile?profileId=" + cmi5.PreferencesID + "&agent=" + url.QueryEscape(s.launch["actor"])
		etag := s.xapi("GET", path, nil).Header.Get("ETag")
		put := func(want int, contentType, body string) {
			t.Helper()
			h := map[string]string{"Authorization": "Basic " + s.auth, "X-Experience-API-Version": "1.0.3", "If-Match": etag}
			if contentType != "" {
				h["Content-Type"] = contentType
			}
			res := env.Do(apitest.Request{Method: "PUT", Path: "/api/xapi/" + path, Body: []byte(body), Headers: h})
			if res.Status != want {
				t.Fatalf("PUT %s %s: want %d, got %d %s", contentType, body, want, res.Status, res.Body)
			}
		}
		for _, bad := range []struct{ contentType, body string }{
			{"", `{"languagePreference": "en-US", "audioPreference": "on"}`},
			{"text/plain", `just some text`},
			{"application/json", `{"audioPreference": "on"}`},
			{"application/json", `{"languagePreference": "en-US"}`},
			{"application/json", `{"languagePreference": "not comma separated", "audioPreference": "on"}`},
			{"application/json", `{"languagePreference": "", "audioPreference": "on"}`},
			{"application/json", `{"languagePreference": "en-US", "audioPreference": "loud"}`},
			{"application/json", `["en-US"]`},
		} {
			put(403, bad.contentType, bad.body)
		}
		put(204, "application/json", `{"languagePreference": "en-US,fr-FR,fr-BE,zh-Hant-TW", "audioPreference": "off"}`)
		if res := s.xapi("DELETE", path, nil); res.Status != 403 {
			t.Fatalf("AU delete: %d %s", res.Status, res.Body)
		}
		// A plain LRS client writes what it likes.
		if res := w.adminXAPI("PUT", path, map[string]any{"anything": true}, map[string]string{"If-Match": "*"}); res.Status != 204 {
			t.Fatalf("admin write: %d %s", res.Status, res.Body)
		}
	})
}

// §10.2.1: LMS.LaunchData is read-only for the AU.
func TestRuleLaunchDataReadOnly(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := launch(t, w, masteryTopic(t, w), "")
		for _, method := range []string{"PUT", "POST", "DELETE"} {
			if res := s.xapi(method, s.stateURL(cmi5.LaunchDataID), map[string]any{"test": true}); res.Status != 403 {
				t.Fatalf("%s LMS.LaunchData: %d %s", method, res.Status, res.Body)
			}
		}
		if res := s.xapi("GET", s.stateURL(cmi5.LaunchDataID), nil); res.Status != 200 || res.String("launchMode") != "Normal" {
			t.Fatalf("LMS.LaunchData after the refused writes: %d %s", res.Status, res.Body)
		}
	})
}

// §9.6.3.2: passed and failed of an AU with a mastery score carry it in
// the masteryscore extension, with LMS.LaunchData's value.
func TestRuleMasteryScoreExtension(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		without := passed(s, nil)
		delete(extensions(without), cmi5.ExtMasteryScore)
		s.send(t, 403, without)
		other := passed(s, nil)
		extensions(other)[cmi5.ExtMasteryScore] = 0.7
		s.send(t, 403, other)
		failed := s.statement(cmi5.VerbFailed, map[string]any{"success": false, "duration": "PT1S"}, true)
		delete(extensions(failed), cmi5.ExtMasteryScore)
		s.send(t, 403, failed)
		s.send(t, 200, passed(s, nil))
	})
}

// §8.2.1, §9.3.8: the auth token ends with its session at terminated.
func TestRuleTokenEndsAtTerminated(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		if res := s.xapi("GET", s.stateURL(cmi5.LaunchDataID), nil); res.Status != 200 {
			t.Fatalf("state before terminated: %d", res.Status)
		}
		s.send(t, 200, s.statement(cmi5.VerbTerminated, map[string]any{"duration": "PT3S"}, false))
		for _, path := range []string{s.stateURL(cmi5.LaunchDataID), "statements?registration=" + s.launch["registration"]} {
			if res := s.xapi("GET", path, nil); res.Status != 401 {
				t.Fatalf("GET %s after terminated: %d %s", path, res.Status, res.Body)
			}
		}
		s.send(t, 401, s.allowed())
	})
}

// notApplicableXML is a course of a block holding an AU that needs
// nothing (moveOn NotApplicable).
const notApplicableXML = `<?xml version="1.0"?>
<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">
 <course id="https://example.com/na"><title><langstring>C</langstring></title><description><langstring>D</langstring></description></course>
 <block id="https://example.com/na/b"><title><langstring>B</langstring></title><description><langstring>B</langstring></description>
  <au id="https://example.com/na/au" moveOn="NotApplicable"><title><langstring>Intro</langstring></title>
   <description><langstring>I</langstring></description><url>https://cdn.example.com/intro.html</url></au>
 </block>
</courseStructure>`

// §9.6.1: moveOn is evaluated at registration: a NotApplicable AU is
// satisfied (block and course satisfied before launched) and its topic
// completes.
func TestRuleNotApplicableCompletesTopic(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := w.topic(t, w.imported(t, "cmi5.xml", []byte(notApplicableXML)).ID, nil, "Intro")
		s := launch(t, w, topic, "")
		if n := topicStatus(t, w, topic); n != 1 {
			t.Fatalf("topic status %d after the launch, want complete", n)
		}
		list := w.adminStatements(t, url.Values{"registration": {s.launch["registration"]}, "ascending": {"true"}})
		verbs := make([]string, len(list))
		for i, st := range list {
			verbs[i] = st["verb"].(map[string]any)["id"].(string)
		}
		if strings.Join(verbs, " ") != cmi5.VerbSatisfied+" "+cmi5.VerbSatisfied+" "+cmi5.VerbLaunched {
			t.Fatalf("statements: %v", verbs)
		}
	})
}

// §6.3: the AU voids nothing (more in TestAUVoiding); an admin does.
func TestRuleNoVoiding(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		mine := s.allowed()
		s.send(t, 200, mine)
		v := s.allowed()
		v["verb"] = map[string]any{"id": "http://adlnet.gov/expapi/verbs/voided"}
		v["object"] = map[string]any{"objectType": "StatementRef", "id": mine["id"]}
		s.send(t, 403, v)
		if n := env.Count(t, `SELECT COUNT(*) FROM lrs_statements WHERE id = $1 AND voided = TRUE`, mine["id"]); n != 0 {
			t.Fatal("voided")
		}
	})
}

// §9.7: a launch's statement has a timestamp, in UTC; a plain LRS
// client's may leave it to the LRS.
func TestRuleTimestampUTC(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		missing := s.allowed()
		delete(missing, "timestamp")
		s.send(t, 403, missing)
		local := s.allowed()
		local["timestamp"] = "2026-12-06T08:00:00.000-06:00"
		s.send(t, 403, local)
		zero := s.allowed()
		zero["timestamp"] = "2026-12-06T14:00:00.000+00:00"
		s.send(t, 200, zero)
		plain := stmtOf(s)
		delete(plain, "timestamp")
		if res := w.adminXAPI("POST", "statements", plain, nil); res.Status != 200 {
			t.Fatalf("admin without timestamp: %d %s", res.Status, res.Body)
		}
	})
}

// §9.6.2.2: the moveon category belongs to cmi5 defined statements with
// success or completion only.
func TestRuleMoveOnCategory(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		allowed := s.allowed()
		allowed["context"].(map[string]any)["contextActivities"].(map[string]any)["category"] = []any{map[string]any{"id": cmi5.CategoryMoveOn}}
		s.send(t, 403, allowed)
		s.send(t, 403, s.statement(cmi5.VerbTerminated, map[string]any{"duration": "PT1S"}, true))
		s.send(t, 403, s.statement(cmi5.VerbCompleted, map[string]any{"completion": true, "duration": "PT1S"}, false))
		s.send(t, 200, s.statement(cmi5.VerbCompleted, map[string]any{"completion": true, "duration": "PT1S"}, true))
	})
}

// §9.1: the AU gives each statement its id; a plain LRS client may leave
// it to the LRS.
func TestRuleStatementID(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		st := s.allowed()
		delete(st, "id")
		s.send(t, 403, st)
		plain := stmtOf(s)
		delete(plain, "id")
		if res := w.adminXAPI("POST", "statements", plain, nil); res.Status != 200 {
			t.Fatalf("admin without id: %d %s", res.Status, res.Body)
		}
	})
}

// §9.5.1: a raw score comes with min and max.
func TestRuleRawScoreRange(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		s.send(t, 403, passed(s, map[string]any{"raw": 90, "max": 100, "scaled": 0.9}))
		s.send(t, 403, passed(s, map[string]any{"raw": 90, "min": 0, "scaled": 0.9}))
		s.send(t, 200, passed(s, map[string]any{"raw": 90, "min": 0, "max": 100, "scaled": 0.9}))
	})
}

// §11.0 (requirement 11.0.0.0-3): initialized only after the session read
// the learner preferences.
func TestRuleInitializedAfterPreferences(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := open(t, w, masteryTopic(t, w), "")
		ld := s.xapi("GET", s.stateURL(cmi5.LaunchDataID), nil)
		s.template, _ = ld.Get("contextTemplate").(map[string]any)
		res := s.send(t, 403, s.statement(cmi5.VerbInitialized, nil, false))
		if !strings.Contains(res.String("message"), "learner preferences") {
			t.Fatalf("refusal: %s", res.Body)
		}
		s.readPreferences(t)
		s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
	})
}

// §9.2: the actor of a cmi5 defined statement is an Agent.
func TestRuleActorIsAgent(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		s := started(t, w)
		st := passed(s, nil)
		st["actor"].(map[string]any)["objectType"] = "Group"
		if res := s.xapi("POST", "statements", st); res.Status != 403 {
			t.Fatalf("group actor: %d %s", res.Status, res.Body)
		}
	})
}
