package cmi5_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/lms-platform/lms/client"
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

// upload imports a package as u through the typed client.
func upload(t testing.TB, env *apitest.Env, u *apitest.User, name string, data []byte) (*client.Cmi5Package, error) {
	t.Helper()
	return env.UserClient(u).PostAdminCmi5(context.Background(), client.PostAdminCmi5Form{Package: &client.File{Name: name,
		Content: bytes.NewReader(data)}})
}

// imported imports a package as the admin, which must succeed.
func (w *world) imported(t testing.TB, name string, data []byte) *client.Cmi5Package {
	t.Helper()
	return apitest.Must(upload(t, w.env, w.admin, name, data))(t)
}

// topic makes a cmi5 topic of a package's AU (au nil: its only one) in
// w's lesson.
func (w *world) topic(t testing.TB, pkg int64, au *int64, title string) int64 {
	t.Helper()
	return apitest.Must(w.env.UserClient(w.admin).PostAdminTopics(context.Background(), client.PostAdminTopicsBody{Lesson: w.lesson,
		Title: title, Topicable: cmi5.TopicClass, Package: &pkg, Au: au}))(t).ID
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
		ctx := context.Background()
		w := newWorld(t, env)
		data := fixtures.Read(t, "cmi5/multi_au_framed.zip")
		_, err := upload(t, env, w.learner, "course.zip", data)
		apitest.Refused(t, err, 403)
		pkg := w.imported(t, "course.zip", data)
		if len(pkg.Aus) != 8 {
			t.Fatalf("import: %d AUs", len(pkg.Aus))
		}
		admin := env.UserClient(w.admin)
		body := client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Geology", Topicable: cmi5.TopicClass, Package: &pkg.ID}
		_, err = admin.PostAdminTopics(ctx, body)
		e := apitest.Refused(t, err, 422)
		choices, _ := e.Details["choices"].([]any)
		if len(choices) != 8 || len(e.Errors["au"]) == 0 {
			t.Fatalf("no choices: %v", e)
		}
		body.Au = &pkg.Aus[1].ID
		topic := apitest.Must(admin.PostAdminTopics(ctx, body))(t)
		if v, _ := topic.Topicable.(map[string]any); v["title"] != "Geological Materials" {
			t.Fatalf("topic: %+v", topic)
		}
		// An update that sends au alone plays another AU of the package;
		// one that is not the package's is refused with the choices.
		changed := apitest.Must(admin.PatchAdminTopicsID(ctx, topic.ID, client.PatchAdminTopicsIDBody{Au: &pkg.Aus[2].ID}))(t)
		if v, _ := changed.Topicable.(map[string]any); v["title"] != pkg.Aus[2].Title {
			t.Fatalf("au changed to %q: %+v", pkg.Aus[2].Title, changed.Topicable)
		}
		_, err = admin.PatchAdminTopicsID(ctx, topic.ID, client.PatchAdminTopicsIDBody{Au: client.Ptr(int64(999999))})
		if e := apitest.Refused(t, err, 422); len(e.Errors["au"]) == 0 || e.Details["choices"] == nil {
			t.Fatalf("an au of no AU: %v", e)
		}
		// A bare cmi5.xml with relative AU URLs is refused, naming the URL.
		w.imported(t, "cmi5.xml", fixtures.Read(t, "cmi5/spec/simple-cmi5.xml"))
		_, err = upload(t, env, w.admin, "cmi5.xml", []byte(strings.Replace(masteryXML, "https://cdn.example.com/quiz.html", "quiz.html", 1)))
		if e := apitest.Refused(t, err, 422); !apitest.Says(e, "is relative") {
			t.Fatalf("relative bare: %v", e)
		}
	})
}

// session is a launched AU seen from the AU: its launch parameters, auth
// token and LMS.LaunchData's context template.
type session struct {
	env        *apitest.Env
	launch     map[string]string
	auth       string
	id         string
	activityID string
	template   map[string]any
}

