package interactive_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/sqldb"
)

// world is a published course authored by the tutor with one lesson, and
// a learner with access to it.
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
	course := env.Call(t, 201, "POST", "/api/admin/courses", tutor.Token, map[string]any{"title": "Apps", "status": "published"}).Number("data.id")
	lesson := env.Call(t, 201, "POST", "/api/admin/lessons", tutor.Token, map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+num(course)+"/access", env.As("admin").Token,
		map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	return &world{env: env, tutor: tutor, course: course, lesson: lesson, learner: learner}
}

// hasError reports whether a 422 names the field; keys hold dots
// (manifest.steps.0.id), so they are not read as paths.
func hasError(res *apitest.Response, field string) bool {
	errs, _ := res.Get("errors").(map[string]any)
	_, ok := errs[field]
	return ok
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// upload sends a package (files by path) as the tutor, optionally as the
// next version of pkg.
func (w *world) upload(t *testing.T, files map[string]string, pkg float64) *apitest.Response {
	t.Helper()
	fields := map[string]string{}
	if pkg != 0 {
		fields["package"] = num(pkg)
	}
	body, ctype := interactivetest.Form(t, "file", "app.zip", interactivetest.Zip(t, files), fields)
	return w.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/interactive", Token: w.tutor.Token, Body: body, Type: ctype})
}

func app(manifest string) map[string]string {
	return map[string]string{"lms-interactive.json": manifest, "index.html": interactivetest.Page, "js/app.js": "console.log(1)"}
}

func (w *world) pkg(t *testing.T) float64 {
	t.Helper()
	res := w.upload(t, app(interactivetest.Manifest), 0)
	if res.Status != 201 {
		t.Fatalf("upload: %d %s", res.Status, res.Body)
	}
	return res.Number("data.id")
}

func (w *world) topic(fields map[string]any) map[string]any {
	b := map[string]any{"lesson": w.lesson, "title": "App", "topicable": interactive.Class}
	for k, v := range fields {
		b[k] = v
	}
	return b
}

func (w *world) create(t *testing.T, fields map[string]any) *apitest.Response {
	t.Helper()
	return w.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: w.topic(fields)})
}

func setting(t *testing.T, env *apitest.Env, key string, value bool) {
	t.Helper()
	env.Call(t, 200, "POST", "/api/admin/config", env.As("admin").Token,
		map[string]any{"config": []map[string]any{{"key": key, "value": value}}})
}

