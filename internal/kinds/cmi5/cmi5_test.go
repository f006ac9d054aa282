package cmi5_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
)

type world struct {
	env            *apitest.Env
	admin, learner *apitest.User
	course, lesson int64
}

func newWorld(t testing.TB, env *apitest.Env) *world {
	t.Helper()
	w := &world{env: env, admin: env.As("admin"), learner: env.NewUser("student")}
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx, now := context.Background(), env.Clock.Now()
	err := tn.DB.QueryRowContext(ctx, `INSERT INTO courses (title, status, created_at, updated_at)
		VALUES ('cmi5 course', 'published', $1, $1) RETURNING id`, now).Scan(&w.course)
	if err == nil {
		err = tn.DB.QueryRowContext(ctx, `INSERT INTO lessons (course_id, title, position, created_at, updated_at)
			VALUES ($1, 'Lesson', 1, $2, $2) RETURNING id`, w.course, now).Scan(&w.lesson)
	}
	if err == nil {
		_, err = tn.DB.ExecContext(ctx, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`,
			w.course, w.learner.ID, now)
	}
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func upload(t testing.TB, env *apitest.Env, token, name string, data []byte) *apitest.Response {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	part, _ := mw.CreateFormFile("package", name)
	part.Write(data)
	mw.Close()
	return env.Do(apitest.Request{Method: "POST", Path: "/api/admin/cmi5", Token: token, Body: buf.Bytes(), Type: mw.FormDataContentType()})
}

// masteryXML is a bare course structure of one AU hosted elsewhere, with
// a mastery score.
const masteryXML = `<?xml version="1.0"?>
<courseStructure xmlns="https://w3id.org/xapi/profiles/cmi5/v1/CourseStructure.xsd">
 <course id="https://example.com/c"><title><langstring>C</langstring></title><description><langstring>D</langstring></description></course>
 <block id="https://example.com/b"><title><langstring>B</langstring></title><description><langstring>B</langstring></description>
  <au id="https://example.com/au" moveOn="Passed" masteryScore="0.8"><title><langstring>Quiz</langstring></title>
   <description><langstring>Q</langstring></description><url>https://cdn.example.com/quiz.html</url>
   <launchParameters>level=2</launchParameters></au>
 </block>
</courseStructure>`

func TestImportAndTopic(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		data := fixtures.Read(t, "cmi5/multi_au_framed.zip")
		if res := upload(t, env, w.learner.Token, "course.zip", data); res.Status != 403 {
			t.Fatalf("learner upload: %d %s", res.Status, res.Body)
		}
		res := upload(t, env, w.admin.Token, "course.zip", data)
		if res.Status != 201 || len(res.Get("data.aus").([]any)) != 8 {
			t.Fatalf("import: %d %s", res.Status, res.Body)
		}
		pkg := res.Number("data.id")
		body := map[string]any{"lesson": w.lesson, "title": "Geology", "topicable": cmi5.TopicClass, "package": pkg}
		res = env.Call(t, 422, "POST", "/api/admin/topics", w.admin.Token, body)
		choices, _ := res.Get("details.choices").([]any)
		if len(choices) != 8 || res.Get("errors.au") == nil {
			t.Fatalf("no choices: %s", res.Body)
		}
		body["au"] = res.Number("details.choices.1.id")
		res = env.Call(t, 201, "POST", "/api/admin/topics", w.admin.Token, body)
		if res.String("data.topicable.title") != "Geological Materials" {
			t.Fatalf("topic: %s", res.Body)
		}
		// A bare cmi5.xml with relative AU URLs is refused, naming the URL.
		bare := fixtures.Read(t, "cmi5/spec/simple-cmi5.xml")
		res = upload(t, env, w.admin.Token, "cmi5.xml", bare)
		if res.Status != 201 {
			t.Fatalf("simple spec example (absolute URL): %d %s", res.Status, res.Body)
		}
		res = upload(t, env, w.admin.Token, "cmi5.xml", []byte(strings.Replace(masteryXML, "https://cdn.example.com/quiz.html", "quiz.html", 1)))
		if res.Status != 422 || !strings.Contains(string(res.Body), "is relative") {
			t.Fatalf("relative bare: %d %s", res.Status, res.Body)
		}
	})
}

// session is a launched AU seen from the AU: its launch parameters and
// auth token.
type session struct {
	env        *apitest.Env
	launch     map[string]string
	auth       string
	id         string
	activityID string
}

func launch(t testing.TB, w *world, topic float64, mode string) *session {
	t.Helper()
	body := map[string]any{}
	if mode != "" {
		body["launch_mode"] = mode
	}
	res := w.env.Call(t, 200, "POST", fmt.Sprintf("/api/cmi5/launch/%d", int64(topic)), w.learner.Token, body)
	u, err := url.Parse(res.String("data.url"))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	s := &session{env: w.env, launch: map[string]string{}, id: res.String("data.session_id")}
	for _, k := range []string{"endpoint", "fetch", "actor", "registration", "activityId"} {
		if q.Get(k) == "" {
			t.Fatalf("launch URL lacks %s: %s", k, u)
		}
		s.launch[k] = q.Get(k)
	}
	s.activityID = s.launch["activityId"]
	f, _ := url.Parse(s.launch["fetch"])
	fetched := w.env.Do(apitest.Request{Method: "POST", Path: f.Path + "?" + f.RawQuery})
	if fetched.Status != 200 || fetched.String("auth-token") == "" {
		t.Fatalf("fetch: %d %s", fetched.Status, fetched.Body)
	}
	s.auth = fetched.String("auth-token")
	again := w.env.Do(apitest.Request{Method: "POST", Path: f.Path + "?" + f.RawQuery})
	if again.Status != 400 || again.String("error-code") != "1" || again.String("auth-token") != "" {
		t.Fatalf("second fetch: %d %s", again.Status, again.Body)
	}
	return s
}

func (s *session) xapi(method, path string, body any) *apitest.Response {
	return s.env.Do(apitest.Request{Method: method, Path: "/api/xapi/" + path, Body: body,
		Headers: map[string]string{"Authorization": "Basic " + s.auth, "X-Experience-API-Version": "1.0.3"}})
}

// statement is a cmi5 defined statement of the session.
func (s *session) statement(verb string, result map[string]any, moveOn bool) map[string]any {
	var actor any
	json.Unmarshal([]byte(s.launch["actor"]), &actor)
	category := []any{map[string]any{"id": cmi5.CategoryCmi5}}
	if moveOn {
		category = append(category, map[string]any{"id": cmi5.CategoryMoveOn})
	}
	st := map[string]any{"id": uuid.NewString(), "actor": actor, "verb": map[string]any{"id": verb},
		"object":    map[string]any{"id": s.activityID, "objectType": "Activity"},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano),
		"context": map[string]any{"registration": s.launch["registration"],
			"contextActivities": map[string]any{"category": category, "grouping": []any{map[string]any{"id": s.activityID}}},
			"extensions":        map[string]any{cmi5.ExtSessionID: s.id}}}
	if result != nil {
		st["result"] = result
	}
	return st
}

func (s *session) send(t testing.TB, want int, st map[string]any) {
	t.Helper()
	res := s.xapi("POST", "statements", st)
	if res.Status != want {
		t.Fatalf("%v: %d %s", st["verb"], res.Status, res.Body)
	}
}

func TestLaunchAndSessionRules(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		data := fixtures.Read(t, "cmi5/single_au_basic_responsive.zip")
		res := upload(t, env, w.admin.Token, "course.zip", data)
		if res.Status != 201 {
			t.Fatalf("import: %d %s", res.Status, res.Body)
		}
		topic := env.Call(t, 201, "POST", "/api/admin/topics", w.admin.Token, map[string]any{"lesson": w.lesson, "title": "Geology",
			"topicable": cmi5.TopicClass, "package": res.Number("data.id")}).Number("data.id")
		s := launch(t, w, topic, "")

		// The AU's page is served from the launch URL's signed link.
		lres := env.Call(t, 200, "POST", fmt.Sprintf("/api/cmi5/launch/%d", int64(topic)), w.learner.Token, nil)
		u, _ := url.Parse(lres.String("data.url"))
		page := env.Do(apitest.Request{Method: "GET", Path: u.Path})
		if page.Status != 200 || !strings.Contains(string(page.Body), "<html") {
			t.Fatalf("AU page: %d", page.Status)
		}
		// That launch abandoned the first session (never initialized).
		if s.xapi("GET", "statements", nil).Status != 401 {
			t.Fatal("the abandoned session's token still works")
		}
		s = launch(t, w, topic, "")
		if s.launch["registration"] != lres.String("data.registration") {
			t.Fatal("registration not reused across sessions")
		}

		// LMS.LaunchData and the preferences are there for the AU.
		agent := url.QueryEscape(s.launch["actor"])
		ld := s.xapi("GET", "activities/state?stateId=LMS.LaunchData&activityId="+url.QueryEscape(s.activityID)+"&agent="+agent+
			"&registration="+s.launch["registration"], nil)
		if ld.Status != 200 || ld.String("launchMode") != "Normal" || ld.String("moveOn") != "CompletedOrPassed" ||
			ld.Get("contextTemplate.extensions") == nil {
			t.Fatalf("launch data: %d %s", ld.Status, ld.Body)
		}
		if p := s.xapi("GET", "agents/profile?profileId=cmi5LearnerPreferences&agent="+agent, nil); p.Status != 200 {
			t.Fatalf("preferences: %d %s", p.Status, p.Body)
		}

		dur := map[string]any{"duration": "PT5S"}
		s.send(t, 403, s.statement(cmi5.VerbCompleted, map[string]any{"completion": true, "duration": "PT1S"}, true))
		wrong := s.statement(cmi5.VerbInitialized, nil, false)
		wrong["context"].(map[string]any)["extensions"] = map[string]any{cmi5.ExtSessionID: "other"}
		s.send(t, 403, wrong)
		s.send(t, 403, s.statement(cmi5.VerbLaunched, nil, false))
		first := s.statement(cmi5.VerbInitialized, nil, false)
		s.send(t, 200, first)
		// Sent again as it was (a retry whose answer was lost), it is
		// stored already: no rule refuses it. Another initialized is.
		s.send(t, 200, first)
		s.send(t, 403, s.statement(cmi5.VerbInitialized, nil, false))
		s.send(t, 403, s.statement(cmi5.VerbCompleted, map[string]any{"completion": true, "duration": "PT1S"}, false))
		s.send(t, 403, s.statement(cmi5.VerbCompleted, map[string]any{"completion": true}, true))
		s.send(t, 200, s.statement(cmi5.VerbCompleted, map[string]any{"completion": true, "duration": "PT1S"}, true))
		s.send(t, 403, s.statement(cmi5.VerbCompleted, map[string]any{"completion": true, "duration": "PT1S"}, true))
		// A statement of another learner is refused.
		other := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		other["actor"] = map[string]any{"mbox": "mailto:x@example.com"}
		s.send(t, 403, other)
		s.send(t, 200, s.statement(cmi5.VerbTerminated, dur, false))
		s.send(t, 403, s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false))

		// Completing the AU (moveOn CompletedOrPassed) completed the topic.
		prog := env.Call(t, 200, "GET", fmt.Sprintf("/api/courses/progress/%d", w.course), w.learner.Token, nil)
		if !strings.Contains(string(prog.Body), `"status":1`) && !strings.Contains(string(prog.Body), `"finished_at":"`) {
			t.Fatalf("topic not complete: %s", prog.Body)
		}
		// The course is satisfied once: the LMS said so in the LRS.
		q := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements?verb=" + url.QueryEscape(cmi5.VerbSatisfied) +
			"&registration=" + s.launch["registration"], Token: w.admin.Token, Headers: map[string]string{"X-Experience-API-Version": "1.0.3"}})
		if n := len(q.Get("statements").([]any)); q.Status != 200 || n != 1 {
			t.Fatalf("satisfied statements: %d %s", q.Status, q.Body)
		}

		// A third session that never terminates is abandoned by the next
		// launch, with an abandoned statement.
		s3 := launch(t, w, topic, "")
		s3.send(t, 200, s3.statement(cmi5.VerbInitialized, nil, false))
		launch(t, w, topic, "")
		q = env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements?verb=" + url.QueryEscape(cmi5.VerbAbandoned) +
			"&registration=" + s.launch["registration"], Token: w.admin.Token, Headers: map[string]string{"X-Experience-API-Version": "1.0.3"}})
		if n := len(q.Get("statements").([]any)); n != 3 {
			t.Fatalf("abandoned statements: want 3 (the first, the page-serving and the third session), got %d: %s", n, q.Body)
		}
		s3.send(t, 401, s3.statement(cmi5.VerbTerminated, dur, false))
	})
}

