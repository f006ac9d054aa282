package liascript_test

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/kinds/liascript"
)

const lesson = "<!--\nauthor: Ada\nversion: 1.0\nlanguage: en\nnarrator: US English Female\nlogo: img/logo.png\n" +
	"import: https://github.com/liaTemplates/rextester\n-->\n\n# Soil\n\nIntro ![logo](img/logo.png)\n\n## Layers\n\nWhat is on top?\n\n" +
	"    [( )] Rock\n    [(X)] Humus\n\n## Water\n\n[[wet]]\n"

func num(n int64) string { return strconv.FormatInt(n, 10) }

type world struct {
	env     *apitest.Env
	tutor   *client.Client
	course  int64
	lesson  int64
	learner *apitest.User
}

func newWorld(t *testing.T, env *apitest.Env) *world {
	t.Helper()
	ctx, tutor := t.Context(), env.ClientAs("tutor")
	course := apitest.Must(tutor.PostAdminCourses(ctx, client.CourseBody{Title: "Lia", Status: client.Ptr("published")}))(t).ID
	les := apitest.Must(tutor.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Lesson"}))(t).ID
	learner := env.NewUser("student")
	assign(t, env, course, learner)
	return &world{env: env, tutor: tutor, course: course, lesson: les, learner: learner}
}

// assign gives the learner access to the course.
func assign(t *testing.T, env *apitest.Env, course int64, learner *apitest.User) {
	t.Helper()
	apitest.Must(env.ClientAs("admin").PostAdminCoursesIDAccess(t.Context(), course,
		client.AssignInputBody{Users: []client.GrantBody{{ID: learner.ID}}}))(t)
}

// create makes a LiaScript topic in the lesson as the tutor, with the
// body's source and completion.
func (w *world) create(t *testing.T, b client.PostAdminTopicsBody) (*client.View, error) {
	b.Lesson, b.Title, b.Topicable = w.lesson, "Lia", liascript.Class
	return w.tutor.PostAdminTopics(t.Context(), b)
}

// file is an upload of data named name.
func file(name string, data []byte) *client.File {
	return &client.File{Name: name, Content: bytes.NewReader(data)}
}

func TestUploadAndTopics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		res := apitest.Must(w.tutor.PostAdminLiascript(ctx, client.PostAdminLiascriptBody{Markdown: lesson}))(t)
		st := res.Structure
		if st.Title != "Soil" || st.Header.Author == nil || *st.Header.Author != "Ada" || st.Quizzes != 2 || len(st.Sections) < 2 ||
			st.Sections[1].Quizzes != 1 || len(st.Header.Imports) == 0 || st.Header.Imports[0] != "https://github.com/liaTemplates/rextester" {
			t.Fatalf("upload: %+v", res)
		}
		md := env.Do(apitest.Request{Method: "GET", Path: res.MarkdownURL})
		if md.Status != 200 || string(md.Body) != lesson {
			t.Errorf("stored markdown: %d %q", md.Status, md.Body)
		}
		id := res.ID
		// A .zip with its assets.
		zip := interactivetest.Zip(t, map[string]string{"course.md": lesson, "img/logo.png": "png"})
		res = apitest.Must(w.tutor.PostAdminLiascriptMultipart(ctx, client.PostAdminLiascriptForm{File: file("soil.zip", zip)}))(t)
		if res.Structure.Quizzes != 2 {
			t.Fatalf("zip: %+v", res)
		}
		mdURL := res.MarkdownURL
		asset := strings.Replace(mdURL[:strings.Index(mdURL, "?")], "course.md", "img/logo.png", 1)
		if env.Count(t, `SELECT COUNT(*) FROM liascript_courses`) != 2 || !env.BlobExists(t, strings.TrimPrefix(asset, "/api/files/")) {
			t.Errorf("asset not stored: %s", asset)
		}
		for name, b := range map[string][]byte{
			"two md":    interactivetest.Zip(t, map[string]string{"a.md": lesson, "b.md": lesson}),
			"no md":     interactivetest.Zip(t, map[string]string{"x.png": "x"}),
			"unsafe":    interactivetest.Zip(t, map[string]string{"course.md": lesson, "../x.png": "x"}),
			"not a zip": []byte("nope"),
		} {
			_, err := w.tutor.PostAdminLiascriptMultipart(ctx, client.PostAdminLiascriptForm{File: file("c.zip", b)})
			if client.StatusOf(err) != 422 {
				t.Errorf("%s: %v", name, err)
			}
		}
		learner := env.UserClient(w.learner)
		_, err := learner.PostAdminLiascript(ctx, client.PostAdminLiascriptBody{Markdown: lesson})
		apitest.Refused(t, err, 403)
		_, err = w.tutor.PostAdminLiascript(ctx, client.PostAdminLiascriptBody{Markdown: "  "})
		apitest.Refused(t, err, 422)

		// Topics: markdown, file or course; one of them.
		if r, err := w.create(t, client.PostAdminTopicsBody{Markdown: client.Ptr(lesson)}); err != nil ||
			apitest.LookupString(r.Topicable, "structure.title") != "Soil" || apitest.LookupString(r.Topicable, "completion") != "all" {
			t.Errorf("markdown topic: %+v %v", r, err)
		}
		if r, err := w.create(t, client.PostAdminTopicsBody{Course: client.Ptr(id), LiascriptCompletion: client.Ptr("sections")}); err != nil ||
			apitest.Lookup(r.Topicable, "course") != float64(id) || apitest.LookupString(r.Topicable, "completion") != "sections" {
			t.Errorf("course topic: %+v %v", r, err)
		}
		if _, err := w.tutor.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: w.lesson, Title: "File",
			Topicable: liascript.Class, File: file("soil.md", []byte(lesson))}); err != nil {
			t.Errorf("file topic: %v", err)
		}
		for name, f := range map[string]client.PostAdminTopicsBody{
			"no source":      {},
			"two sources":    {Markdown: client.Ptr(lesson), Course: client.Ptr(id)},
			"unknown course": {Course: client.Ptr(int64(999999))},
			"bad completion": {Markdown: client.Ptr(lesson), LiascriptCompletion: client.Ptr("never")},
		} {
			if _, err := w.create(t, f); client.StatusOf(err) != 422 {
				t.Errorf("%s: %v", name, err)
			}
		}
		if r, err := w.tutor.PostLiascriptIDPreview(ctx, id); err != nil || r.Structure.Title != "Soil" {
			t.Errorf("preview: %+v %v", r, err)
		}
		_, err = learner.PostLiascriptIDPreview(ctx, id)
		apitest.Refused(t, err, 403)
	})
}

