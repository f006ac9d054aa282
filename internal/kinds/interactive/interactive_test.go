package interactive_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
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
	author  *client.Client // the tutor's
	course  int64
	lesson  int64
	learner *apitest.User
}

func newWorld(t *testing.T, env *apitest.Env) *world {
	t.Helper()
	ctx, tutor := t.Context(), env.As("tutor")
	author := env.UserClient(tutor)
	course := apitest.Must(author.PostAdminCourses(ctx, client.CourseBody{Title: "Apps", Status: client.Ptr("published")}))(t).ID
	lesson := apitest.Must(author.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Lesson"}))(t).ID
	learner := env.NewUser("student")
	apitest.Must(env.ClientAs("admin").PostAdminCoursesIDAccess(ctx, course,
		client.AssignInputBody{Users: []client.GrantBody{{ID: learner.ID}}}))(t)
	return &world{env: env, tutor: tutor, author: author, course: course, lesson: lesson, learner: learner}
}

// hasError reports whether err is a 422 that names the field.
func hasError(err error, field string) bool {
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 422 {
		return false
	}
	_, ok := e.Errors[field]
	return ok
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

// zipFile is a .zip of the files, as an upload.
func zipFile(t *testing.T, files map[string]string) *client.File {
	return &client.File{Name: "app.zip", Content: bytes.NewReader(interactivetest.Zip(t, files))}
}

// upload sends a package (files by path) as the client's user, optionally
// as the next version of pkg.
func upload(t *testing.T, c *client.Client, files map[string]string, pkg int64) (*client.PackageView, error) {
	t.Helper()
	f := client.PostAdminInteractiveForm{File: zipFile(t, files)}
	if pkg != 0 {
		f.Package = &pkg
	}
	return c.PostAdminInteractive(t.Context(), f)
}

// upload sends a package as the tutor.
func (w *world) upload(t *testing.T, files map[string]string, pkg int64) (*client.PackageView, error) {
	t.Helper()
	return upload(t, w.author, files, pkg)
}

func app(manifest string) map[string]string {
	return map[string]string{"lms-interactive.json": manifest, "index.html": interactivetest.Page, "js/app.js": "console.log(1)"}
}

func (w *world) pkg(t *testing.T) int64 {
	t.Helper()
	return apitest.Must(w.upload(t, app(interactivetest.Manifest), 0))(t).ID
}

// create makes an interactive topic of the lesson as the tutor, with the
// body's fields.
func (w *world) create(t *testing.T, b client.PostAdminTopicsBody) (*client.View, error) {
	t.Helper()
	b.Lesson, b.Title, b.Topicable = w.lesson, "App", interactive.Class
	return w.author.PostAdminTopics(t.Context(), b)
}

// created is the id of a topic create that must succeed.
func (w *world) created(t *testing.T, b client.PostAdminTopicsBody) int64 {
	t.Helper()
	return apitest.Must(w.create(t, b))(t).ID
}

func setting(t *testing.T, env *apitest.Env, key string, value bool) {
	t.Helper()
	apitest.Must(env.ClientAs("admin").PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{{Key: key, Value: value}}}))(t)
}

// p points at v, for the bodies' optional fields.
func p[T any](v T) *T { return &v }