// masteryTopic imports masteryXML and makes a topic of its AU.
func masteryTopic(t *testing.T, w *world) float64 {
	t.Helper()
	res := upload(t, w.env, w.admin.Token, "cmi5.xml", []byte(masteryXML))
	if res.Status != 201 {
		t.Fatalf("import: %d %s", res.Status, res.Body)
	}
	return w.env.Call(t, 201, "POST", "/api/admin/topics", w.admin.Token, map[string]any{"lesson": w.lesson, "title": "Quiz",
		"topicable": cmi5.TopicClass, "package": res.Number("data.id")}).Number("data.id")
}

func TestMasteryAndModes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		browse := launch(t, w, topic, "Browse")
		browse.send(t, 200, browse.statement(cmi5.VerbInitialized, nil, false))
		browse.send(t, 403, browse.statement(cmi5.VerbPassed, map[string]any{"success": true, "duration": "PT1S",
			"score": map[string]any{"scaled": 0.9}}, true))
		s := launch(t, w, topic, "")
		s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
		s.send(t, 403, s.statement(cmi5.VerbPassed, map[string]any{"success": true, "duration": "PT1S",
			"score": map[string]any{"scaled": 0.5}}, true))
		s.send(t, 403, s.statement(cmi5.VerbFailed, map[string]any{"success": false, "duration": "PT1S",
			"score": map[string]any{"scaled": 0.9}}, true))
		s.send(t, 200, s.statement(cmi5.VerbPassed, map[string]any{"success": true, "duration": "PT1S",
			"score": map[string]any{"scaled": 0.85}}, true))
		s.send(t, 403, s.statement(cmi5.VerbFailed, map[string]any{"success": false, "duration": "PT1S",
			"score": map[string]any{"scaled": 0.1}}, true))
		env.Clock.Advance(time.Minute)
		s.send(t, 200, s.statement(cmi5.VerbTerminated, map[string]any{"duration": "PT42S"}, false))
		// The block and the course are satisfied, the score kept.
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		var score float64
		var seconds int64
		if err := tn.DB.QueryRowContext(context.Background(), `SELECT score FROM cmi5_au_status WHERE registration = $1`,
			s.launch["registration"]).Scan(&score); err != nil || score != 0.85 {
			t.Fatalf("score %v %v", score, err)
		}
		if err := tn.DB.QueryRowContext(context.Background(), `SELECT seconds FROM cmi5_sessions WHERE id = $1`, s.id).Scan(&seconds); err != nil || seconds != 42 {
			t.Fatalf("seconds %v %v", seconds, err)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM cmi5_satisfied WHERE registration = $1`, s.launch["registration"]); n != 2 {
			t.Fatalf("satisfied block and course: %d", n)
		}
		ld := s.xapi("GET", "activities/state?stateId=LMS.LaunchData&activityId="+url.QueryEscape(s.activityID)+"&agent="+
			url.QueryEscape(s.launch["actor"])+"&registration="+s.launch["registration"], nil)
		if ld.Number("masteryScore") != 0.8 || ld.String("launchParameters") != "level=2" {
			t.Fatalf("launch data: %s", ld.Body)
		}
	})
}

// topicSeconds is the learner's time on a topic, as learning keeps it.
func topicSeconds(t *testing.T, w *world, topic float64) int {
	t.Helper()
	return w.env.Count(t, `SELECT COALESCE(MAX(seconds), 0) FROM topic_progress WHERE user_id = $1 AND topic_id = $2`,
		w.learner.ID, int64(topic))
}

// TestSessionTime: a terminated session's duration, and an abandoned
// session's time up to its last statement on the server's clock (not the
// AU's), join the learner's time on the topic, which is then in progress.
func TestSessionTime(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := masteryTopic(t, w)

		s := launch(t, w, topic, "")
		s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
		env.Clock.Advance(90 * time.Second)
		// The AU's clock says a day later: it does not count.
		late := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		late["timestamp"] = time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339Nano)
		s.send(t, 200, late)
		env.Clock.Advance(5 * time.Minute)
		if n := topicSeconds(t, w, topic); n != 0 {
			t.Fatalf("time before the session ends: %d", n)
		}
		// The learner signs in again: the clock outran the access token.
		w.learner.Token, _ = env.Login(env.Host, w.learner.Email, w.learner.Password)
		s2 := launch(t, w, topic, "")
		if n := topicSeconds(t, w, topic); n != 90 {
			t.Fatalf("the abandoned session's time: %d, want 90", n)
		}
		s2.send(t, 200, s2.statement(cmi5.VerbInitialized, nil, false))
		env.Clock.Advance(time.Minute)
		s2.send(t, 200, s2.statement(cmi5.VerbTerminated, map[string]any{"duration": "PT42.4S"}, false))
		if n := topicSeconds(t, w, topic); n != 132 {
			t.Fatalf("time after a terminated session: %d, want 132", n)
		}
		if n := env.Count(t, `SELECT status FROM topic_progress WHERE user_id = $1 AND topic_id = $2`, w.learner.ID, int64(topic)); n != 2 {
			t.Fatalf("topic status %d, want in progress", n)
		}
		// A terminated session is not abandoned by the next launch: its
		// time is not counted twice.
		s3 := launch(t, w, topic, "")
		if n := topicSeconds(t, w, topic); n != 132 {
			t.Fatalf("time after the next launch: %d", n)
		}
		// A duration longer than the time since the launch counts that
		// time only.
		s3.send(t, 200, s3.statement(cmi5.VerbInitialized, nil, false))
		env.Clock.Advance(2 * time.Minute)
		s3.send(t, 200, s3.statement(cmi5.VerbTerminated, map[string]any{"duration": "PT9999H59M59S"}, false))
		if n := topicSeconds(t, w, topic); n != 252 {
			t.Fatalf("time after claiming 9999 hours in 2 minutes: %d, want 252", n)
		}
	})
}

// TestIdleSessionsAbandoned: a session without a statement for longer
// than the timeout is abandoned, by its own next LRS call (which is then
// refused) or by the hourly sweep; a session whose statements keep
// coming is not.
func TestIdleSessionsAbandoned(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		relogin := func() {
			w.learner.Token, _ = env.Login(env.Host, w.learner.Email, w.learner.Password)
			w.admin.Token, _ = env.Login(env.Host, w.admin.Email, w.admin.Password)
		}
		abandoned := func(reg string) int {
			q := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements?verb=" + url.QueryEscape(cmi5.VerbAbandoned) +
				"&registration=" + reg, Token: w.admin.Token, Headers: map[string]string{"X-Experience-API-Version": "1.0.3"}})
			list, _ := q.Get("statements").([]any)
			return len(list)
		}
		experienced := func(s *session) map[string]any {
			return s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
		}

		// Statements that keep coming keep the session open.
		s := launch(t, w, topic, "")
		reg := s.launch["registration"]
		s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
		env.Clock.Advance(cmi5.DefaultSessionTimeout - time.Minute)
		s.send(t, 200, experienced(s))
		env.Clock.Advance(cmi5.DefaultSessionTimeout - time.Minute)
		s.send(t, 200, experienced(s))
		// Then silence: the next call abandons it and is refused.
		env.Clock.Advance(cmi5.DefaultSessionTimeout + time.Minute)
		s.send(t, 401, experienced(s))
		relogin()
		if n := abandoned(reg); n != 1 {
			t.Fatalf("abandoned after the idle call: %d", n)
		}
		// Its time ran to its last statement.
		want := int(2 * (cmi5.DefaultSessionTimeout - time.Minute) / time.Second)
		if n := topicSeconds(t, w, topic); n != want {
			t.Fatalf("topic time %d, want %d", n, want)
		}

		// The sweep abandons a session nobody calls for.
		s2 := launch(t, w, topic, "")
		s2.send(t, 200, s2.statement(cmi5.VerbInitialized, nil, false))
		env.Clock.Advance(cmi5.DefaultSessionTimeout + time.Minute)
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		relogin()
		if n := abandoned(reg); n != 2 {
			t.Fatalf("abandoned after the sweep: %d", n)
		}
		s2.send(t, 401, experienced(s2))
		// A fresh session is untouched by the sweep.
		s3 := launch(t, w, topic, "")
		s3.send(t, 200, s3.statement(cmi5.VerbInitialized, nil, false))
		env.Clock.Advance(cmi5.DefaultSessionTimeout - time.Minute)
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		s3.send(t, 200, experienced(s3))
		relogin()
		if n := abandoned(reg); n != 2 {
			t.Fatalf("abandoned after the second sweep: %d", n)
		}
	})
}

// TestWaived: a course editor waives a learner's AU (cmi5 section 9.3.7):
// the waived statement in the learner's registration with its reason,
// success and completion and the moveon category, the topic complete,
// the course satisfied; a second waiver is a conflict, learners may not
// waive, and a wrong reason or user is refused.
func TestWaived(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		path := fmt.Sprintf("/api/cmi5/waive/%d", int64(topic))
		body := map[string]any{"user": w.learner.ID, "reason": cmi5.ReasonTestedOut}
		env.Call(t, 403, "POST", path, w.learner.Token, body)
		env.Call(t, 422, "POST", path, w.admin.Token, map[string]any{"user": w.learner.ID, "reason": "Bored"})
		env.Call(t, 422, "POST", path, w.admin.Token, map[string]any{"user": 999999, "reason": cmi5.ReasonAdmin})
		res := env.Call(t, 200, "POST", path, w.admin.Token, body)
		reg := res.String("data.registration")
		env.Call(t, 409, "POST", path, w.admin.Token, body)

		q := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements?verb=" + url.QueryEscape(cmi5.VerbWaived) +
			"&registration=" + reg, Token: w.admin.Token, Headers: map[string]string{"X-Experience-API-Version": "1.0.3"}})
		list, _ := q.Get("statements").([]any)
		if len(list) != 1 {
			t.Fatalf("waived statements: %s", q.Body)
		}
		st := list[0].(map[string]any)
		result := st["result"].(map[string]any)
		ext, _ := result["extensions"].(map[string]any)
		cat := st["context"].(map[string]any)["contextActivities"].(map[string]any)["category"].([]any)
		if result["success"] != true || result["completion"] != true || ext[cmi5.ExtReason] != cmi5.ReasonTestedOut || len(cat) != 2 ||
			st["object"].(map[string]any)["id"] != "https://example.com/au" {
			t.Fatalf("waived: %v", st)
		}
		// The block and the course are satisfied; the topic is complete.
		if n := env.Count(t, `SELECT COUNT(*) FROM cmi5_satisfied WHERE registration = $1`, reg); n != 2 {
			t.Fatalf("satisfied block and course: %d", n)
		}
		if n := env.Count(t, `SELECT status FROM topic_progress WHERE user_id = $1 AND topic_id = $2`, w.learner.ID, int64(topic)); n != 1 {
			t.Fatalf("topic status %d, want complete", n)
		}
		// The learner's next launch reuses the waived registration.
		if s := launch(t, w, topic, ""); s.launch["registration"] != reg {
			t.Fatal("the launch after the waiver has another registration")
		}
	})
}