func TestUpload(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := w.upload(t, app(interactivetest.Manifest), 0)
		if res.Status != 201 || res.Number("data.current_version") != 1 || res.String("data.title") != "Pendulum" {
			t.Fatalf("upload: %d %s", res.Status, res.Body)
		}
		pkg := res.Number("data.id")
		if got := res.String("data.manifest.steps.2.id"); got != "done" {
			t.Errorf("manifest steps: %s", res.Body)
		}
		// A new version: numbers go on, every version is kept.
		v2 := w.upload(t, app(strings.Replace(interactivetest.Manifest, "Pendulum", "Pendulum 2", 1)), pkg)
		if v2.Status != 201 || v2.Number("data.id") != pkg || v2.Number("data.current_version") != 2 ||
			v2.Number("data.versions.0.version") != 1 || v2.Number("data.versions.1.version") != 2 {
			t.Fatalf("second version: %d %s", v2.Status, v2.Body)
		}
		env.Call(t, 200, "GET", "/api/admin/interactive/"+num(pkg), w.tutor.Token, nil)
		// Another tutor may not add versions to this tutor's package.
		other := env.NewUser("tutor")
		body, ctype := interactivetest.Form(t, "file", "app.zip", interactivetest.Zip(t, app(interactivetest.Manifest)),
			map[string]string{"package": num(pkg)})
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/interactive", Token: other.Token, Body: body, Type: ctype}); r.Status != 403 {
			t.Errorf("other tutor's version: %d %s", r.Status, r.Body)
		}
		body, ctype = interactivetest.Upload(t, interactivetest.Manifest)
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/interactive", Token: w.learner.Token, Body: body, Type: ctype}); r.Status != 403 {
			t.Errorf("learner upload: %d %s", r.Status, r.Body)
		}

		bad := []struct {
			name  string
			files map[string]string
			field string
		}{
			{"no manifest", map[string]string{"index.html": "x"}, "file"},
			{"not json", map[string]string{"lms-interactive.json": "{", "index.html": "x"}, "manifest"},
			{"unknown field", map[string]string{"lms-interactive.json": `{"entry":"index.html","steps":[{"id":"a","title":"A"}],"x":1}`}, "manifest"},
			{"entry missing from archive", map[string]string{"lms-interactive.json": `{"entry":"start.html","steps":[{"id":"a","title":"A"}]}`}, "manifest.entry"},
			{"entry outside", map[string]string{"lms-interactive.json": `{"entry":"../x.html","steps":[{"id":"a","title":"A"}]}`}, "manifest.entry"},
			{"entry not html", map[string]string{"lms-interactive.json": `{"entry":"app.js","steps":[{"id":"a","title":"A"}]}`}, "manifest.entry"},
			{"no steps", map[string]string{"lms-interactive.json": `{"entry":"index.html","steps":[]}`, "index.html": "x"}, "manifest.steps"},
			{"bad step id", map[string]string{"lms-interactive.json": `{"entry":"index.html","steps":[{"id":"a b","title":"A"}]}`, "index.html": "x"}, "manifest.steps.0.id"},
			{"duplicate step", map[string]string{"lms-interactive.json": `{"entry":"index.html","steps":[{"id":"a","title":"A"},{"id":"a","title":"B"}]}`, "index.html": "x"}, "manifest.steps.1.id"},
			{"step without title", map[string]string{"lms-interactive.json": `{"entry":"index.html","steps":[{"id":"a","title":""}]}`, "index.html": "x"}, "manifest.steps.0.title"},
			{"bad origin", map[string]string{"lms-interactive.json": `{"entry":"index.html","steps":[{"id":"a","title":"A"}],"network":["http://x.org/path"]}`, "index.html": "x"}, "manifest.network.0"},
			{"unsafe path", map[string]string{"lms-interactive.json": interactivetest.Manifest, "index.html": "x", "../evil.js": "x"}, "file"},
		}
		for _, b := range bad {
			res := w.upload(t, b.files, 0)
			if res.Status != 422 || !hasError(res, b.field) {
				t.Errorf("%s: %d %s, want 422 naming %s", b.name, res.Status, res.Body, b.field)
			}
		}
		// Every problem of a manifest is named at once.
		res = w.upload(t, map[string]string{"lms-interactive.json": `{"entry":"/abs.html","steps":[{"id":"","title":"A"}],"network":["ftp://x"]}`}, 0)
		for _, f := range []string{"manifest.entry", "manifest.steps.0.id", "manifest.network.0"} {
			if !hasError(res, f) {
				t.Errorf("all problems: %s lacks %s", res.Body, f)
			}
		}
		body, ctype = interactivetest.Form(t, "file", "app.zip", []byte("not a zip"), nil)
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/interactive", Token: w.tutor.Token, Body: body, Type: ctype}); r.Status != 422 {
			t.Errorf("not a zip: %d %s", r.Status, r.Body)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM interactive_versions`); n != 2 {
			t.Errorf("refused uploads stored versions: %d", n)
		}
	})
}

func TestTopicFields(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.pkg(t)
		netManifest := `{"entry":"index.html","steps":[{"id":"a","title":"A"},{"id":"b","title":"B"}],"network":["https://tiles.example.org"]}`
		netPkg := w.upload(t, app(netManifest), 0).Number("data.id")
		onePkg := w.upload(t, app(`{"entry":"index.html","steps":[{"id":"only","title":"Only"}]}`), 0).Number("data.id")
		scenarios := []struct {
			name   string
			fields map[string]any
			status int
			field  string
			check  map[string]any
		}{
			{"defaults", map[string]any{"package": pkg}, 201, "",
				map[string]any{"data.topicable.version": 1.0, "data.topicable.completion": "on_range_end", "data.topicable.display": "inline", "data.topicable.height": 600.0}},
			{"package required", map[string]any{}, 422, "package", nil},
			{"unknown package", map[string]any{"package": 999999}, 422, "package", nil},
			{"version pinned", map[string]any{"package": pkg, "version": 1}, 201, "", map[string]any{"data.topicable.version": 1.0}},
			{"version below 1", map[string]any{"package": pkg, "version": 0}, 422, "version", nil},
			{"unknown version", map[string]any{"package": pkg, "version": 7}, 422, "version", nil},
			{"followLatest", map[string]any{"package": pkg, "followLatest": true}, 201, "", map[string]any{"data.topicable.follow_latest": true}},
			{"followLatest with version", map[string]any{"package": pkg, "followLatest": true, "version": 1}, 422, "version", nil},
			{"range", map[string]any{"package": pkg, "startStep": "intro", "endStep": "swing"}, 201, "",
				map[string]any{"data.topicable.start_step": "intro", "data.topicable.end_step": "swing"}},
			{"unknown startStep", map[string]any{"package": pkg, "startStep": "nope"}, 422, "startStep", nil},
			{"unknown endStep", map[string]any{"package": pkg, "endStep": "nope"}, 422, "endStep", nil},
			{"start after end", map[string]any{"package": pkg, "startStep": "done", "endStep": "intro"}, 422, "endStep", nil},
			{"start equals end", map[string]any{"package": pkg, "startStep": "swing", "endStep": "swing"}, 422, "endStep", nil},
			// The defaults resolved, the range must still run forward.
			{"endStep alone at the first step", map[string]any{"package": pkg, "endStep": "intro"}, 422, "endStep", nil},
			{"startStep alone at the last step", map[string]any{"package": pkg, "startStep": "done"}, 422, "startStep", nil},
			{"endStep alone", map[string]any{"package": pkg, "endStep": "swing"}, 201, "", map[string]any{"data.topicable.end_step": "swing"}},
			{"startStep alone", map[string]any{"package": pkg, "startStep": "swing"}, 201, "", map[string]any{"data.topicable.start_step": "swing"}},
			{"one step plays just it", map[string]any{"package": onePkg, "startStep": "only", "endStep": "only"}, 201, "", nil},
			{"completion on_open", map[string]any{"package": pkg, "completion": "on_open"}, 201, "", map[string]any{"data.topicable.completion": "on_open"}},
			{"completion on_complete", map[string]any{"package": pkg, "completion": "on_complete"}, 201, "", nil},
			{"completion unknown", map[string]any{"package": pkg, "completion": "sometimes"}, 422, "completion", nil},
			{"on_score needs passScore", map[string]any{"package": pkg, "completion": "on_score"}, 422, "passScore", nil},
			{"on_score", map[string]any{"package": pkg, "completion": "on_score", "passScore": 80}, 201, "", map[string]any{"data.topicable.pass_score": 80.0}},
			{"passScore above 100", map[string]any{"package": pkg, "completion": "on_score", "passScore": 101}, 422, "passScore", nil},
			{"passScore below 0", map[string]any{"package": pkg, "completion": "on_score", "passScore": -1}, 422, "passScore", nil},
			{"passScore without on_score", map[string]any{"package": pkg, "passScore": 50}, 422, "passScore", nil},
			{"display background", map[string]any{"package": pkg, "display": "background"}, 201, "", map[string]any{"data.topicable.display": "background"}},
			{"display unknown", map[string]any{"package": pkg, "display": "popup"}, 422, "display", nil},
			{"height", map[string]any{"package": pkg, "height": 240}, 201, "", map[string]any{"data.topicable.height": 240.0}},
			{"height max", map[string]any{"package": pkg, "height": 2000}, 201, "", nil},
			{"height too small", map[string]any{"package": pkg, "height": 239}, 422, "height", nil},
			{"height too large", map[string]any{"package": pkg, "height": 2001}, 422, "height", nil},
			{"height with background", map[string]any{"package": pkg, "display": "background", "height": 400}, 422, "height", nil},
			{"text", map[string]any{"package": pkg, "text": "# Try it\n\nSwing the **pendulum**."}, 201, "",
				map[string]any{"data.topicable.text": "# Try it\n\nSwing the **pendulum**."}},
			{"network not accepted", map[string]any{"package": netPkg}, 422, "acceptNetwork", nil},
			{"network refused by the tenant", map[string]any{"package": netPkg, "acceptNetwork": true}, 422, "acceptNetwork", nil},
		}
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				res := w.create(t, sc.fields)
				if res.Status != sc.status {
					t.Fatalf("status %d, want %d: %s", res.Status, sc.status, res.Body)
				}
				if sc.field != "" && !hasError(res, sc.field) {
					t.Errorf("errors lack %s: %s", sc.field, res.Body)
				}
				for path, want := range sc.check {
					if got := res.Get(path); got != want {
						t.Errorf("%s = %v, want %v", path, got, want)
					}
				}
			})
		}
		if res := w.create(t, map[string]any{"package": pkg, "text": "**bold**"}); !strings.Contains(res.String("data.topicable.text_html"), "<strong>bold</strong>") {
			t.Errorf("text html: %s", res.Body)
		}
		// With the tenant allowing the network, accepting it is enough.
		setting(t, env, interactive.AllowNetworkSetting, true)
		res := w.create(t, map[string]any{"package": netPkg, "acceptNetwork": true})
		if res.Status != 201 || res.String("data.topicable.network.0") != "https://tiles.example.org" {
			t.Fatalf("accepted network: %d %s", res.Status, res.Body)
		}
		// A .zip in the file field makes a package on the way.
		body, ctype := interactivetest.Form(t, "file", "app.zip", interactivetest.Zip(t, app(interactivetest.Manifest)),
			map[string]string{"lesson": num(w.lesson), "title": "Uploaded", "topicable": interactive.Class, "completion": "on_open"})
		res = env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: body, Type: ctype})
		if res.Status != 201 || res.Number("data.topicable.package") == pkg || res.Number("data.topicable.version") != 1 {
			t.Fatalf("create with file: %d %s", res.Status, res.Body)
		}
		body, ctype = interactivetest.Form(t, "file", "app.zip", interactivetest.Zip(t, app(interactivetest.Manifest)),
			map[string]string{"lesson": num(w.lesson), "title": "Both", "topicable": interactive.Class, "package": num(pkg)})
		if res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: body, Type: ctype}); res.Status != 422 {
			t.Errorf("file and package: %d %s", res.Status, res.Body)
		}
		// An update keeps what it does not send, and checks the whole again.
		id := num(w.create(t, map[string]any{"package": pkg, "completion": "on_score", "passScore": 60}).Number("data.id"))
		res = env.Call(t, 200, "PATCH", "/api/admin/topics/"+id, w.tutor.Token, map[string]any{"height": 900})
		if res.Number("data.topicable.pass_score") != 60 || res.Number("data.topicable.height") != 900 {
			t.Errorf("update: %s", res.Body)
		}
		res = env.Call(t, 200, "PATCH", "/api/admin/topics/"+id, w.tutor.Token, map[string]any{"completion": "on_complete"})
		if res.Get("data.topicable.pass_score") != nil {
			t.Errorf("passScore kept without on_score: %s", res.Body)
		}
		if r := env.Do(apitest.Request{Method: "PATCH", Path: "/api/admin/topics/" + id, Token: w.tutor.Token,
			Body: map[string]any{"endStep": "nope"}}); r.Status != 422 {
			t.Errorf("update with unknown step: %d %s", r.Status, r.Body)
		}
	})
}

// TestRefusedCreateStoresNothing: a create carrying a .zip in file that
// is refused, by a rule of its manifest or by its own fields, leaves no
// package, version or file behind.
func TestRefusedCreateStoresNothing(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		netManifest := `{"entry":"index.html","steps":[{"id":"a","title":"A"},{"id":"b","title":"B"}],"network":["https://tiles.example.org"]}`
		create := func(manifest string, fields map[string]string) *apitest.Response {
			form := map[string]string{"lesson": num(w.lesson), "title": "Uploaded", "topicable": interactive.Class}
			for k, v := range fields {
				form[k] = v
			}
			body, ctype := interactivetest.Form(t, "file", "app.zip", interactivetest.Zip(t, app(manifest)), form)
			return env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: w.tutor.Token, Body: body, Type: ctype})
		}
		refused := []struct {
			name     string
			manifest string
			fields   map[string]string
			field    string
		}{
			{"unknown startStep", interactivetest.Manifest, map[string]string{"startStep": "nope"}, "startStep"},
			{"endStep alone at the first step", interactivetest.Manifest, map[string]string{"endStep": "intro"}, "endStep"},
			{"network not accepted", netManifest, nil, "acceptNetwork"},
			{"network refused by the tenant", netManifest, map[string]string{"acceptNetwork": "true"}, "acceptNetwork"},
			{"version with file", interactivetest.Manifest, map[string]string{"version": "1"}, "version"},
		}
		for _, c := range refused {
			if res := create(c.manifest, c.fields); res.Status != 422 || !hasError(res, c.field) {
				t.Errorf("%s: %d %s, want 422 naming %s", c.name, res.Status, res.Body, c.field)
			}
		}
		files := func() int {
			tenant, release := env.OpenTenant(env.Tenant)
			defer release()
			n := 0
			if err := tenant.Blob.List(context.Background(), "interactive/", func(blob.Info) error { n++; return nil }); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if p, v, f := env.Count(t, `SELECT COUNT(*) FROM interactive_packages`), env.Count(t, `SELECT COUNT(*) FROM interactive_versions`), files(); p+v+f != 0 {
			t.Errorf("refused creates left %d packages, %d versions and %d files", p, v, f)
		}
		// The same create, accepted, stores one package of three files.
		if res := create(interactivetest.Manifest, map[string]string{"startStep": "swing"}); res.Status != 201 {
			t.Fatalf("accepted create: %d %s", res.Status, res.Body)
		}
		if p, f := env.Count(t, `SELECT COUNT(*) FROM interactive_packages`), files(); p != 1 || f != 3 {
			t.Errorf("accepted create stored %d packages and %d files", p, f)
		}
	})
}

func TestVersionsAndFollowLatest(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.pkg(t)
		pinned := w.create(t, map[string]any{"package": pkg}).Number("data.id")
		follow := w.create(t, map[string]any{"package": pkg, "followLatest": true}).Number("data.id")
		files := app(interactivetest.Manifest)
		files["index.html"] = "<p>Version two</p>"
		if r := w.upload(t, files, pkg); r.Status != 201 {
			t.Fatalf("v2: %s", r.Body)
		}
		later := w.create(t, map[string]any{"package": pkg}).Number("data.id")
		oldPin := w.create(t, map[string]any{"package": pkg, "version": 1}).Number("data.id")
		for _, c := range []struct {
			topic float64
			want  string
		}{{pinned, "<p>App</p>"}, {follow, "Version two"}, {later, "Version two"}, {oldPin, "<p>App</p>"}} {
			if body := playFile(t, w, c.topic, "index.html").Body; !strings.Contains(string(body), c.want) {
				t.Errorf("topic %v plays %q, want %q", c.topic, body, c.want)
			}
		}
		res := env.Call(t, 200, "GET", "/api/admin/topics/"+num(later), w.tutor.Token, nil)
		if res.Number("data.topicable.version") != 2 {
			t.Errorf("a topic created after v2 pins v2: %s", res.Body)
		}
	})
}

// playURL is the topic's play link as the program gives it.
func playURL(t *testing.T, w *world, topic float64) string {
	t.Helper()
	res := w.env.Call(t, 200, "GET", "/api/admin/topics/"+num(topic), w.tutor.Token, nil)
	u := res.String("data.topicable.play_url")
	if !strings.HasPrefix(u, "/api/interactive/play/") {
		t.Fatalf("play_url: %s", res.Body)
	}
	return u
}

func playFile(t *testing.T, w *world, topic float64, file string) *apitest.Response {
	t.Helper()
	return w.env.Do(apitest.Request{Method: "GET", Path: playURL(t, w, topic) + file})
}

func TestPlayback(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.pkg(t)
		topic := w.create(t, map[string]any{"package": pkg}).Number("data.id")
		u := playURL(t, w, topic)
		res := env.Do(apitest.Request{Method: "GET", Path: u})
		// The client follows the redirect to the entry page.
		if res.Status != http.StatusOK || !strings.Contains(string(res.Body), "<p>App</p>") {
			t.Fatalf("entry redirect: %d %v %s", res.Status, res.Header, res.Body)
		}
		res = env.Do(apitest.Request{Method: "GET", Path: u + "index.html"})
		csp := res.Header.Get("Content-Security-Policy")
		if res.Status != 200 || !strings.Contains(string(res.Body), "<p>App</p>") || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("entry: %d %s", res.Status, res.Body)
		}
		for _, want := range []string{"sandbox allow-scripts", "connect-src 'none'", "report-uri /api/csp-report?topic=" + num(topic)} {
			if !strings.Contains(csp, want) {
				t.Errorf("policy %q lacks %q", csp, want)
			}
		}
		if strings.Contains(csp, "allow-same-origin") {
			t.Errorf("policy gives the app our origin: %s", csp)
		}
		if r := env.Do(apitest.Request{Method: "GET", Path: u + "js/app.js"}); r.Status != 200 || r.Header.Get("Content-Security-Policy") == "" {
			t.Errorf("asset: %d %v", r.Status, r.Header)
		}
		if r := env.Do(apitest.Request{Method: "GET", Path: u + "missing.js"}); r.Status != 404 {
			t.Errorf("missing file: %d", r.Status)
		}
		forged := strings.Replace(u, "/play/", "/play/x", 1)
		if r := env.Do(apitest.Request{Method: "GET", Path: forged + "index.html"}); r.Status != 403 {
			t.Errorf("forged grant: %d", r.Status)
		}
		// Another tenant's host does not honour the grant.
		env.AddTenant("other.test")
		if r := env.Do(apitest.Request{Method: "GET", Path: u + "index.html", Host: "other.test"}); r.Status != 403 && r.Status != 404 {
			t.Errorf("other tenant: %d", r.Status)
		}

		// Network origins reach connect-src only when accepted and allowed.
		setting(t, env, interactive.AllowNetworkSetting, true)
		netManifest := `{"entry":"index.html","steps":[{"id":"a","title":"A"},{"id":"b","title":"B"}],"network":["https://tiles.example.org"]}`
		netTopic := w.create(t, map[string]any{"package": w.upload(t, app(netManifest), 0).Number("data.id"), "acceptNetwork": true}).Number("data.id")
		if csp := playFile(t, w, netTopic, "index.html").Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src https://tiles.example.org") {
			t.Errorf("network policy: %s", csp)
		}
		setting(t, env, interactive.AllowNetworkSetting, false)
		if csp := playFile(t, w, netTopic, "index.html").Header.Get("Content-Security-Policy"); !strings.Contains(csp, "connect-src 'none'") {
			t.Errorf("network after the tenant forbade it: %s", csp)
		}

		// A disabled tenant hides playback and refuses new topics and
		// packages. Topic views and the learner's program, read (and
		// kept) before, lose the play link and say why.
		program := func() *apitest.Response {
			t.Helper()
			res := env.Call(t, 200, "GET", "/api/courses/"+num(w.course)+"/program", w.learner.Token, nil)
			if res.Number("data.lessons.0.topics.0.id") != topic {
				t.Fatalf("program: %s", res.Body)
			}
			return res
		}
		if p := program(); !strings.HasPrefix(p.String("data.lessons.0.topics.0.topicable.play_url"), "/api/interactive/play/") ||
			p.Get("data.lessons.0.topics.0.topicable.disabled") != nil {
			t.Fatalf("program while enabled: %s", p.Body)
		}
		setting(t, env, interactive.EnabledSetting, false)
		if p := program(); p.Get("data.lessons.0.topics.0.topicable.play_url") != nil || p.Get("data.lessons.0.topics.0.topicable.disabled") != true {
			t.Errorf("program while disabled: %s", p.Body)
		}
		view := env.Call(t, 200, "GET", "/api/admin/topics/"+num(topic), w.tutor.Token, nil)
		if view.Get("data.topicable.play_url") != nil || view.Get("data.topicable.disabled") != true || view.String("data.topicable.completion") != "on_range_end" {
			t.Errorf("topic view while disabled: %s", view.Body)
		}
		if r := env.Do(apitest.Request{Method: "GET", Path: u + "index.html"}); r.Status != 404 {
			t.Errorf("play while disabled: %d", r.Status)
		}
		if r := w.create(t, map[string]any{"package": pkg}); r.Status != 403 {
			t.Errorf("create while disabled: %d %s", r.Status, r.Body)
		}
		if r := w.upload(t, app(interactivetest.Manifest), 0); r.Status != 403 {
			t.Errorf("upload while disabled: %d %s", r.Status, r.Body)
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/interactive/progress/" + num(topic), Token: w.learner.Token,
			Body: map[string]any{"event": "open"}}); r.Status != 404 {
			t.Errorf("progress while disabled: %d %s", r.Status, r.Body)
		}
	})
}

func TestCompletion(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.pkg(t)
		report := func(topic float64, body map[string]any) *apitest.Response {
			return env.Do(apitest.Request{Method: "POST", Path: "/api/interactive/progress/" + num(topic), Token: w.learner.Token, Body: body})
		}
		complete := func(topic float64) bool {
			t.Helper()
			n := env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND user_id = $2 AND finished_at IS NOT NULL`, int64(topic), w.learner.ID)
			return n == 1
		}
		cases := []struct {
			name    string
			fields  map[string]any
			before  []map[string]any
			finally map[string]any
		}{
			{"on_open", map[string]any{"completion": "on_open"}, nil, map[string]any{"event": "open"}},
			{"on_range_end", map[string]any{"startStep": "intro", "endStep": "swing"},
				[]map[string]any{{"event": "open"}, {"event": "step", "step": "intro"}, {"event": "complete"}, {"event": "score", "score": 100}},
				map[string]any{"event": "step", "step": "swing"}},
			{"on_range_end default is the last step", map[string]any{},
				[]map[string]any{{"event": "step", "step": "swing"}}, map[string]any{"event": "step", "step": "done"}},
			{"on_complete", map[string]any{"completion": "on_complete"},
				[]map[string]any{{"event": "step", "step": "done"}, {"event": "score", "score": 100}}, map[string]any{"event": "complete"}},
			{"on_score", map[string]any{"completion": "on_score", "passScore": 70},
				[]map[string]any{{"event": "complete"}, {"event": "step", "step": "done"}, {"event": "score", "score": 69}},
				map[string]any{"event": "score", "score": 70}},
		}
		// The answer carries the played range's steps, defaults resolved,
		// for the app's init message.
		for fields, want := range map[string][]string{
			`{"startStep":"intro","endStep":"swing"}`: {"intro", "swing"},
			`{"startStep":"swing"}`:                   {"swing", "done"},
			`{}`:                                      {"intro", "swing", "done"},
		} {
			body := map[string]any{"package": pkg}
			json.Unmarshal([]byte(fields), &body)
			res := report(w.create(t, body).Number("data.id"), map[string]any{"event": "open"})
			steps, _ := res.Get("data.range").([]any)
			var got []string
			for i := range steps {
				got = append(got, res.String(fmt.Sprintf("data.range.%d.id", i)))
			}
			if !slices.Equal(got, want) || res.String("data.range.0.title") == "" {
				t.Errorf("%s: range %v, want %v: %s", fields, got, want, res.Body)
			}
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				fields := map[string]any{"package": pkg}
				for k, v := range c.fields {
					fields[k] = v
				}
				topic := w.create(t, fields).Number("data.id")
				for _, b := range c.before {
					res := report(topic, b)
					if res.Status != 200 || res.Get("data.completed") != false {
						t.Fatalf("%v: %d %s", b, res.Status, res.Body)
					}
				}
				if complete(topic) {
					t.Fatal("complete before the rule was met")
				}
				res := report(topic, c.finally)
				if res.Status != 200 || res.Get("data.completed") != true || !complete(topic) {
					t.Fatalf("%v: %d %s", c.finally, res.Status, res.Body)
				}
			})
		}
		topic := w.create(t, map[string]any{"package": pkg}).Number("data.id")
		for _, b := range []map[string]any{{"event": "step", "step": "nope"}, {"event": "score"}, {"event": "score", "score": 101}, {"event": "dance"}} {
			if r := report(topic, b); r.Status != 422 {
				t.Errorf("%v: %d %s", b, r.Status, r.Body)
			}
		}
		// Only a report completes an app that completes itself: the
		// generic progress write may not.
		res := env.Do(apitest.Request{Method: "PATCH", Path: "/api/courses/progress/" + num(w.course), Token: w.learner.Token,
			Body: map[string]any{"progress": []map[string]any{{"topic_id": topic, "status": "complete"}}}})
		if complete(topic) {
			t.Errorf("progress write completed a self-completing app: %d %s", res.Status, res.Body)
		}
		outsider := env.NewUser("student")
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/interactive/progress/" + num(topic), Token: outsider.Token,
			Body: map[string]any{"event": "open"}}); r.Status != 403 {
			t.Errorf("learner without access: %d %s", r.Status, r.Body)
		}
	})
}