func TestUpload(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		res := apitest.Must(w.upload(t, app(interactivetest.Manifest), 0))(t)
		if res.CurrentVersion != 1 || res.Title != "Pendulum" {
			t.Fatalf("upload: %+v", res)
		}
		pkg := res.ID
		if steps := res.Manifest.Steps; len(steps) < 3 || steps[2].ID != "done" {
			t.Errorf("manifest steps: %+v", res.Manifest)
		}
		// A new version: numbers go on, every version is kept.
		v2 := apitest.Must(w.upload(t, app(strings.Replace(interactivetest.Manifest, "Pendulum", "Pendulum 2", 1)), pkg))(t)
		if v2.ID != pkg || v2.CurrentVersion != 2 || len(v2.Versions) < 2 || v2.Versions[0].Version != 1 || v2.Versions[1].Version != 2 {
			t.Fatalf("second version: %+v", v2)
		}
		apitest.Must(w.author.GetAdminInteractiveID(t.Context(), pkg))(t)
		// Another tutor may not add versions to this tutor's package.
		_, err := upload(t, env.UserClient(env.NewUser("tutor")), app(interactivetest.Manifest), pkg)
		apitest.Refused(t, err, 403)
		_, err = upload(t, env.UserClient(w.learner), map[string]string{"lms-interactive.json": interactivetest.Manifest,
			"index.html": interactivetest.Page}, 0)
		apitest.Refused(t, err, 403)

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
			if _, err := w.upload(t, b.files, 0); !hasError(err, b.field) {
				t.Errorf("%s: %v, want 422 naming %s", b.name, err, b.field)
			}
		}
		// Every problem of a manifest is named at once.
		_, err = w.upload(t, map[string]string{"lms-interactive.json": `{"entry":"/abs.html","steps":[{"id":"","title":"A"}],"network":["ftp://x"]}`}, 0)
		for _, f := range []string{"manifest.entry", "manifest.steps.0.id", "manifest.network.0"} {
			if !hasError(err, f) {
				t.Errorf("all problems: %v lacks %s", err, f)
			}
		}
		_, err = w.author.PostAdminInteractive(t.Context(), client.PostAdminInteractiveForm{
			File: &client.File{Name: "app.zip", Content: strings.NewReader("not a zip")}})
		apitest.Refused(t, err, 422)
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
		netPkg := apitest.Must(w.upload(t, app(netManifest), 0))(t).ID
		onePkg := apitest.Must(w.upload(t, app(`{"entry":"index.html","steps":[{"id":"only","title":"Only"}]}`), 0))(t).ID
		type body = client.PostAdminTopicsBody
		scenarios := []struct {
			name   string
			fields body
			status int
			field  string
			check  map[string]any
		}{
			{"defaults", body{Package: &pkg}, 201, "",
				map[string]any{"version": 1.0, "completion": "on_range_end", "display": "inline", "height": 600.0}},
			{"package required", body{}, 422, "package", nil},
			{"unknown package", body{Package: p[int64](999999)}, 422, "package", nil},
			{"version pinned", body{Package: &pkg, Version: p[int64](1)}, 201, "", map[string]any{"version": 1.0}},
			{"version below 1", body{Package: &pkg, Version: p[int64](0)}, 422, "version", nil},
			{"unknown version", body{Package: &pkg, Version: p[int64](7)}, 422, "version", nil},
			{"followLatest", body{Package: &pkg, FollowLatest: p(true)}, 201, "", map[string]any{"follow_latest": true}},
			{"followLatest with version", body{Package: &pkg, FollowLatest: p(true), Version: p[int64](1)}, 422, "version", nil},
			{"range", body{Package: &pkg, StartStep: p("intro"), EndStep: p("swing")}, 201, "",
				map[string]any{"start_step": "intro", "end_step": "swing"}},
			{"unknown startStep", body{Package: &pkg, StartStep: p("nope")}, 422, "startStep", nil},
			{"unknown endStep", body{Package: &pkg, EndStep: p("nope")}, 422, "endStep", nil},
			{"start after end", body{Package: &pkg, StartStep: p("done"), EndStep: p("intro")}, 422, "endStep", nil},
			{"start equals end", body{Package: &pkg, StartStep: p("swing"), EndStep: p("swing")}, 422, "endStep", nil},
			// The defaults resolved, the range must still run forward.
			{"endStep alone at the first step", body{Package: &pkg, EndStep: p("intro")}, 422, "endStep", nil},
			{"startStep alone at the last step", body{Package: &pkg, StartStep: p("done")}, 422, "startStep", nil},
			{"endStep alone", body{Package: &pkg, EndStep: p("swing")}, 201, "", map[string]any{"end_step": "swing"}},
			{"startStep alone", body{Package: &pkg, StartStep: p("swing")}, 201, "", map[string]any{"start_step": "swing"}},
			{"one step plays just it", body{Package: &onePkg, StartStep: p("only"), EndStep: p("only")}, 201, "", nil},
			{"completion on_open", body{Package: &pkg, Completion: p("on_open")}, 201, "", map[string]any{"completion": "on_open"}},
			{"completion on_complete", body{Package: &pkg, Completion: p("on_complete")}, 201, "", nil},
			{"completion unknown", body{Package: &pkg, Completion: p("sometimes")}, 422, "completion", nil},
			{"on_score needs passScore", body{Package: &pkg, Completion: p("on_score")}, 422, "passScore", nil},
			{"on_score", body{Package: &pkg, Completion: p("on_score"), PassScore: p[int64](80)}, 201, "", map[string]any{"pass_score": 80.0}},
			{"passScore above 100", body{Package: &pkg, Completion: p("on_score"), PassScore: p[int64](101)}, 422, "passScore", nil},
			{"passScore below 0", body{Package: &pkg, Completion: p("on_score"), PassScore: p[int64](-1)}, 422, "passScore", nil},
			{"passScore without on_score", body{Package: &pkg, PassScore: p[int64](50)}, 422, "passScore", nil},
			{"display background", body{Package: &pkg, Display: p("background")}, 201, "", map[string]any{"display": "background"}},
			{"display unknown", body{Package: &pkg, Display: p("popup")}, 422, "display", nil},
			{"height", body{Package: &pkg, Height: p[int64](240)}, 201, "", map[string]any{"height": 240.0}},
			{"height max", body{Package: &pkg, Height: p[int64](2000)}, 201, "", nil},
			{"height too small", body{Package: &pkg, Height: p[int64](239)}, 422, "height", nil},
			{"height too large", body{Package: &pkg, Height: p[int64](2001)}, 422, "height", nil},
			{"height with background", body{Package: &pkg, Display: p("background"), Height: p[int64](400)}, 422, "height", nil},
			{"text", body{Package: &pkg, Text: p("# Try it\n\nSwing the **pendulum**.")}, 201, "",
				map[string]any{"text": "# Try it\n\nSwing the **pendulum**."}},
			{"network not accepted", body{Package: &netPkg}, 422, "acceptNetwork", nil},
			{"network refused by the tenant", body{Package: &netPkg, AcceptNetwork: p(true)}, 422, "acceptNetwork", nil},
		}
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				res, err := w.create(t, sc.fields)
				if sc.status/100 == 2 {
					if err != nil {
						t.Fatalf("%v, want %d", err, sc.status)
					}
				} else if e := apitest.Refused(t, err, sc.status); sc.field != "" && e.Errors[sc.field] == nil {
					t.Errorf("errors lack %s: %v", sc.field, e)
				}
				for path, want := range sc.check {
					if got := apitest.Lookup(res.Topicable, path); got != want {
						t.Errorf("topicable.%s = %v, want %v", path, got, want)
					}
				}
			})
		}
		if res := apitest.Must(w.create(t, body{Package: &pkg, Text: p("**bold**")}))(t); !strings.Contains(apitest.LookupString(res.Topicable, "text_html"), "<strong>bold</strong>") {
			t.Errorf("text html: %+v", res)
		}
		// With the tenant allowing the network, accepting it is enough.
		setting(t, env, interactive.AllowNetworkSetting, true)
		res := apitest.Must(w.create(t, body{Package: &netPkg, AcceptNetwork: p(true)}))(t)
		if apitest.LookupString(res.Topicable, "network.0") != "https://tiles.example.org" {
			t.Fatalf("accepted network: %+v", res)
		}
		// A .zip in the file field makes a package on the way.
		form := func(title string) client.PostAdminTopicsForm {
			return client.PostAdminTopicsForm{Lesson: w.lesson, Title: title, Topicable: interactive.Class,
				File: zipFile(t, app(interactivetest.Manifest))}
		}
		withFile := form("Uploaded")
		withFile.Completion = p("on_open")
		res = apitest.Must(w.author.PostAdminTopicsMultipart(t.Context(), withFile))(t)
		if apitest.Lookup(res.Topicable, "package") == float64(pkg) || apitest.Lookup(res.Topicable, "version") != 1.0 {
			t.Fatalf("create with file: %+v", res)
		}
		both := form("Both")
		both.Package = &pkg
		_, err := w.author.PostAdminTopicsMultipart(t.Context(), both)
		apitest.Refused(t, err, 422)
		// An update keeps what it does not send, and checks the whole again.
		id := w.created(t, body{Package: &pkg, Completion: p("on_score"), PassScore: p[int64](60)})
		patch := func(b client.PatchAdminTopicsIDBody) (*client.View, error) {
			return w.author.PatchAdminTopicsID(t.Context(), id, b)
		}
		res = apitest.Must(patch(client.PatchAdminTopicsIDBody{Height: p[int64](900)}))(t)
		if apitest.Lookup(res.Topicable, "pass_score") != 60.0 || apitest.Lookup(res.Topicable, "height") != 900.0 {
			t.Errorf("update: %+v", res)
		}
		res = apitest.Must(patch(client.PatchAdminTopicsIDBody{Completion: p("on_complete")}))(t)
		if apitest.Lookup(res.Topicable, "pass_score") != nil {
			t.Errorf("passScore kept without on_score: %+v", res)
		}
		_, err = patch(client.PatchAdminTopicsIDBody{EndStep: p("nope")})
		apitest.Refused(t, err, 422)
	})
}

