package scorm_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

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

func upload(t testing.TB, env *apitest.Env, u *apitest.User, name string, data []byte) *apitest.Response {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	fw, _ := mw.CreateFormFile("package", name)
	fw.Write(data)
	mw.Close()
	token := ""
	if u != nil {
		token = u.Token
	}
	return env.Do(apitest.Request{Method: "POST", Path: "/api/admin/scorm/upload", Token: token, Body: b.Bytes(), Type: mw.FormDataContentType()})
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

func n(v float64) string { return fmt.Sprint(int64(v)) }

func TestUploadFixtures(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		golf := upload(t, env, w.tutor, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip"))
		if golf.Status != 201 || golf.String("data.version") != "1.2" || golf.String("data.title") != "Golf Explained - Run-time Basic Calls" ||
			golf.String("data.scos.0.launch") != "shared/launchpage.html" || golf.String("data.scos.0.identifier") != "item_1" {
			t.Fatalf("golf 1.2: %d %s", golf.Status, golf.Body)
		}
		g2004 := upload(t, env, w.admin, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip"))
		if g2004.Status != 201 || g2004.String("data.version") != "2004 3rd Edition" {
			t.Fatalf("golf 2004: %d %s", g2004.Status, g2004.Body)
		}
		multi := upload(t, env, w.tutor, "multi.zip", fixture(t, "multi-sco-scorm12.zip"))
		if multi.Status != 201 || len(multi.Get("data.scos").([]any)) != 18 || multi.String("data.scos.5.launch") != "shared/assessmenttemplate.html?questions=Playing" {
			t.Fatalf("multi: %d %s", multi.Status, multi.Body)
		}
		for name, want := range map[string]string{
			"MalformedXml_SCORM12.zip":                            "not well-formed XML",
			"MissingLaunchUrl_SCORM12.zip":                        "missing its required launch URL",
			"MissingRequiredFields_SCORM12.zip":                   "missing its required <title> element",
			"InvalidMissingOrgIdentifier_SCORM20043rdEdition.zip": "has no identifier attribute",
			"InvalidFileReferences_SCORM12.zip":                   "is not in the package",
		} {
			res := upload(t, env, w.tutor, name, fixture(t, "invalid/"+name))
			if res.Status != 422 || !strings.Contains(res.String("message"), want) {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
		tolerated := upload(t, env, w.tutor, "x.zip", fixture(t, "invalid/ItemWithNonExistentResourceId_SCORM12.zip"))
		if tolerated.Status != 201 || len(tolerated.Get("data.scos").([]any)) != 1 || !strings.Contains(tolerated.String("data.warnings.0"), "non_existent_resource") {
			t.Errorf("tolerated: %d %s", tolerated.Status, tolerated.Body)
		}

		if res := upload(t, env, w.learner, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")); res.Status != 403 {
			t.Errorf("learner upload: %d", res.Status)
		}
		if res := upload(t, env, nil, "golf.zip", fixture(t, "RuntimeBasicCalls_SCORM12.zip")); res.Status != 401 {
			t.Errorf("anonymous upload: %d", res.Status)
		}
		slip := zipOf(t, map[string]string{"imsmanifest.xml": "<manifest/>", "../evil.html": "x"})
		if res := upload(t, env, w.tutor, "slip.zip", slip); res.Status != 422 || !strings.Contains(res.String("message"), "unsafe path") {
			t.Errorf("zip slip: %d %s", res.Status, res.Body)
		}
		if res := upload(t, env, w.tutor, "no.zip", []byte("not a zip")); res.Status != 422 || !strings.Contains(res.String("message"), "not a readable ZIP") {
			t.Errorf("not a zip: %d %s", res.Status, res.Body)
		}
		nested := zipOf(t, map[string]string{"course/imsmanifest.xml": "<manifest/>"})
		if res := upload(t, env, w.tutor, "nested.zip", nested); res.Status != 422 || !strings.Contains(res.String("message"), "no imsmanifest.xml at its root") {
			t.Errorf("nested manifest: %d %s", res.Status, res.Body)
		}
	})
}

// session is a launched SCO as the player uses it.
type session struct {
	sco, token string
}

func launch(t testing.TB, env *apitest.Env, u *apitest.User, sco, topic string, want int) (session, *apitest.Response) {
	t.Helper()
	res := env.Call(t, want, "POST", "/api/scorm/launch/"+sco, u.Token, map[string]any{"topic_id": json(topic)})
	return session{sco: sco, token: res.String("data.token")}, res
}

type json string

func (j json) MarshalJSON() ([]byte, error) { return []byte(j), nil }

func (s session) do(env *apitest.Env, method, path string, body any) *apitest.Response {
	return env.Do(apitest.Request{Method: method, Path: "/api/scorm/tracks/" + s.sco + path, Body: body,
		Headers: map[string]string{scorm.TokenHeader: s.token}})
}

func (s session) commit(t testing.TB, env *apitest.Env, seq int, cmi map[string]any) *apitest.Response {
	t.Helper()
	res := s.do(env, "POST", "/commit", map[string]any{"seq": seq, "cmi": cmi})
	if res.Status != 200 {
		t.Fatalf("commit %d: %d %s", seq, res.Status, res.Body)
	}
	return res
}

func topicStatus(t testing.TB, env *apitest.Env, u *apitest.User, course int64, topic string) float64 {
	t.Helper()
	res := env.Call(t, 200, "GET", "/api/courses/progress/"+n(float64(course)), u.Token, nil)
	for _, tp := range res.Get("data.topics").([]any) {
		m := tp.(map[string]any)
		if n(m["topic_id"].(float64)) == topic {
			return m["status"].(float64)
		}
	}
	t.Fatalf("topic %s not in progress %s", topic, res.Body)
	return -1
}

func TestPrerequisitesPackage(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := upload(t, env, w.tutor, "p.zip", fixture(t, "PrerequisitesTest_SCORM12.zip"))
		if pkg.Status != 201 {
			t.Fatalf("upload: %s", pkg.Body)
		}
		scos := []string{n(pkg.Number("data.scos.0.id")), n(pkg.Number("data.scos.1.id")), n(pkg.Number("data.scos.2.id")), n(pkg.Number("data.scos.3.id"))}
		create := map[string]any{"lesson": w.lesson, "title": "Modules", "topicable": scorm.Class, "package": pkg.Number("data.id")}
		// Several SCOs and no sco: 422 with the choices.
		res := env.Call(t, 422, "POST", "/api/admin/topics", w.tutor.Token, create)
		if res.String("details.choices.1.identifier") != "module2" || res.Number("details.package") != pkg.Number("data.id") || res.String("error") != "sco_required" {
			t.Fatalf("choices: %s", res.Body)
		}
		create["sco"] = pkg.Number("data.scos.0.id")
		topicRes := env.Call(t, 201, "POST", "/api/admin/topics", w.tutor.Token, create)
		topic := n(topicRes.Number("data.id"))

		// Only the topic's learners (and its editors) launch.
		launch(t, env, w.outsider, scos[0], topic, 403)
		// module2 needs module1 first.
		launch(t, env, w.learner, scos[1], topic, 403)
		s1, l1 := launch(t, env, w.learner, scos[0], topic, 200)
		if l1.String("data.entry") != "ab-initio" || l1.Number("data.attempt") != 1 || !strings.HasPrefix(l1.String("data.player_url"), "/api/scorm/player/") {
			t.Fatalf("launch: %s", l1.Body)
		}

		// The tracking token opens the SCO's tracking routes only.
		for _, r := range []apitest.Request{
			{Method: "GET", Path: "/api/profile/me"}, {Method: "GET", Path: "/api/courses/" + n(float64(w.course)) + "/scorm"},
			{Method: "POST", Path: "/api/scorm/launch/" + scos[0], Body: map[string]any{"topic_id": json(topic)}},
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
		if res := other.do(env, "GET", "", nil); res.Status != 403 {
			t.Errorf("token on another SCO: %d", res.Status)
		}
		if res := (session{sco: scos[0], token: s1.token + "0"}).do(env, "GET", "", nil); res.Status != 401 {
			t.Errorf("forged token: %d", res.Status)
		}

		// The player page takes the token as form data and carries the
		// launch data of the manifest.
		page := env.Do(apitest.Request{Method: "POST", Path: "/api/scorm/player/" + scos[0],
			Body: "token=" + url.QueryEscape(s1.token), Type: "application/x-www-form-urlencoded"})
		if page.Status != 200 || !strings.Contains(string(page.Body), `cmi.student_data.mastery_score`) ||
			!strings.Contains(string(page.Body), `"cmi.core.credit":"credit"`) ||
			!strings.Contains(string(page.Body), `Module 2: Basic Concepts`) {
			t.Fatalf("player: %d %s", page.Status, page.Body)
		}
		content := regexp.MustCompile(`/api/scorm/content/[^"]+module1.html`).FindString(string(page.Body))
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
		if late.Get("data.applied") != false || again.Get("data.applied") != false || late.Number("data.seq") != 2 {
			t.Errorf("late %s, repeated %s", late.Body, again.Body)
		}
		stored := s1.do(env, "GET", "", nil)
		if cmi := stored.Get("data.cmi").(map[string]any); cmi["cmi.suspend_data"] != "newer" || cmi["cmi.core.lesson_location"] != "page3" || stored.Number("data.seq") != 2 {
			t.Fatalf("stored: %s", stored.Body)
		}

		// Suspended: the next launch resumes with the data.
		s1b, l1b := launch(t, env, w.learner, scos[0], topic, 200)
		if l1b.String("data.entry") != "resume" || l1b.Number("data.attempt") != 1 {
			t.Fatalf("resume: %s", l1b.Body)
		}
		// The old session's commits are late now.
		if res := s1.commit(t, env, 3, map[string]any{"cmi.suspend_data": "old tab"}); res.Get("data.applied") != false {
			t.Errorf("old session commit: %s", res.Body)
		}
		page = env.Do(apitest.Request{Method: "POST", Path: "/api/scorm/player/" + scos[0],
			Body: "token=" + url.QueryEscape(s1b.token), Type: "application/x-www-form-urlencoded"})
		if !strings.Contains(string(page.Body), `"cmi.suspend_data":"newer"`) || !strings.Contains(string(page.Body), `"cmi.core.entry":"resume"`) ||
			!strings.Contains(string(page.Body), `"cmi.core.total_time":"0000:01:30"`) {
			t.Fatalf("resumed player: %s", page.Body)
		}
		if got := topicStatus(t, env, w.learner, w.course, topic); got == 1 {
			t.Fatal("topic complete before the SCO")
		}
		// masteryscore 80: a raw score of 85 passes though the SCO said
		// incomplete; the topic completes.
		env.Clock.Advance(time.Minute)
		done := s1b.commit(t, env, 1, map[string]any{"cmi.core.lesson_status": "incomplete", "cmi.core.score.raw": "85",
			"cmi.core.exit": "", "cmi.core.session_time": "00:00:30", "cmi.suspend_data": "newer"})
		if done.String("data.status") != "passed" {
			t.Fatalf("mastery: %s", done.Body)
		}
		if got := topicStatus(t, env, w.learner, w.course, topic); got != 1 {
			t.Fatalf("topic status %v after passing", got)
		}
		tracks := env.Call(t, 200, "GET", "/api/courses/"+n(float64(w.course))+"/scorm", w.learner.Token, nil)
		if tracks.String("data.0.status") != "passed" || tracks.Number("data.0.score.raw") != 85 || tracks.Number("data.0.seconds") != 120 {
			t.Errorf("tracks: %s", tracks.Body)
		}
		// The course's tutor reads the learner's tracks; another learner does not.
		q := "/api/courses/" + n(float64(w.course)) + "/scorm?user_id=" + fmt.Sprint(w.learner.ID)
		if res := env.Call(t, 200, "GET", q, w.tutor.Token, nil); res.String("data.0.status") != "passed" {
			t.Errorf("tutor reads: %s", res.Body)
		}
		env.Call(t, 403, "GET", q, w.outsider.Token, nil)

		// module1 done: continue reaches module2 (its prerequisite met),
		// module3 still needs module2.
		next := s1b.do(env, "POST", "/navigate", map[string]any{"action": "continue"})
		if next.Status != 200 || next.String("data.sco.identifier") != "module2" {
			t.Fatalf("continue: %d %s", next.Status, next.Body)
		}
		if res := s1b.do(env, "POST", "/navigate", map[string]any{"action": "choice", "target": "module3"}); res.Status != 403 {
			t.Errorf("choice of module3: %d %s", res.Status, res.Body)
		}

		// A normal exit after the end: a new attempt starts clean.
		_, l1c := launch(t, env, w.learner, scos[0], topic, 200)
		if l1c.Number("data.attempt") != 2 || l1c.String("data.entry") != "ab-initio" {
			t.Errorf("new attempt: %s", l1c.Body)
		}
	})
}

func TestGolf2004Track(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := upload(t, env, w.tutor, "g.zip", fixture(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip"))
		create := map[string]any{"lesson": w.lesson, "title": "Golf", "topicable": scorm.Class, "package": pkg.Number("data.id")}
		topic := n(env.Call(t, 201, "POST", "/api/admin/topics", w.tutor.Token, create).Number("data.id"))
		sco := n(pkg.Number("data.scos.0.id"))
		s, _ := launch(t, env, w.learner, sco, topic, 200)
		long := strings.Repeat("x", 64000)
		env.Clock.Advance(2 * time.Minute)
		s.commit(t, env, 1, map[string]any{"cmi.completion_status": "incomplete", "cmi.location": "5", "cmi.suspend_data": long,
			"cmi.exit": "suspend", "cmi.session_time": "PT1M5S", "cmi.interactions.0.id": "q1", "cmi.interactions.0.result": "correct",
			"cmi.learner_preference.audio_level": "0.5", "adl.nav.request": "_none_", "cmi.objectives": map[string]any{},
			"cmi.comments_from_learner": []any{}})
		if res := s.do(env, "POST", "/commit", map[string]any{"seq": 2, "cmi": map[string]any{"cmi.suspend_data": long + "y"}}); res.Status != 422 {
			t.Errorf("suspend_data over 64,000: %d", res.Status)
		}
		s2, l2 := launch(t, env, w.learner, sco, topic, 200)
		if l2.String("data.entry") != "resume" {
			t.Fatalf("resume: %s", l2.Body)
		}
		st := s2.do(env, "GET", "", nil)
		if cmi := st.Get("data.cmi").(map[string]any); cmi["cmi.suspend_data"] != long || cmi["cmi.interactions.0.result"] != "correct" || cmi["cmi.location"] != "5" ||
			cmi["cmi.objectives"] != nil {
			t.Fatalf("stored 2004 model: %.300s", st.Body)
		}
		env.Clock.Advance(time.Minute)
		res := s2.commit(t, env, 1, map[string]any{"cmi.completion_status": "completed", "cmi.success_status": "passed",
			"cmi.score.scaled": "0.9", "cmi.score.raw": "90", "cmi.exit": "normal", "cmi.session_time": "PT10S"})
		if res.String("data.status") != "passed" || topicStatus(t, env, w.learner, w.course, topic) != 1 {
			t.Fatalf("complete: %s", res.Body)
		}
		tr := env.Call(t, 200, "GET", "/api/courses/"+n(float64(w.course))+"/scorm", w.learner.Token, nil)
		if tr.Number("data.0.score.scaled") != 0.9 || tr.String("data.0.completion_status") != "completed" || tr.Number("data.0.seconds") != 75 {
			t.Errorf("tracks: %s", tr.Body)
		}
		// An author previews without access: nothing is recorded.
		_, prev := launch(t, env, w.tutor, sco, topic, 200)
		if prev.Status != 200 {
			t.Errorf("preview: %s", prev.Body)
		}
	})
}

// TestTopicWithPackageFile creates a topic with the package file itself.
func TestTopicWithPackageFile(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for k, v := range map[string]string{"lesson": fmt.Sprint(w.lesson), "title": "Golf", "topicable": scorm.Class} {
			mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("package", "golf.zip")
		fw.Write(fixture(t, "RuntimeBasicCalls_SCORM12.zip"))
		mw.Close()
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: b.Bytes(), Type: mw.FormDataContentType()})
		if res.Status != 201 || res.String("data.topicable_type") != scorm.Class && res.Get("data.value.sco_id") == nil {
			t.Fatalf("create: %d %s", res.Status, res.Body)
		}
	})
}