func TestCSPReports(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := w.create(t, map[string]any{"package": w.pkg(t)}).Number("data.id")
		legacy := `{"csp-report":{"document-uri":"http://school.test/api/interactive/play/x/index.html?secret=1",` +
			`"blocked-uri":"http://school.test/api/profile/me?token=abc","violated-directive":"connect-src","effective-directive":"connect-src"}}`
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: legacy, Type: "application/csp-report"})
		if res.Status != 200 {
			t.Fatalf("report: %d %s", res.Status, res.Body)
		}
		modern := `[{"type":"csp-violation","body":{"documentURL":"http://school.test/a.html","blockedURL":"eval","effectiveDirective":"script-src"}}]`
		env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: modern, Type: "application/reports+json"})
		list := env.Call(t, 200, "GET", "/api/admin/topics/"+num(topic)+"/csp-reports", w.tutor.Token, nil)
		if list.Number("meta.total") != 2 || list.String("data.1.blocked_uri") != "http://school.test/api/profile/me" ||
			list.String("data.1.directive") != "connect-src" || list.String("data.0.directive") != "script-src" {
			t.Fatalf("reports: %s", list.Body)
		}
		if strings.Contains(string(list.Body), "secret") || strings.Contains(string(list.Body), "token=") {
			t.Errorf("queries stored: %s", list.Body)
		}
		if r := env.Do(apitest.Request{Method: "GET", Path: "/api/admin/topics/" + num(topic) + "/csp-reports", Token: w.learner.Token}); r.Status != 403 {
			t.Errorf("learner reads reports: %d", r.Status)
		}
		for _, bad := range []string{`{}`, `not json`, `[{"type":"deprecation"}]`} {
			if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: bad, Type: "application/csp-report"}); r.Status != 422 {
				t.Errorf("%s: %d", bad, r.Status)
			}
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=999999", Body: legacy, Type: "application/csp-report"}); r.Status != 404 {
			t.Errorf("unknown topic: %d", r.Status)
		}
		// 60 per minute per IP: the six sent above and 54 more pass.
		for i := 0; i < 54; i++ {
			if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: legacy, Type: "application/csp-report"}); r.Status != 200 {
				t.Fatalf("report %d: %d %s", i, r.Status, r.Body)
			}
		}
		r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: legacy, Type: "application/csp-report"})
		if r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Errorf("61st report: %d %v", r.Status, r.Header)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM csp_reports`); n != 56 {
			t.Errorf("stored %d reports, want 56", n)
		}
	})
}

// TestCSPReportsKeepTheNewest: a tenant keeps its newest 1000 reports;
// each new one pushes out the oldest.
func TestCSPReportsKeepTheNewest(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		topic := w.create(t, map[string]any{"package": w.pkg(t)}).Number("data.id")
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		// 998 older reports, written as the route would.
		err := tenant.Tx(context.Background(), func(tx *sqldb.Tx) error {
			for i := range 998 {
				if _, err := tx.ExecContext(context.Background(), `INSERT INTO csp_reports (topic_id, document_uri, blocked_uri, directive, created_at)
					VALUES ($1, $2, $3, $4, $5)`, int64(topic), "http://school.test/old", fmt.Sprintf("http://old.example/%d", i), "img-src", env.Clock.Now()); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			report := fmt.Sprintf(`{"csp-report":{"document-uri":"http://school.test/new","blocked-uri":"http://new.example/%d","effective-directive":"connect-src"}}`, i)
			if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: report, Type: "application/csp-report"}); r.Status != 200 {
				t.Fatalf("report %d: %d %s", i, r.Status, r.Body)
			}
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM csp_reports`); n != 1000 {
			t.Fatalf("kept %d reports, want 1000", n)
		}
		for _, gone := range []string{"http://old.example/0", "http://old.example/1", "http://old.example/2"} {
			if env.Count(t, `SELECT COUNT(*) FROM csp_reports WHERE blocked_uri = $1`, gone) != 0 {
				t.Errorf("%s kept", gone)
			}
		}
		list := env.Call(t, 200, "GET", "/api/admin/topics/"+num(topic)+"/csp-reports?per_page=1", w.tutor.Token, nil)
		if list.Number("meta.total") != 1000 || list.String("data.0.blocked_uri") != "http://new.example/4" ||
			env.Count(t, `SELECT COUNT(*) FROM csp_reports WHERE blocked_uri = 'http://old.example/3'`) != 1 {
			t.Errorf("newest: %s", list.Body)
		}
	})
}