// TestRefusedCreateStoresNothing: a create carrying a .zip in file that
// is refused, by a rule of its manifest or by its own fields, leaves no
// package, version or file behind.
func TestRefusedCreateStoresNothing(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		netManifest := `{"entry":"index.html","steps":[{"id":"a","title":"A"},{"id":"b","title":"B"}],"network":["https://tiles.example.org"]}`
		// create uploads the manifest's app with the form's fields.
		create := func(manifest string, f client.PostAdminTopicsForm) error {
			f.Lesson, f.Title, f.Topicable, f.File = w.lesson, "Uploaded", interactive.Class, zipFile(t, app(manifest))
			_, err := w.author.PostAdminTopicsMultipart(t.Context(), f)
			return err
		}
		refused := []struct {
			name     string
			manifest string
			fields   client.PostAdminTopicsForm
			field    string
		}{
			{"unknown startStep", interactivetest.Manifest, client.PostAdminTopicsForm{StartStep: p("nope")}, "startStep"},
			{"endStep alone at the first step", interactivetest.Manifest, client.PostAdminTopicsForm{EndStep: p("intro")}, "endStep"},
			{"network not accepted", netManifest, client.PostAdminTopicsForm{}, "acceptNetwork"},
			{"network refused by the tenant", netManifest, client.PostAdminTopicsForm{AcceptNetwork: p(true)}, "acceptNetwork"},
			{"version with file", interactivetest.Manifest, client.PostAdminTopicsForm{Version: p[int64](1)}, "version"},
		}
		for _, c := range refused {
			if err := create(c.manifest, c.fields); !hasError(err, c.field) {
				t.Errorf("%s: %v, want 422 naming %s", c.name, err, c.field)
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
		if err := create(interactivetest.Manifest, client.PostAdminTopicsForm{StartStep: p("swing")}); err != nil {
			t.Fatalf("accepted create: %v", err)
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
		pinned := w.created(t, client.PostAdminTopicsBody{Package: &pkg})
		follow := w.created(t, client.PostAdminTopicsBody{Package: &pkg, FollowLatest: p(true)})
		files := app(interactivetest.Manifest)
		files["index.html"] = "<p>Version two</p>"
		apitest.Must(w.upload(t, files, pkg))(t)
		later := w.created(t, client.PostAdminTopicsBody{Package: &pkg})
		oldPin := w.created(t, client.PostAdminTopicsBody{Package: &pkg, Version: p[int64](1)})
		for _, c := range []struct {
			topic int64
			want  string
		}{{pinned, "<p>App</p>"}, {follow, "Version two"}, {later, "Version two"}, {oldPin, "<p>App</p>"}} {
			if body := playFile(t, w, c.topic, "index.html").Body; !strings.Contains(string(body), c.want) {
				t.Errorf("topic %v plays %q, want %q", c.topic, body, c.want)
			}
		}
		if res := apitest.Must(w.author.GetAdminTopicsID(t.Context(), later))(t); apitest.Lookup(res.Topicable, "version") != 2.0 {
			t.Errorf("a topic created after v2 pins v2: %+v", res)
		}
	})
}

// playURL is the topic's play link as the program gives it.
func playURL(t *testing.T, w *world, topic int64) string {
	t.Helper()
	res := apitest.Must(w.author.GetAdminTopicsID(t.Context(), topic))(t)
	u := apitest.LookupString(res.Topicable, "play_url")
	if !strings.HasPrefix(u, "/api/interactive/play/") {
		t.Fatalf("play_url: %+v", res)
	}
	return u
}

func playFile(t *testing.T, w *world, topic int64, file string) *apitest.Response {
	t.Helper()
	return w.env.Do(apitest.Request{Method: "GET", Path: playURL(t, w, topic) + file})
}

func TestPlayback(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		pkg := w.pkg(t)
		topic := w.created(t, client.PostAdminTopicsBody{Package: &pkg})
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
		netPkg := apitest.Must(w.upload(t, app(netManifest), 0))(t).ID
		netTopic := w.created(t, client.PostAdminTopicsBody{Package: &netPkg, AcceptNetwork: p(true)})
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
		learner := env.UserClient(w.learner)
		// program is the learner's view of the topic.
		program := func() any {
			t.Helper()
			res := apitest.Must(learner.GetCoursesIDProgram(ctx, w.course))(t)
			if len(res.Lessons) == 0 || len(res.Lessons[0].Topics) == 0 || res.Lessons[0].Topics[0].ID != topic {
				t.Fatalf("program: %+v", res)
			}
			return res.Lessons[0].Topics[0].Topicable
		}
		if v := program(); !strings.HasPrefix(apitest.LookupString(v, "play_url"), "/api/interactive/play/") ||
			apitest.Lookup(v, "disabled") != nil {
			t.Fatalf("program while enabled: %v", v)
		}
		setting(t, env, interactive.EnabledSetting, false)
		if v := program(); apitest.Lookup(v, "play_url") != nil || apitest.Lookup(v, "disabled") != true {
			t.Errorf("program while disabled: %v", v)
		}
		view := apitest.Must(w.author.GetAdminTopicsID(ctx, topic))(t).Topicable
		if apitest.Lookup(view, "play_url") != nil || apitest.Lookup(view, "disabled") != true || apitest.LookupString(view, "completion") != "on_range_end" {
			t.Errorf("topic view while disabled: %v", view)
		}
		if r := env.Do(apitest.Request{Method: "GET", Path: u + "index.html"}); r.Status != 404 {
			t.Errorf("play while disabled: %d", r.Status)
		}
		_, err := w.create(t, client.PostAdminTopicsBody{Package: &pkg})
		apitest.Refused(t, err, 403)
		_, err = w.upload(t, app(interactivetest.Manifest), 0)
		apitest.Refused(t, err, 403)
		_, err = learner.PostInteractiveProgressID(ctx, topic, client.AppProgressInput{Event: "open"})
		apitest.Refused(t, err, 404)
	})
}

