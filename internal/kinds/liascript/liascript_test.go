package liascript_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/kinds/liascript"
)

const lesson = "<!--\nauthor: Ada\nversion: 1.0\nlanguage: en\nnarrator: US English Female\nlogo: img/logo.png\n" +
	"import: https://github.com/liaTemplates/rextester\n-->\n\n# Soil\n\nIntro ![logo](img/logo.png)\n\n## Layers\n\nWhat is on top?\n\n" +
	"    [( )] Rock\n    [(X)] Humus\n\n## Water\n\n[[wet]]\n"

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

type world struct {
	env     *apitest.Env
	tutor   *apitest.User
	course  float64
	lesson  float64
	learner *apitest.User
}

func newWorld(t *testing.T, env *apitest.Env) *world {
	t.Helper()
	tutor := env.As("tutor")
	course := env.Call(t, 201, "POST", "/api/admin/courses", tutor.Token, map[string]any{"title": "Lia", "status": "published"}).Number("data.id")
	les := env.Call(t, 201, "POST", "/api/admin/lessons", tutor.Token, map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+num(course)+"/access", env.As("admin").Token,
		map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	return &world{env: env, tutor: tutor, course: course, lesson: les, learner: learner}
}

func (w *world) create(t *testing.T, fields map[string]any) *apitest.Response {
	b := map[string]any{"lesson": w.lesson, "title": "Lia", "topicable": liascript.Class}
	for k, v := range fields {
		b[k] = v
	}
	return w.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: b})
}

func TestUploadAndTopics(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := env.Call(t, 201, "POST", "/api/admin/liascript", w.tutor.Token, map[string]any{"markdown": lesson})
		if res.String("data.structure.title") != "Soil" || res.String("data.structure.header.author") != "Ada" ||
			res.Number("data.structure.quizzes") != 2 || res.Number("data.structure.sections.1.quizzes") != 1 ||
			res.String("data.structure.header.imports.0") != "https://github.com/liaTemplates/rextester" {
			t.Fatalf("upload: %s", res.Body)
		}
		md := env.Do(apitest.Request{Method: "GET", Path: res.String("data.markdown_url")})
		if md.Status != 200 || string(md.Body) != lesson {
			t.Errorf("stored markdown: %d %q", md.Status, md.Body)
		}
		id := res.Number("data.id")
		// A .zip with its assets.
		zip := interactivetest.Zip(t, map[string]string{"course.md": lesson, "img/logo.png": "png"})
		body, ctype := interactivetest.Form(t, "file", "soil.zip", zip, nil)
		res = env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.tutor.Token, Body: body, Type: ctype})
		if res.Status != 201 || res.Number("data.structure.quizzes") != 2 {
			t.Fatalf("zip: %d %s", res.Status, res.Body)
		}
		mdURL := res.String("data.markdown_url")
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
			body, ctype := interactivetest.Form(t, "file", "c.zip", b, nil)
			if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.tutor.Token, Body: body, Type: ctype}); r.Status != 422 {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.learner.Token,
			Body: map[string]any{"markdown": lesson}}); r.Status != 403 {
			t.Errorf("learner upload: %d", r.Status)
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Token: w.tutor.Token,
			Body: map[string]any{"markdown": "  "}}); r.Status != 422 {
			t.Errorf("empty: %d", r.Status)
		}

		// Topics: markdown, file or course; one of them.
		if r := w.create(t, map[string]any{"markdown": lesson}); r.Status != 201 || r.String("data.topicable.structure.title") != "Soil" ||
			r.String("data.topicable.completion") != "all" {
			t.Errorf("markdown topic: %d %s", r.Status, r.Body)
		}
		if r := w.create(t, map[string]any{"course": id, "liascriptCompletion": "sections"}); r.Status != 201 ||
			r.Number("data.topicable.course") != id || r.String("data.topicable.completion") != "sections" {
			t.Errorf("course topic: %d %s", r.Status, r.Body)
		}
		body, ctype = interactivetest.Form(t, "file", "soil.md", []byte(lesson),
			map[string]string{"lesson": num(w.lesson), "title": "File", "topicable": liascript.Class})
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: body, Type: ctype}); r.Status != 201 {
			t.Errorf("file topic: %d %s", r.Status, r.Body)
		}
		for name, f := range map[string]map[string]any{
			"no source":      {},
			"two sources":    {"markdown": lesson, "course": id},
			"unknown course": {"course": 999999},
			"bad completion": {"markdown": lesson, "liascriptCompletion": "never"},
		} {
			if r := w.create(t, f); r.Status != 422 {
				t.Errorf("%s: %d %s", name, r.Status, r.Body)
			}
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/" + num(id) + "/preview", Token: w.tutor.Token}); r.Status != 200 ||
			r.String("data.structure.title") != "Soil" {
			t.Errorf("preview: %d %s", r.Status, r.Body)
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/" + num(id) + "/preview", Token: w.learner.Token}); r.Status != 403 {
			t.Errorf("learner preview: %d", r.Status)
		}
	})
}