func TestProgress(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		learner := env.UserClient(w.learner)
		report := func(topic int64, body client.LiaProgressInput) (*client.LiaProgressView, error) {
			return learner.PostLiascriptProgressID(ctx, topic, body)
		}
		complete := func(topic int64) bool {
			return env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND user_id = $2 AND finished_at IS NOT NULL`,
				topic, w.learner.ID) == 1
		}
		create := func(b client.PostAdminTopicsBody) int64 {
			t.Helper()
			return apitest.Must(w.create(t, b))(t).ID
		}
		quiz := func(n int64, solved bool) client.LiaQuizResult { return client.LiaQuizResult{Quiz: n, Solved: solved} }
		// all: three sections visited and both quizzes solved.
		topic := create(client.PostAdminTopicsBody{Markdown: client.Ptr(lesson)})
		steps := []client.LiaProgressInput{
			{Visited: []int64{0, 1}},
			{Quizzes: []client.LiaQuizResult{quiz(0, false)}},
			{Quizzes: []client.LiaQuizResult{quiz(0, true)}},
			{Visited: []int64{2}},
		}
		for _, s := range steps {
			if r, err := report(topic, s); err != nil || r.Completed || complete(topic) {
				t.Fatalf("%+v: %+v %v", s, r, err)
			}
		}
		if r, err := report(topic, client.LiaProgressInput{Quizzes: []client.LiaQuizResult{quiz(1, true)}}); err != nil || !r.Completed || !complete(topic) {
			t.Fatalf("last quiz: %+v %v", r, err)
		}
		// sections: visits are enough.
		topic = create(client.PostAdminTopicsBody{Markdown: client.Ptr(lesson), LiascriptCompletion: client.Ptr("sections")})
		if r, err := report(topic, client.LiaProgressInput{Visited: []int64{0, 1, 2}}); err != nil || !r.Completed || !complete(topic) {
			t.Errorf("sections: %+v %v", r, err)
		}
		// quizzes: solved quizzes are enough.
		topic = create(client.PostAdminTopicsBody{Markdown: client.Ptr(lesson), LiascriptCompletion: client.Ptr("quizzes")})
		if r, err := report(topic, client.LiaProgressInput{Quizzes: []client.LiaQuizResult{quiz(0, true), quiz(1, true)}}); err != nil || !r.Completed {
			t.Errorf("quizzes: %+v %v", r, err)
		}
		for _, bad := range []client.LiaProgressInput{{Visited: []int64{3}}, {Visited: []int64{-1}}, {Quizzes: []client.LiaQuizResult{quiz(2, true)}}} {
			if _, err := report(topic, bad); client.StatusOf(err) != 422 {
				t.Errorf("%+v: %v", bad, err)
			}
		}
		_, err := env.UserClient(env.NewUser("student")).PostLiascriptProgressID(ctx, topic, client.LiaProgressInput{Visited: []int64{0}})
		apitest.Refused(t, err, 403)
		// The real workshop course: 33 sections, 2 quizzes, a quiz answered.
		topic = create(client.PostAdminTopicsBody{Markdown: client.Ptr(string(fixtures.Read(t, "liascript/workshop.md")))})
		r, err := report(topic, client.LiaProgressInput{Visited: []int64{7}, Quizzes: []client.LiaQuizResult{quiz(1, true)}})
		if err != nil || r.Sections != 33 || r.Quizzes != 2 || r.Completed {
			t.Errorf("workshop: %+v %v", r, err)
		}
		// 120 per minute per user: a learner who has sent nothing yet gets
		// exactly 120 reports through, then 429 with its Retry-After
		// header (the client's RetryAfter).
		fresh := env.NewUser("student")
		assign(t, env, w.course, fresh)
		for i := 1; i <= 120; i++ {
			if _, err := env.UserClient(fresh).PostLiascriptProgressID(ctx, topic, client.LiaProgressInput{Visited: []int64{0}}); err != nil {
				t.Fatalf("report %d: %v", i, err)
			}
		}
		_, err = env.UserClient(fresh).PostLiascriptProgressID(ctx, topic, client.LiaProgressInput{Visited: []int64{0}})
		if e := apitest.Refused(t, err, 429); e.RetryAfter <= 0 {
			t.Errorf("report 121: no Retry-After: %v", e)
		}
	})
}

// TestPlayer: a topic's play_url serves LiaScript's runtime page with the
// bridge, sandboxed by its CSP; the course's Markdown and the assets of
// its .zip by their relative paths; the runtime's own files; and refuses
// forged, expired and other kinds' grants.
func TestPlayer(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		zip := interactivetest.Zip(t, map[string]string{"course.md": lesson, "img/logo.png": "png"})
		created := apitest.Must(w.tutor.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: w.lesson, Title: "Soil",
			Topicable: liascript.Class, File: file("soil.zip", zip)}))(t)
		topic := created.ID
		play := apitest.LookupString(created.Topicable, "play_url")
		if !strings.HasPrefix(play, "/api/liascript/play/") || !strings.HasSuffix(play, "/") {
			t.Fatalf("play_url %q", play)
		}
		page := env.Do(apitest.Request{Method: "GET", Path: play})
		csp := page.Header.Get("Content-Security-Policy")
		if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
			!strings.HasPrefix(csp, "sandbox allow-scripts ") || strings.Contains(csp, "allow-same-origin") ||
			!strings.Contains(csp, "report-uri /api/csp-report?topic="+num(topic)) {
			t.Fatalf("page: %d %v", page.Status, page.Header)
		}
		text := string(page.Body)
		version := regexp.MustCompile(`<script src="/api/liascript/runtime/([^/"]+)/lms-liascript\.js" data-quizzes="0,1,1"></script>`).FindStringSubmatch(text)
		if version == nil || version[1] != "1.1.41--1.0.1" || strings.Contains(text, `="./`) ||
			!strings.Contains(text, `type="module" src="/api/liascript/runtime/`+version[1]+`/index.`) {
			t.Fatalf("page body: %s", text)
		}
		get := func(path string) *apitest.Response { return env.Do(apitest.Request{Method: "GET", Path: path}) }
		if md := get(play + "course.md"); md.Status != 200 || string(md.Body) != lesson || md.Header.Get("Access-Control-Allow-Origin") != "*" ||
			md.Header.Get("Content-Security-Policy") != csp {
			t.Errorf("course.md: %d %v %q", md.Status, md.Header, md.Body)
		}
		if a := get(play + "img/logo.png"); a.Status != 200 || string(a.Body) != "png" || a.Header.Get("Content-Type") != "image/png" {
			t.Errorf("asset: %d %v %q", a.Status, a.Header, a.Body)
		}
		// The editor's themes load relative to the page: the runtime's.
		if th := get(play + "theme-dreamweaver.js"); th.Status != 200 || !strings.Contains(th.Header.Get("Content-Type"), "javascript") {
			t.Errorf("theme: %d %v", th.Status, th.Header)
		}
		for _, missing := range []string{"img/none.png", "none.js"} {
			if r := get(play + missing); r.Status != 404 {
				t.Errorf("%s: %d", missing, r.Status)
			}
		}
		// A path out of the course is refused (the grant no longer parses).
		if r := get(play + "img/../../x"); r.Status < 400 || r.Status >= 500 {
			t.Errorf("dot-dot: %d", r.Status)
		}
		grant := strings.TrimSuffix(strings.TrimPrefix(play, "/api/liascript/play/"), "/")
		forged := grant[:len(grant)-1] + map[bool]string{true: "0", false: "1"}[grant[len(grant)-1] != '0']
		if r := get("/api/liascript/play/" + forged + "/"); r.Status != 403 {
			t.Errorf("forged grant: %d", r.Status)
		}
		// Another tenant's host does not honour the grant.
		env.AddTenant("other.test")
		if r := env.Do(apitest.Request{Method: "GET", Path: play + "course.md", Host: "other.test"}); r.Status != 403 && r.Status != 404 {
			t.Errorf("other tenant: %d", r.Status)
		}
		// An interactive app's grant of the same topic id opens nothing here.
		tenant, release := env.OpenTenant(env.Tenant)
		app := interactive.PlayURL(tenant, topic, env.Clock.Now())
		release()
		if r := get(strings.Replace(app, "/api/interactive/", "/api/liascript/", 1)); r.Status != 403 {
			t.Errorf("interactive grant: %d", r.Status)
		}

		// The runtime: its files and the bridge, to any origin; nothing
		// outside its folder.
		if r := get("/api/liascript/runtime/" + version[1] + "/lms-liascript.js"); r.Status != 200 ||
			!strings.Contains(string(r.Body), "lms-liascript:visit") || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Errorf("bridge: %d %v", r.Status, r.Header)
		}
		if r := get("/api/liascript/runtime/" + version[1] + "/Base.605d9ab5.js"); r.Status != 200 || r.Header.Get("Cache-Control") != "public, max-age=86400" {
			t.Errorf("runtime file: %d %v", r.Status, r.Header)
		}
		for _, bad := range []string{"index.html", "../package.json", "%2e%2e/package.json", "nope.js"} {
			if r := get("/api/liascript/runtime/" + version[1] + "/" + bad); r.Status < 400 || r.Status >= 500 || strings.Contains(string(r.Body), "@liascript/editor") {
				t.Errorf("runtime %s: %d", bad, r.Status)
			}
		}

		// A preview plays the course without reporting anything, and
		// records no progress.
		course, _ := apitest.Lookup(created.Topicable, "course").(float64)
		pv := apitest.Must(w.tutor.PostLiascriptIDPreview(ctx, int64(course)))(t)
		if r := get(pv.PlayURL); r.Status != 200 || strings.Contains(r.Header.Get("Content-Security-Policy"), "report-uri") {
			t.Errorf("preview page: %d %v", r.Status, r.Header)
		}
		if r := get(pv.PlayURL + "course.md"); r.Status != 200 || string(r.Body) != lesson {
			t.Errorf("preview course.md: %d %q", r.Status, r.Body)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM liascript_progress`); n != 0 {
			t.Errorf("a preview left %d progress rows", n)
		}

		// The page's violations are stored for the topic.
		report := `{"csp-report":{"document-uri":"http://x/api/liascript/play/g/","blocked-uri":"http://evil.example/x?secret","effective-directive":"connect-src"}}`
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: []byte(report), Type: "application/csp-report"}); r.Status != 200 {
			t.Errorf("csp report: %d %s", r.Status, r.Body)
		}
		list := apitest.Must(env.ClientAs("admin").GetAdminTopicsIDCspReports(ctx, topic, client.GetAdminTopicsIDCspReportsParams{}))(t).Items
		if len(list) == 0 || list[0].BlockedURI != "http://evil.example/x" || list[0].Directive != "connect-src" {
			t.Errorf("reports: %+v", list)
		}

		// Links expire.
		env.Clock.Advance(8 * time.Hour)
		if r := get(play); r.Status != 403 {
			t.Errorf("expired link: %d", r.Status)
		}
	})
}

// TestPreviewLimit: previews are limited to 60 a minute per IP, and a
// course whose header comment is only "<!-->" uploads and previews.
func TestPreviewLimit(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		id := apitest.Must(w.tutor.PostAdminLiascript(ctx, client.PostAdminLiascriptBody{Markdown: "<!-->\n# Odd\n"}))(t).ID
		sent := 0
		for ; sent < 61; sent++ {
			r, err := w.tutor.PostLiascriptIDPreview(ctx, id)
			if client.StatusOf(err) == 429 {
				break
			}
			if err != nil || r.Structure.Title != "Odd" {
				t.Fatalf("preview %d: %+v %v", sent, r, err)
			}
		}
		if sent != 60 {
			t.Errorf("the limit answered after %d previews, want 60", sent)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM liascript_progress`); n != 0 {
			t.Errorf("previews left %d progress rows", n)
		}
	})
}