func TestCompletion(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		pkg := w.pkg(t)
		learner := env.UserClient(w.learner)
		report := func(topic int64, body client.AppProgressInput) (*client.AppProgressView, error) {
			return learner.PostInteractiveProgressID(ctx, topic, body)
		}
		complete := func(topic int64) bool {
			t.Helper()
			n := env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND user_id = $2 AND finished_at IS NOT NULL`, topic, w.learner.ID)
			return n == 1
		}
		type body = client.PostAdminTopicsBody
		type event = client.AppProgressInput
		step := func(id string) event { return event{Event: "step", Step: &id} }
		score := func(n int64) event { return event{Event: "score", Score: &n} }
		cases := []struct {
			name    string
			fields  body
			before  []event
			finally event
		}{
			{"on_open", body{Completion: p("on_open")}, nil, event{Event: "open"}},
			{"on_range_end", body{StartStep: p("intro"), EndStep: p("swing")},
				[]event{{Event: "open"}, step("intro"), {Event: "complete"}, score(100)}, step("swing")},
			{"on_range_end default is the last step", body{}, []event{step("swing")}, step("done")},
			{"on_complete", body{Completion: p("on_complete")}, []event{step("done"), score(100)}, event{Event: "complete"}},
			{"on_score", body{Completion: p("on_score"), PassScore: p[int64](70)},
				[]event{{Event: "complete"}, step("done"), score(69)}, score(70)},
		}
		// The answer carries the played range's steps, defaults resolved,
		// for the app's init message.
		for _, c := range []struct {
			fields body
			want   []string
		}{
			{body{StartStep: p("intro"), EndStep: p("swing")}, []string{"intro", "swing"}},
			{body{StartStep: p("swing")}, []string{"swing", "done"}},
			{body{}, []string{"intro", "swing", "done"}},
		} {
			c.fields.Package = &pkg
			res := apitest.Must(report(w.created(t, c.fields), event{Event: "open"}))(t)
			var got []string
			for _, s := range res.Range {
				got = append(got, s.ID)
			}
			if !slices.Equal(got, c.want) || len(res.Range) == 0 || res.Range[0].Title == "" {
				t.Errorf("%+v: range %v, want %v: %+v", c.fields, got, c.want, res)
			}
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				c.fields.Package = &pkg
				topic := w.created(t, c.fields)
				for _, b := range c.before {
					if res, err := report(topic, b); err != nil || res.Completed {
						t.Fatalf("%+v: %+v %v", b, res, err)
					}
				}
				if complete(topic) {
					t.Fatal("complete before the rule was met")
				}
				if res, err := report(topic, c.finally); err != nil || !res.Completed || !complete(topic) {
					t.Fatalf("%+v: %+v %v", c.finally, res, err)
				}
			})
		}
		topic := w.created(t, body{Package: &pkg})
		for _, b := range []event{step("nope"), {Event: "score"}, score(101), {Event: "dance"}} {
			if _, err := report(topic, b); client.StatusOf(err) != 422 {
				t.Errorf("%+v: %v", b, err)
			}
		}
		// Only a report completes an app that completes itself: the
		// generic progress write of "complete" is refused.
		_, err := learner.PatchCoursesProgressID(ctx, w.course, client.WriteInputBody{
			Progress: []client.ProgressWrite{{TopicID: topic, Status: 1}}})
		if e := apitest.Refused(t, err, 422); e.Errors["progress.0.status"] == nil {
			t.Errorf("refusal does not name the status: %v", e)
		}
		if complete(topic) {
			t.Error("progress write completed a self-completing app")
		}
		_, err = env.UserClient(env.NewUser("student")).PostInteractiveProgressID(ctx, topic, event{Event: "open"})
		apitest.Refused(t, err, 403)
	})
}

func TestCSPReports(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.pkg(t)
		topic := w.created(t, client.PostAdminTopicsBody{Package: &pkg})
		legacy := `{"csp-report":{"document-uri":"http://school.test/api/interactive/play/x/index.html?secret=1",` +
			`"blocked-uri":"http://school.test/api/profile/me?token=abc","violated-directive":"connect-src","effective-directive":"connect-src"}}`
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: legacy, Type: "application/csp-report"})
		if res.Status != 200 {
			t.Fatalf("report: %d %s", res.Status, res.Body)
		}
		modern := `[{"type":"csp-violation","body":{"documentURL":"http://school.test/a.html","blockedURL":"eval","effectiveDirective":"script-src"}}]`
		env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: modern, Type: "application/reports+json"})
		reports := func(c *client.Client) (*client.Page[client.CSPReport], error) {
			return c.GetAdminTopicsIDCspReports(t.Context(), topic, client.GetAdminTopicsIDCspReportsParams{})
		}
		list := apitest.Must(reports(w.author))(t)
		if items := list.Items; list.Meta.Total != 2 || len(items) != 2 || items[1].BlockedURI != "http://school.test/api/profile/me" ||
			items[1].Directive != "connect-src" || items[0].Directive != "script-src" {
			t.Fatalf("reports: %+v", list)
		}
		// Every byte of the list, not only the fields the client knows.
		raw := env.Call(t, 200, "GET", "/api/admin/topics/"+num(topic)+"/csp-reports", w.tutor.Token, nil)
		if strings.Contains(string(raw.Body), "secret") || strings.Contains(string(raw.Body), "token=") {
			t.Errorf("queries stored: %s", raw.Body)
		}
		_, err := reports(env.UserClient(w.learner))
		apitest.Refused(t, err, 403)
		for _, bad := range []string{`{}`, `not json`, `[{"type":"deprecation"}]`} {
			if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: bad, Type: "application/csp-report"}); r.Status != 422 {
				t.Errorf("%s: %d", bad, r.Status)
			}
		}
		if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=999999", Body: legacy, Type: "application/csp-report"}); r.Status != 404 {
			t.Errorf("unknown topic: %d", r.Status)
		}
		// 60 per minute per IP: the five sent above about the topic (the
		// unknown topic's did not count) and 55 more pass.
		for i := 0; i < 55; i++ {
			if r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: legacy, Type: "application/csp-report"}); r.Status != 200 {
				t.Fatalf("report %d: %d %s", i, r.Status, r.Body)
			}
		}
		r := env.Do(apitest.Request{Method: "POST", Path: "/api/csp-report?topic=" + num(topic), Body: legacy, Type: "application/csp-report"})
		if r.Status != 429 || r.Header.Get("Retry-After") == "" {
			t.Errorf("61st report: %d %v", r.Status, r.Header)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM csp_reports`); n != 57 {
			t.Errorf("stored %d reports, want 57", n)
		}
	})
}