func TestProgress(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		report := func(topic float64, body map[string]any) *apitest.Response {
			return env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/progress/" + num(topic), Token: w.learner.Token, Body: body})
		}
		complete := func(topic float64) bool {
			return env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND user_id = $2 AND finished_at IS NOT NULL`,
				int64(topic), w.learner.ID) == 1
		}
		// all: three sections visited and both quizzes solved.
		topic := w.create(t, map[string]any{"markdown": lesson}).Number("data.id")
		steps := []map[string]any{
			{"visited": []int{0, 1}},
			{"quizzes": []map[string]any{{"quiz": 0, "solved": false}}},
			{"quizzes": []map[string]any{{"quiz": 0, "solved": true}}},
			{"visited": []int{2}},
		}
		for _, s := range steps {
			if r := report(topic, s); r.Status != 200 || r.Get("data.completed") != false || complete(topic) {
				t.Fatalf("%v: %d %s", s, r.Status, r.Body)
			}
		}
		r := report(topic, map[string]any{"quizzes": []map[string]any{{"quiz": 1, "solved": true}}})
		if r.Status != 200 || r.Get("data.completed") != true || !complete(topic) {
			t.Fatalf("last quiz: %d %s", r.Status, r.Body)
		}
		// sections: visits are enough.
		topic = w.create(t, map[string]any{"markdown": lesson, "liascriptCompletion": "sections"}).Number("data.id")
		if r := report(topic, map[string]any{"visited": []int{0, 1, 2}}); r.Get("data.completed") != true || !complete(topic) {
			t.Errorf("sections: %s", r.Body)
		}
		// quizzes: solved quizzes are enough.
		topic = w.create(t, map[string]any{"markdown": lesson, "liascriptCompletion": "quizzes"}).Number("data.id")
		if r := report(topic, map[string]any{"quizzes": []map[string]any{{"quiz": 0, "solved": true}, {"quiz": 1, "solved": true}}}); r.Get("data.completed") != true {
			t.Errorf("quizzes: %s", r.Body)
		}
		for _, bad := range []map[string]any{{"visited": []int{3}}, {"visited": []int{-1}}, {"quizzes": []map[string]any{{"quiz": 2, "solved": true}}}} {
			if r := report(topic, bad); r.Status != 422 {
				t.Errorf("%v: %d %s", bad, r.Status, r.Body)
			}
		}
		outsider := env.NewUser("student")
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/progress/" + num(topic), Token: outsider.Token,
			Body: map[string]any{"visited": []int{0}}}); r.Status != 403 {
			t.Errorf("outsider: %d", r.Status)
		}
		// The real workshop course: 33 sections, 2 quizzes, a quiz answered.
		topic = w.create(t, map[string]any{"markdown": string(fixtures.Read(t, "liascript/workshop.md"))}).Number("data.id")
		r = report(topic, map[string]any{"visited": []int{7}, "quizzes": []map[string]any{{"quiz": 1, "solved": true}}})
		if r.Status != 200 || r.Number("data.sections") != 33 || r.Number("data.quizzes") != 2 || r.Get("data.completed") != false {
			t.Errorf("workshop: %d %s", r.Status, r.Body)
		}
		// 120 per minute per user: a learner who has sent nothing yet gets
		// exactly 120 reports through, then 429.
		fresh := env.NewUser("student")
		env.Call(t, 200, "POST", "/api/admin/courses/"+num(w.course)+"/access", env.As("admin").Token,
			map[string]any{"users": []map[string]any{{"id": fresh.ID}}})
		send := func() *apitest.Response {
			return env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/progress/" + num(topic), Token: fresh.Token,
				Body: map[string]any{"visited": []int{0}}})
		}
		for i := 1; i <= 120; i++ {
			if r := send(); r.Status != 200 {
				t.Fatalf("report %d: %d %s", i, r.Status, r.Body)
			}
		}
		if r := send(); r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Errorf("report 121: %d %v", r.Status, r.Header)
		}
	})
}

// TestPlayer: a topic's play_url serves LiaScript's runtime page with the
// bridge, sandboxed by its CSP; the course's Markdown and the assets of
// its .zip by their relative paths; the runtime's own files; and refuses
// forged, expired and other kinds' grants.
func TestPlayer(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		zip := interactivetest.Zip(t, map[string]string{"course.md": lesson, "img/logo.png": "png"})
		body, ctype := interactivetest.Form(t, "file", "soil.zip", zip,
			map[string]string{"lesson": num(w.lesson), "title": "Soil", "topicable": liascript.Class})
		created := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: body, Type: ctype})
		if created.Status != 201 {
			t.Fatalf("topic: %d %s", created.Status, created.Body)
		}
		topic := created.Number("data.id")
		play := created.String("data.topicable.play_url")
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
		app := interactive.PlayURL(tenant, int64(topic), env.Clock.Now())
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
		pv := env.Call(t, 200, "POST", "/api/liascript/"+num(created.Number("data.topicable.course"))+"/preview", w.tutor.Token, nil)
		if r := get(pv.String("data.play_url")); r.Status != 200 || strings.Contains(r.Header.Get("Content-Security-Policy"), "report-uri") {
			t.Errorf("preview page: %d %v", r.Status, r.Header)
		}
		if r := get(pv.String("data.play_url") + "course.md"); r.Status != 200 || string(r.Body) != lesson {
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
		list := env.Call(t, 200, "GET", "/api/admin/topics/"+num(topic)+"/csp-reports", env.As("admin").Token, nil)
		if list.String("data.0.blocked_uri") != "http://evil.example/x" || list.String("data.0.directive") != "connect-src" {
			t.Errorf("reports: %s", list.Body)
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
		w := newWorld(t, env)
		id := env.Call(t, 201, "POST", "/api/admin/liascript", w.tutor.Token, map[string]any{"markdown": "<!-->\n# Odd\n"}).Number("data.id")
		sent := 0
		for ; sent < 61; sent++ {
			r := env.Do(apitest.Request{Method: "POST", Path: "/api/liascript/" + num(id) + "/preview", Token: w.tutor.Token})
			if r.Status == 429 {
				break
			}
			if r.Status != 200 || r.String("data.structure.title") != "Odd" {
				t.Fatalf("preview %d: %d %s", sent, r.Status, r.Body)
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