// open launches the topic as w's learner and fetches the auth token, as
// an AU starts: the fetch URL answers the token once, then (with 200)
// cmi5's error object.
func open(t testing.TB, w *world, topic int64, mode string) *session {
	t.Helper()
	in := client.LaunchInput{}
	if mode != "" {
		in.LaunchMode = &mode
	}
	l := apitest.Must(w.env.UserClient(w.learner).PostCmi5LaunchID(context.Background(), topic, in))(t)
	u, err := url.Parse(l.URL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	s := &session{env: w.env, launch: map[string]string{}, id: l.SessionID}
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
	if again.Status != 200 || again.String("error-code") != "1" || again.String("auth-token") != "" ||
		!strings.HasPrefix(again.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("second fetch: %d %s", again.Status, again.Body)
	}
	return s
}

// launch opens a session and reads what an AU reads before initialized:
// LMS.LaunchData (its context template) and the learner preferences.
func launch(t testing.TB, w *world, topic int64, mode string) *session {
	t.Helper()
	s := open(t, w, topic, mode)
	ld := s.xapi("GET", s.stateURL(cmi5.LaunchDataID), nil)
	if ld.Status != 200 {
		t.Fatalf("LMS.LaunchData: %d %s", ld.Status, ld.Body)
	}
	s.template, _ = ld.Get("contextTemplate").(map[string]any)
	s.readPreferences(t)
	return s
}

func (s *session) readPreferences(t testing.TB) {
	t.Helper()
	if p := s.xapi("GET", "agents/profile?profileId="+cmi5.PreferencesID+"&agent="+url.QueryEscape(s.launch["actor"]), nil); p.Status != 200 {
		t.Fatalf("preferences: %d %s", p.Status, p.Body)
	}
}

// stateURL is the state API's address of one of the session's documents.
func (s *session) stateURL(id string) string {
	return "activities/state?stateId=" + url.QueryEscape(id) + "&activityId=" + url.QueryEscape(s.activityID) + "&agent=" +
		url.QueryEscape(s.launch["actor"]) + "&registration=" + s.launch["registration"]
}

func (s *session) xapi(method, path string, body any) *apitest.Response {
	return s.env.Do(apitest.Request{Method: method, Path: "/api/xapi/" + path, Body: body,
		Headers: map[string]string{"Authorization": "Basic " + s.auth, "X-Experience-API-Version": "1.0.3"}})
}

// statement is a cmi5 defined statement of the session: its context is
// LMS.LaunchData's contextTemplate with the registration and the cmi5
// category (and the moveon one).
func (s *session) statement(verb string, result map[string]any, moveOn bool) map[string]any {
	var actor any
	json.Unmarshal([]byte(s.launch["actor"]), &actor)
	ctx := map[string]any{}
	if s.template != nil {
		raw, _ := json.Marshal(s.template)
		json.Unmarshal(raw, &ctx)
	} else {
		ctx = map[string]any{"contextActivities": map[string]any{}, "extensions": map[string]any{cmi5.ExtSessionID: s.id}}
	}
	ctx["registration"] = s.launch["registration"]
	category := []any{map[string]any{"id": cmi5.CategoryCmi5}}
	if moveOn {
		category = append(category, map[string]any{"id": cmi5.CategoryMoveOn})
	}
	ctx["contextActivities"].(map[string]any)["category"] = category
	st := map[string]any{"id": uuid.NewString(), "actor": actor, "verb": map[string]any{"id": verb},
		"object":    map[string]any{"id": s.activityID, "objectType": "Activity"},
		"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "context": ctx}
	if result != nil {
		st["result"] = result
	}
	return st
}

// allowed is a cmi5 allowed statement of the session (no cmi5 category).
func (s *session) allowed() map[string]any {
	st := s.statement("http://adlnet.gov/expapi/verbs/experienced", nil, false)
	delete(st["context"].(map[string]any)["contextActivities"].(map[string]any), "category")
	return st
}

func (s *session) send(t testing.TB, want int, st map[string]any) *apitest.Response {
	t.Helper()
	res := s.xapi("POST", "statements", st)
	if res.Status != want {
		t.Fatalf("%v: want %d, got %d %s", st["verb"], want, res.Status, res.Body)
	}
	return res
}

// adminStatements queries the LRS as the tenant's admin.
func (w *world) adminStatements(t testing.TB, q url.Values) []map[string]any {
	t.Helper()
	res := w.env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements?" + q.Encode(), Token: w.admin.Token,
		Headers: map[string]string{"X-Experience-API-Version": "1.0.3"}})
	if res.Status != 200 {
		t.Fatalf("statements %v: %d %s", q, res.Status, res.Body)
	}
	list, _ := res.Get("statements").([]any)
	out := make([]map[string]any, len(list))
	for i, st := range list {
		out[i], _ = st.(map[string]any)
	}
	return out
}