// TestCSPReportsKeepTheNewest: a tenant keeps its newest 1000 reports;
// each new one pushes out the oldest.
func TestCSPReportsKeepTheNewest(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		pkg := w.pkg(t)
		topic := w.created(t, client.PostAdminTopicsBody{Package: &pkg})
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		// 998 older reports, written as the route would.
		err := tenant.Tx(context.Background(), func(tx *sqldb.Tx) error {
			for i := range 998 {
				if _, err := tx.ExecContext(context.Background(), `INSERT INTO csp_reports (topic_id, document_uri, blocked_uri, directive, created_at)
					VALUES ($1, $2, $3, $4, $5)`, topic, "http://school.test/old", fmt.Sprintf("http://old.example/%d", i), "img-src", env.Clock.Now()); err != nil {
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
		list := apitest.Must(w.author.GetAdminTopicsIDCspReports(t.Context(), topic, client.GetAdminTopicsIDCspReportsParams{PerPage: p[int64](1)}))(t)
		if list.Meta.Total != 1000 || len(list.Items) == 0 || list.Items[0].BlockedURI != "http://new.example/4" ||
			env.Count(t, `SELECT COUNT(*) FROM csp_reports WHERE blocked_uri = 'http://old.example/3'`) != 1 {
			t.Errorf("newest: %+v", list)
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
