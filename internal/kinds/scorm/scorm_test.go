package scorm_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

// world is a published course authored by a tutor, with one lesson and
// an assigned learner.
type world struct {
	env                   *apitest.Env
	admin, tutor, learner *apitest.User
	outsider              *apitest.User
	course, lesson        int64
}

func newWorld(t testing.TB, env *apitest.Env) *world {
	t.Helper()
	w := &world{env: env, admin: env.As("admin"), tutor: env.NewUser("tutor"), learner: env.NewUser("student"),
		outsider: env.NewUser("student")}
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx, now := context.Background(), env.Clock.Now()
	// Course rows belong to package courses; a test writes them directly.
	err := tn.DB.QueryRowContext(ctx, `INSERT INTO courses (title, status, created_at, updated_at)
		VALUES ('SCORM course', 'published', $1, $1) RETURNING id`, now).Scan(&w.course)
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
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// upload sends a package as u (nil: anonymous).
func upload(t testing.TB, env *apitest.Env, u *apitest.User, name string, data []byte) (*client.ScormPackage, error) {
	return as(env, u).PostAdminScormUpload(t.Context(), client.PostAdminScormUploadForm{
		Package: &client.File{Name: name, Content: bytes.NewReader(data)}})
}

// as is the typed client of u, or the anonymous one for nil.
func as(env *apitest.Env, u *apitest.User) *client.Client {
	if u == nil {
		return env.Client("", "")
	}
	return env.UserClient(u)
}

// scormTopic has the world's tutor make a topic of the package playing
// sco (0: none chosen) and returns its id.
func scormTopic(t testing.TB, w *world, title string, pkg, sco int64) int64 {
	t.Helper()
	body := client.PostAdminTopicsBody{Lesson: w.lesson, Title: title, Topicable: scorm.Class, Package: &pkg}
	if sco != 0 {
		body.Sco = sco
	}
	return apitest.Must(w.env.UserClient(w.tutor).PostAdminTopics(t.Context(), body))(t).ID
}

func fixture(t testing.TB, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(fixtures.Path(t, "scorm/"+rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, body := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	zw.Close()
	return b.Bytes()
}

func TestUploadFixtures(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		golf := apitest.Must(upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")))(t)
		if golf.Version != "1.2" || golf.Title != "Golf Explained - Run-time Basic Calls" || len(golf.Scos) == 0 ||
			golf.Scos[0].Launch != "shared/launchpage.html" || golf.Scos[0].Identifier != "item_1" {
			t.Fatalf("golf 1.2: %+v", golf)
		}
		g2004 := apitest.Must(upload(t, env, w.admin, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip")))(t)
		if g2004.Version != "2004 3rd Edition" {
			t.Fatalf("golf 2004: %+v", g2004)
		}
		multi := apitest.Must(upload(t, env, w.tutor, "multi.zip", fixture(t, "multi-sco-scorm12.zip")))(t)
		if len(multi.Scos) != 18 || multi.Scos[5].Launch != "shared/assessmenttemplate.html?questions=Playing" {
			t.Fatalf("multi: %+v", multi)
		}
		for name, want := range map[string]string{
			"MalformedXml_SCORM12.zip":                            "not well-formed XML",
			"MissingLaunchUrl_SCORM12.zip":                        "missing its required launch URL",
			"MissingRequiredFields_SCORM12.zip":                   "missing its required <title> element",
			"InvalidMissingOrgIdentifier_SCORM20043rdEdition.zip": "has no identifier attribute",
			"InvalidFileReferences_SCORM12.zip":                   "is not in the package",
		} {
			_, err := upload(t, env, w.tutor, name, fixture(t, "invalid/"+name))
			if e := apitest.Refused(t, err, 422); !strings.Contains(e.Message, want) {
				t.Errorf("%s: %v", name, e)
			}
		}
		tolerated := apitest.Must(upload(t, env, w.tutor, "x.zip", fixture(t, "invalid/ItemWithNonExistentResourceId_SCORM12.zip")))(t)
		if len(tolerated.Scos) != 1 || len(tolerated.Warnings) == 0 || !strings.Contains(tolerated.Warnings[0], "non_existent_resource") {
			t.Errorf("tolerated: %+v", tolerated)
		}

		_, err := upload(t, env, w.learner, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip"))
		apitest.Refused(t, err, 403)
		_, err = upload(t, env, nil, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip"))
		apitest.Refused(t, err, 401)
		for _, c := range []struct {
			what, name, want string
			data             []byte
		}{
			{"zip slip", "slip.zip", "unsafe path", zipOf(t, map[string]string{"imsmanifest.xml": "<manifest/>", "../evil.html": "x"})},
			{"not a zip", "no.zip", "not a readable ZIP", []byte("not a zip")},
			{"nested manifest", "nested.zip", "no imsmanifest.xml at its root", zipOf(t, map[string]string{"course/imsmanifest.xml": "<manifest/>"})},
		} {
			_, err := upload(t, env, w.tutor, c.name, c.data)
			if e := apitest.Refused(t, err, 422); !strings.Contains(e.Message, c.want) {
				t.Errorf("%s: %v", c.what, e)
			}
		}
	})
}

// session is a launched SCO as the player uses it.
type session struct {
	sco   int64
	token string
}

func launch(t testing.TB, env *apitest.Env, u *apitest.User, sco, topic int64) (session, *client.ScoLaunch) {
	t.Helper()
	l := apitest.Must(env.UserClient(u).PostScormLaunchID(t.Context(), sco, client.LaunchInputBody{TopicID: topic}))(t)
	return session{sco: sco, token: l.Token}, l
}

// launchRefused tries a launch and fails the test unless it is refused
// with status want.
func launchRefused(t testing.TB, env *apitest.Env, u *apitest.User, sco, topic int64, want int) *client.Error {
	t.Helper()
	_, err := env.UserClient(u).PostScormLaunchID(t.Context(), sco, client.LaunchInputBody{TopicID: topic})
	return apitest.Refused(t, err, want)
}

// do sends a raw request to the session's tracking route; only the
// wire-level checks use it (bodies the typed client cannot send).
func (s session) do(env *apitest.Env, method, path string, body any) *apitest.Response {
	return env.Do(apitest.Request{Method: method, Path: "/api/scorm/tracks/" + fmt.Sprint(s.sco) + path, Body: body,
		Headers: map[string]string{scorm.TokenHeader: s.token}})
}

// The tracking routes take the session's token, no bearer token.

func (s session) stored(t testing.TB, env *apitest.Env) (*client.Stored, error) {
	return env.Client("", "").GetScormTracksID(t.Context(), s.sco, client.GetScormTracksIDParams{XLmsTrackingToken: s.token})
}

func (s session) send(t testing.TB, env *apitest.Env, in client.CommitInput) (*client.CommitResult, error) {
	return env.Client("", "").PostScormTracksIDCommit(t.Context(), s.sco, client.PostScormTracksIDCommitParams{XLmsTrackingToken: s.token}, in)
}

func (s session) navigate(t testing.TB, env *apitest.Env, in client.NavigateInputBody) (*client.ScoLaunch, error) {
	return env.Client("", "").PostScormTracksIDNavigate(t.Context(), s.sco, client.PostScormTracksIDNavigateParams{XLmsTrackingToken: s.token}, in)
}

// commit commits the model and fails the test unless it is taken.
func (s session) commit(t testing.TB, env *apitest.Env, seq int64, cmi map[string]any) *client.CommitResult {
	t.Helper()
	res, err := s.send(t, env, client.CommitInput{Seq: seq, Cmi: cmi})
	if err != nil {
		t.Fatalf("commit %d: %v", seq, err)
	}
	return res
}

// player is the player page of the session, which takes the token as
// form data; the page is HTML, its runtime data a JSON script in it.
func (s session) player(t testing.TB, env *apitest.Env) string {
	t.Helper()
	res, err := env.Client("", "").PostScormPlayerID(t.Context(), s.sco, strings.NewReader("token="+url.QueryEscape(s.token)),
		"application/x-www-form-urlencoded")
	if err != nil {
		t.Fatalf("player: %v", err)
	}
	defer res.Body.Close()
	page, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(page)
}

func topicStatus(t testing.TB, env *apitest.Env, u *apitest.User, course, topic int64) int64 {
	t.Helper()
	p := apitest.Must(env.UserClient(u).GetCoursesProgressID(t.Context(), course))(t)
	for _, tp := range p.Topics {
		if tp.TopicID == topic {
			return tp.Status
		}
	}
	t.Fatalf("topic %d not in progress %+v", topic, p)
	return -1
}

// tracks lists u's SCORM tracks in the course.
func tracks(t testing.TB, env *apitest.Env, u *apitest.User, course int64) []client.Track {
	t.Helper()
	return apitest.Must(env.UserClient(u).GetCoursesIDScorm(t.Context(), course, client.GetCoursesIDScormParams{}))(t)
}

// num is an optional number, or -1 when it is missing.
func num(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}

func TestPrerequisitesPackage(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		w := newWorld(t, env)
		tutor := env.UserClient(w.tutor)
		pkg := apitest.Must(upload(t, env, w.tutor, "p.zip", fixture(t, "PrerequisitesTest_SCORM12.zip")))(t)
		if len(pkg.Scos) < 4 {
			t.Fatalf("upload: %+v", pkg)
		}
		scos := []int64{pkg.Scos[0].ID, pkg.Scos[1].ID, pkg.Scos[2].ID, pkg.Scos[3].ID}
		create := client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Modules", Topicable: scorm.Class, Package: &pkg.ID}
		// Several SCOs and no sco: 422 with the choices.
		_, err := tutor.PostAdminTopics(ctx, create)
		e := apitest.Refused(t, err, 422)
		if apitest.LookupString(e.Details, "choices.1.identifier") != "module2" || apitest.Lookup(e.Details, "package") != float64(pkg.ID) ||
			e.Code != "sco_required" {
			t.Fatalf("choices: %v %v", e, e.Details)
		}
		create.Sco = pkg.Scos[0].ID
		topic := apitest.Must(tutor.PostAdminTopics(ctx, create))(t).ID

		// Only the topic's learners (and its editors) launch.
		launchRefused(t, env, w.outsider, scos[0], topic, 403)
		// module2 needs module1 first.
		launchRefused(t, env, w.learner, scos[1], topic, 403)
		s1, l1 := launch(t, env, w.learner, scos[0], topic)
		if l1.Entry != "ab-initio" || l1.Attempt != 1 || !strings.HasPrefix(l1.PlayerURL, "/api/scorm/player/") {
			t.Fatalf("launch: %+v", l1)
		}

		// The tracking token opens the SCO's tracking routes only. Raw
		// requests: the point is the token sent, as the header or as a
		// bearer token, to routes that do not take it.
		for _, r := range []apitest.Request{
			{Method: "GET", Path: "/api/profile/me"}, {Method: "GET", Path: "/api/courses/" + fmt.Sprint(w.course) + "/scorm"},
			{Method: "POST", Path: "/api/scorm/launch/" + fmt.Sprint(scos[0]), Body: map[string]any{"topic_id": topic}},
		} {
			r.Headers = map[string]string{scorm.TokenHeader: s1.token}
			if res := env.Do(r); res.Status != 401 {
				t.Errorf("tracking token on %s %s: %d", r.Method, r.Path, res.Status)
			}
			r.Headers, r.Token = nil, s1.token
			if res := env.Do(r); res.Status != 401 {
				t.Errorf("tracking token as bearer on %s %s: %d", r.Method, r.Path, res.Status)
			}
		}
		other := session{sco: scos[1], token: s1.token}
		_, err = other.stored(t, env)
		apitest.Refused(t, err, 403)
		_, err = session{sco: scos[0], token: s1.token + "0"}.stored(t, env)
		apitest.Refused(t, err, 401)

		// The player page takes the token as form data and carries the
		// launch data of the manifest.
		page := s1.player(t, env)
		if !strings.Contains(page, `cmi.student_data.mastery_score`) || !strings.Contains(page, `"cmi.core.credit":"credit"`) ||
			!strings.Contains(page, `Module 2: Basic Concepts`) {
			t.Fatalf("player: %s", page)
		}
		// The page's signed content links are fetched raw, as the browser
		// does: whole, not split into the route's parameters.
		content := regexp.MustCompile(`/api/scorm/content/[^"]+module1.html`).FindString(page)
		if res := env.Do(apitest.Request{Method: "GET", Path: content}); res.Status != 200 || !strings.Contains(string(res.Body), "Module 1") {
			t.Errorf("content %q: %d %s", content, res.Status, res.Body)
		}
		if res := env.Do(apitest.Request{Method: "GET", Path: strings.Replace(content, "/module1.html", "/../imsmanifest.xml", 1)}); res.Status == 200 {
			t.Errorf("content outside the signature: %d", res.Status)
		}
		forged := regexp.MustCompile(`/[0-9a-f]{64}/`).ReplaceAllString(content, "/"+strings.Repeat("0", 64)+"/")
		if res := env.Do(apitest.Request{Method: "GET", Path: forged}); res.Status != 403 {
			t.Errorf("forged content link: %d", res.Status)
		}

		// Ordered, idempotent commits. The session time counts as sent
		// when it fits in the time since the launch.
		env.Clock.Advance(2 * time.Minute)
		s1.commit(t, env, 2, map[string]any{"cmi.core.lesson_status": "incomplete", "cmi.core.lesson_location": "page3",
			"cmi.suspend_data": "newer", "cmi.core.exit": "suspend", "cmi.core.session_time": "00:01:30"})
		late := s1.commit(t, env, 1, map[string]any{"cmi.core.lesson_status": "incomplete", "cmi.suspend_data": "older"})
		again := s1.commit(t, env, 2, map[string]any{"cmi.suspend_data": "replayed"})
		if late.Applied || again.Applied || late.Seq != 2 {
			t.Errorf("late %+v, repeated %+v", late, again)
		}
		stored := apitest.Must(s1.stored(t, env))(t)
		if cmi := stored.Cmi; cmi["cmi.suspend_data"] != "newer" || cmi["cmi.core.lesson_location"] != "page3" || stored.Seq != 2 {
			t.Fatalf("stored: %+v", stored)
		}

		// Suspended: the next launch resumes with the data.
		s1b, l1b := launch(t, env, w.learner, scos[0], topic)
		if l1b.Entry != "resume" || l1b.Attempt != 1 {
			t.Fatalf("resume: %+v", l1b)
		}
		// The old session's commits are late now.
		if res := s1.commit(t, env, 3, map[string]any{"cmi.suspend_data": "old tab"}); res.Applied {
			t.Errorf("old session commit: %+v", res)
		}
		page = s1b.player(t, env)
		if !strings.Contains(page, `"cmi.suspend_data":"newer"`) || !strings.Contains(page, `"cmi.core.entry":"resume"`) ||
			!strings.Contains(page, `"cmi.core.total_time":"0000:01:30"`) {
			t.Fatalf("resumed player: %s", page)
		}
		if got := topicStatus(t, env, w.learner, w.course, topic); got == 1 {
			t.Fatal("topic complete before the SCO")
		}
		// masteryscore 80: a raw score of 85 passes though the SCO said
		// incomplete; the topic completes.
		env.Clock.Advance(time.Minute)
		done := s1b.commit(t, env, 1, map[string]any{"cmi.core.lesson_status": "incomplete", "cmi.core.score.raw": "85",
			"cmi.core.exit": "", "cmi.core.session_time": "00:00:30", "cmi.suspend_data": "newer"})
		if done.Status != "passed" {
			t.Fatalf("mastery: %+v", done)
		}
		if got := topicStatus(t, env, w.learner, w.course, topic); got != 1 {
			t.Fatalf("topic status %v after passing", got)
		}
		if tr := tracks(t, env, w.learner, w.course); len(tr) == 0 || tr[0].Status != "passed" || num(tr[0].Score.Raw) != 85 || tr[0].Seconds != 120 {
			t.Errorf("tracks: %+v", tr)
		}
		// The course's tutor reads the learner's tracks; another learner does not.
		of := client.GetCoursesIDScormParams{UserID: &w.learner.ID}
		if tr := apitest.Must(tutor.GetCoursesIDScorm(ctx, w.course, of))(t); len(tr) == 0 || tr[0].Status != "passed" {
			t.Errorf("tutor reads: %+v", tr)
		}
		_, err = env.UserClient(w.outsider).GetCoursesIDScorm(ctx, w.course, of)
		apitest.Refused(t, err, 403)

		// module1 done: continue reaches module2 (its prerequisite met),
		// module3 still needs module2.
		next := apitest.Must(s1b.navigate(t, env, client.NavigateInputBody{Action: "continue"}))(t)
		if next.Sco.Identifier != "module2" {
			t.Fatalf("continue: %+v", next)
		}
		_, err = s1b.navigate(t, env, client.NavigateInputBody{Action: "choice", Target: client.Ptr("module3")})
		apitest.Refused(t, err, 403)

		// A normal exit after the end: a new attempt starts clean.
		if _, l1c := launch(t, env, w.learner, scos[0], topic); l1c.Attempt != 2 || l1c.Entry != "ab-initio" {
			t.Errorf("new attempt: %+v", l1c)
		}
	})
}

func TestGolf2004Track(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := apitest.Must(upload(t, env, w.tutor, "g.zip", fixture(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip")))(t)
		topic := scormTopic(t, w, "Golf", pkg.ID, 0)
		sco := pkg.Scos[0].ID
		s, _ := launch(t, env, w.learner, sco, topic)
		long := strings.Repeat("x", 64000)
		env.Clock.Advance(2 * time.Minute)
		s.commit(t, env, 1, map[string]any{"cmi.completion_status": "incomplete", "cmi.location": "5", "cmi.suspend_data": long,
			"cmi.exit": "suspend", "cmi.session_time": "PT1M5S", "cmi.interactions.0.id": "q1", "cmi.interactions.0.result": "correct",
			"cmi.learner_preference.audio_level": "0.5", "adl.nav.request": "_none_", "cmi.objectives": map[string]any{},
			"cmi.comments_from_learner": []any{}})
		_, err := s.send(t, env, client.CommitInput{Seq: 2, Cmi: map[string]any{"cmi.suspend_data": long + "y"}})
		apitest.Refused(t, err, 422) // suspend_data over 64,000
		s2, l2 := launch(t, env, w.learner, sco, topic)
		if l2.Entry != "resume" {
			t.Fatalf("resume: %+v", l2)
		}
		st := apitest.Must(s2.stored(t, env))(t)
		if cmi := st.Cmi; cmi["cmi.suspend_data"] != long || cmi["cmi.interactions.0.result"] != "correct" || cmi["cmi.location"] != "5" ||
			cmi["cmi.objectives"] != nil {
			t.Fatalf("stored 2004 model: %.300v", st.Cmi)
		}
		env.Clock.Advance(time.Minute)
		res := s2.commit(t, env, 1, map[string]any{"cmi.completion_status": "completed", "cmi.success_status": "passed",
			"cmi.score.scaled": "0.9", "cmi.score.raw": "90", "cmi.exit": "normal", "cmi.session_time": "PT10S"})
		if res.Status != "passed" || topicStatus(t, env, w.learner, w.course, topic) != 1 {
			t.Fatalf("complete: %+v", res)
		}
		if tr := tracks(t, env, w.learner, w.course); len(tr) == 0 || num(tr[0].Score.Scaled) != 0.9 || tr[0].CompletionStatus != "completed" ||
			tr[0].Seconds != 75 {
			t.Errorf("tracks: %+v", tr)
		}
		// An author previews without access: nothing is recorded.
		launch(t, env, w.tutor, sco, topic)
	})
}

// TestTopicWithPackageFile creates a topic with the package file itself.
// The topic route's description lists package as the interactive kind's
// package id, so the file goes as a field beyond those listed.
func TestTopicWithPackageFile(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		v := apitest.Must(env.UserClient(w.tutor).PostAdminTopicsMultipart(t.Context(), client.PostAdminTopicsForm{Lesson: w.lesson,
			Title: "Golf", Topicable: scorm.Class, ExtraFiles: map[string]client.File{
				"package": {Name: "golf.zip", Content: bytes.NewReader(fixture(t, "RuntimeBasicCalls_SCORM12.zip"))}}}))(t)
		if v.TopicableType != scorm.Class {
			t.Fatalf("create: %+v", v)
		}
	})
}