// topicStatus is the learner's status in a topic: 1 complete, 2 in
// progress, 0 none.
func topicStatus(t testing.TB, w *world, topic int64) int {
	t.Helper()
	return w.env.Count(t, `SELECT COALESCE(MAX(status), 0) FROM topic_progress WHERE user_id = $1 AND topic_id = $2`, w.learner.ID, topic)
}

func TestLaunchAndSessionRules(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.imported(t, "course.zip", fixtures.Read(t, "cmi5/single_au_basic_responsive.zip"))
		topic := w.topic(t, pkg.ID, nil, "Geology")
		s := launch(t, w, topic, "")

		// The AU's page is served from the launch URL's signed link.
		lres := apitest.Must(env.UserClient(w.learner).PostCmi5LaunchID(context.Background(), topic, client.LaunchInput{}))(t)
		u, _ := url.Parse(lres.URL)
		page := env.Do(apitest.Request{Method: "GET", Path: u.Path})
		if page.Status != 200 || !strings.Contains(string(page.Body), "<html") {
			t.Fatalf("AU page: %d", page.Status)
		}
		// That launch abandoned the first session (never initialized).
		if s.xapi("GET", "statements", nil).Status != 401 {
			t.Fatal("the abandoned session's token still works")
		}
		s = launch(t, w, topic, "")
		if s.launch["registration"] != lres.Registration {
			t.Fatal("registration not reused across sessions")
		}

		// LMS.LaunchData is there for the AU (launch read it, and the
		// preferences).
		ld := s.xapi("GET", s.stateURL(cmi5.LaunchDataID), nil)
		if ld.Status != 200 || ld.String("launchMode") != "Normal" || ld.String("moveOn") != "CompletedOrPassed" ||
			ld.Get("contextTemplate.extensions") == nil {
			t.Fatalf("launch data: %d %s", ld.Status, ld.Body)
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
		// The token ended with the session.
		s.send(t, 401, s.allowed())

		// Completing the AU (moveOn CompletedOrPassed) completed the topic.
		if n := topicStatus(t, w, topic); n != 1 {
			t.Fatalf("topic status %d, want complete", n)
		}
		// The course is satisfied once: the LMS said so in the LRS.
		reg := s.launch["registration"]
		if n := len(w.adminStatements(t, url.Values{"verb": {cmi5.VerbSatisfied}, "registration": {reg}})); n != 1 {
			t.Fatalf("satisfied statements: %d", n)
		}

		// A third session that never terminates is abandoned by the next
		// launch, with an abandoned statement.
		s3 := launch(t, w, topic, "")
		s3.send(t, 200, s3.statement(cmi5.VerbInitialized, nil, false))
		launch(t, w, topic, "")
		if n := len(w.adminStatements(t, url.Values{"verb": {cmi5.VerbAbandoned}, "registration": {reg}})); n != 3 {
			t.Fatalf("abandoned statements: want 3 (the first, the page-serving and the third session), got %d", n)
		}
		s3.send(t, 401, s3.statement(cmi5.VerbTerminated, dur, false))
	})
}

// masteryTopic imports masteryXML and makes a topic of its AU.
func masteryTopic(t *testing.T, w *world) int64 {
	t.Helper()
	return w.topic(t, w.imported(t, "cmi5.xml", []byte(masteryXML)).ID, nil, "Quiz")
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
		ld := w.adminXAPI("GET", s.stateURL(cmi5.LaunchDataID), nil, nil)
		if ld.Number("masteryScore") != 0.8 || ld.String("launchParameters") != "level=2" ||
			ld.Get("contextTemplate.extensions").(map[string]any)[cmi5.ExtMasteryScore] != 0.8 {
			t.Fatalf("launch data: %s", ld.Body)
		}
	})
}