// TestManifestSchema: the OpenAPI description publishes the manifest's
// schema, which the upload route names.
func TestManifestSchema(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		spec := env.Call(t, 200, "GET", "/api/openapi.json", "", nil)
		required, _ := spec.Get("components.schemas.Manifest.required").([]any)
		if !slices.Contains(required, any("entry")) || !slices.Contains(required, any("steps")) ||
			spec.Number("components.schemas.Manifest.properties.steps.maxItems") != interactive.MaxSteps ||
			spec.Number("components.schemas.Manifest.properties.network.maxItems") != interactive.MaxOrigins {
			t.Fatalf("Manifest schema: %v", spec.Get("components.schemas.Manifest"))
		}
		step, _ := spec.Get("components.schemas.Manifest.properties.steps.items.$ref").(string)
		name := strings.TrimPrefix(step, "#/components/schemas/")
		if spec.String("components.schemas."+name+".properties.id.pattern") != "^[A-Za-z0-9_-]{1,64}$" {
			t.Errorf("step schema %q: %v", step, spec.Get("components.schemas."+name))
		}
		if d := spec.String("paths./api/admin/interactive.post.description"); !strings.Contains(d, "schema Manifest") {
			t.Errorf("the upload route does not name the schema: %q", d)
		}
	})
}