// topicSeconds is the learner's time on a topic, as learning keeps it.
func topicSeconds(t *testing.T, w *world, topic int64) int {
	t.Helper()
	return w.env.Count(t, `SELECT COALESCE(MAX(seconds), 0) FROM topic_progress WHERE user_id = $1 AND topic_id = $2`,
		w.learner.ID, topic)
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
		if n := topicStatus(t, w, topic); n != 2 {
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
			return len(w.adminStatements(t, url.Values{"verb": {cmi5.VerbAbandoned}, "registration": {reg}}))
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
// the waived statement in the learner's registration about the launch's
// activityId, with its reason, success and completion and the moveon
// category, the topic complete, the course satisfied; a second waiver is
// a conflict, learners may not waive, and a wrong reason or user is
// refused.
func TestWaived(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		admin := env.UserClient(w.admin)
		body := client.WaiveInput{User: w.learner.ID, Reason: cmi5.ReasonTestedOut}
		_, err := env.UserClient(w.learner).PostCmi5WaiveID(ctx, topic, body)
		apitest.Refused(t, err, 403)
		_, err = admin.PostCmi5WaiveID(ctx, topic, client.WaiveInput{User: w.learner.ID, Reason: "Bored"})
		apitest.Refused(t, err, 422)
		_, err = admin.PostCmi5WaiveID(ctx, topic, client.WaiveInput{User: 999999, Reason: cmi5.ReasonAdmin})
		apitest.Refused(t, err, 422)
		reg := apitest.Must(admin.PostCmi5WaiveID(ctx, topic, body))(t).Registration
		_, err = admin.PostCmi5WaiveID(ctx, topic, body)
		apitest.Refused(t, err, 409)

		list := w.adminStatements(t, url.Values{"verb": {cmi5.VerbWaived}, "registration": {reg}})
		if len(list) != 1 {
			t.Fatalf("waived statements: %v", list)
		}
		st := list[0]
		result := st["result"].(map[string]any)
		ext, _ := result["extensions"].(map[string]any)
		cat := st["context"].(map[string]any)["contextActivities"].(map[string]any)["category"].([]any)
		if result["success"] != true || result["completion"] != true || ext[cmi5.ExtReason] != cmi5.ReasonTestedOut || len(cat) != 2 {
			t.Fatalf("waived: %v", st)
		}
		// The block and the course are satisfied; the topic is complete.
		if n := env.Count(t, `SELECT COUNT(*) FROM cmi5_satisfied WHERE registration = $1`, reg); n != 2 {
			t.Fatalf("satisfied block and course: %d", n)
		}
		if n := topicStatus(t, w, topic); n != 1 {
			t.Fatalf("topic status %d, want complete", n)
		}
		// The learner's next launch reuses the waived registration, and
		// its activityId is the waived statement's object.
		s := launch(t, w, topic, "")
		if s.launch["registration"] != reg || st["object"].(map[string]any)["id"] != s.activityID {
			t.Fatalf("the launch after the waiver: %v, waived %v", s.launch, st["object"])
		}
	})
}

// TestAbandonedByOperator: a course editor abandons a learner's open
// session (cmi5 section 9.3.6): one abandoned statement about the
// launch's activityId with the session id and a duration, the token ends;
// with no open session the answer is 409; a learner may not abandon.
func TestAbandonedByOperator(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		w := newWorld(t, env)
		topic := masteryTopic(t, w)
		admin := env.UserClient(w.admin)
		body := client.AbandonInput{User: w.learner.ID}
		_, err := admin.PostCmi5AbandonID(ctx, topic, body)
		apitest.Refused(t, err, 409)
		s := launch(t, w, topic, "")
		s.send(t, 200, s.statement(cmi5.VerbInitialized, nil, false))
		_, err = env.UserClient(w.learner).PostCmi5AbandonID(ctx, topic, body)
		apitest.Refused(t, err, 403)
		env.Clock.Advance(30 * time.Second)
		out := apitest.Must(admin.PostCmi5AbandonID(ctx, topic, body))(t)
		if out.Registration != s.launch["registration"] || len(out.Sessions) != 1 || out.Sessions[0] != s.id {
			t.Fatalf("abandoned: %+v", out)
		}
		list := w.adminStatements(t, url.Values{"registration": {out.Registration}, "ascending": {"true"}})
		if len(list) != 3 || list[2]["verb"].(map[string]any)["id"] != cmi5.VerbAbandoned {
			t.Fatalf("statements: %v", list)
		}
		ab := list[2]
		if ab["object"].(map[string]any)["id"] != s.activityID || ab["result"].(map[string]any)["duration"] == nil ||
			ab["context"].(map[string]any)["extensions"].(map[string]any)[cmi5.ExtSessionID] != s.id {
			t.Fatalf("abandoned statement: %v", ab)
		}
		s.send(t, 401, s.allowed())
		if res := s.xapi("GET", s.stateURL(cmi5.LaunchDataID), nil); res.Status != 401 {
			t.Fatalf("state after the abandonment: %d", res.Status)
		}
		_, err = admin.PostCmi5AbandonID(ctx, topic, body)
		apitest.Refused(t, err, 409)
	})
}
