package demo_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/demo"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/server"
)

const demoHost = "demo.test"

// demoConfig turns demo mode on (or leaves it off) with fixed accounts.
func demoConfig(on bool, contentDir string) func(*config.Config) {
	return func(c *config.Config) {
		c.Demo = config.Demo{Enabled: on, ResetCron: "0 * * * *", ContentDir: contentDir,
			StudentEmail: "student@demo.local", TutorEmail: "tutor@demo.local", AdminEmail: "admin@demo.local"}
	}
}

// newDemo starts a platform with a demo tenant at demo.test, seeded, whose
// own admin is admin@demo.test / admin-password.
func newDemo(t *testing.T, backend string, on bool, contentDir string) (*apitest.Env, platform.Record) {
	t.Helper()
	env := apitest.New(t, backend, apitest.Options{Configure: demoConfig(on, contentDir)})
	rec, _, err := env.Server.AddTenant(context.Background(), server.NewTenant{Host: demoHost, AdminEmail: "admin@" + demoHost,
		AdminPassword: "admin-password", Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Server.Demo.Seed(context.Background(), rec); err != nil {
		t.Fatalf("seed: %v", err)
	}
	return env, rec
}

// each runs fn on every backend with a seeded demo tenant.
func each(t *testing.T, on bool, contentDir string, fn func(t *testing.T, env *apitest.Env, rec platform.Record)) {
	for _, b := range apitest.Backends(t) {
		t.Run(b, func(t *testing.T) {
			env, rec := newDemo(t, b, on, contentDir)
			fn(t, env, rec)
		})
	}
}

// on sends a request to the demo tenant.
func on(env *apitest.Env, method, path, token string, body any) *apitest.Response {
	return env.Do(apitest.Request{Method: method, Path: path, Host: demoHost, Token: token, Body: body})
}

func demoLogin(t *testing.T, env *apitest.Env, role string) string {
	t.Helper()
	res := on(env, "POST", "/api/demo/login", "", map[string]any{"role": role})
	if res.Status != 200 || res.String("data.token") == "" {
		t.Fatalf("demo login as %s: %d %s", role, res.Status, res.Body)
	}
	return res.String("data.token")
}

func TestDemoRoutesAnswer404WhenOff(t *testing.T) {
	each(t, false, "", func(t *testing.T, env *apitest.Env, rec platform.Record) {
		for _, host := range []string{demoHost, env.Host} {
			res := env.Do(apitest.Request{Method: "POST", Path: "/api/demo/login", Host: host, Body: map[string]any{"role": "student"}})
			if res.Status != 404 || res.Get("success") != false || res.String("message") == "" {
				t.Errorf("%s: login with demo mode off: %d %s", host, res.Status, res.Body)
			}
			if res := env.Do(apitest.Request{Method: "GET", Path: "/api/demo", Host: host}); res.Status != 404 || res.Get("success") != false {
				t.Errorf("%s: GET /api/demo with demo mode off: %d %s", host, res.Status, res.Body)
			}
			if res := env.Do(apitest.Request{Method: "GET", Path: "/api/config", Host: host}); res.Status != 200 || res.Get("data.lms_demo") != nil {
				t.Errorf("%s: /api/config shows lms_demo with demo mode off: %s", host, res.Body)
			}
		}
		if slices.ContainsFunc(env.Server.Jobs.Jobs(), func(j jobs.Job) bool { return j.Name == "demo-reset" }) {
			t.Error("the reset is scheduled with demo mode off")
		}
		if _, err := env.Server.Demo.Reset(context.Background(), rec, demo.ResetOptions{}); !errors.Is(err, demo.ErrDemoOff) {
			t.Errorf("reset with demo mode off: %v", err)
		}
	})
}

func TestDemoModeOnlyOnDemoTenants(t *testing.T) {
	env, _ := newDemo(t, "sqlite", true, "")
	// The default tenant is not a demo tenant: no passwordless login there.
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/demo/login", Body: map[string]any{"role": "admin"}})
	if res.Status != 404 {
		t.Fatalf("demo login on a tenant that is not a demo tenant: %d %s", res.Status, res.Body)
	}
	if res := env.Do(apitest.Request{Method: "GET", Path: "/api/config"}); res.Get("data.lms_demo") != nil {
		t.Fatalf("lms_demo on a tenant that is not a demo tenant: %s", res.Body)
	}
	platformRec, err := env.Server.Registry.Platform(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Server.Demo.Reset(context.Background(), platformRec, demo.ResetOptions{}); !errors.Is(err, demo.ErrPlatform) {
		t.Fatalf("reset of the platform tenant: %v", err)
	}
	if _, err := env.Server.Demo.Reset(context.Background(), env.Tenant, demo.ResetOptions{}); !errors.Is(err, demo.ErrNotDemo) {
		t.Fatalf("reset of a tenant that is not a demo tenant: %v", err)
	}
}

func TestDemoDescriptionAndConfig(t *testing.T) {
	each(t, true, "", func(t *testing.T, env *apitest.Env, rec platform.Record) {
		res := on(env, "GET", "/api/demo", "", nil)
		want := map[string]any{"data.enabled": true, "data.front_url": "http://demo.test:3000", "data.reset_cron": "0 * * * *",
			"data.users.0.role": "student", "data.users.0.email": "student@demo.local",
			"data.users.1.role": "tutor", "data.users.1.email": "tutor@demo.local",
			"data.users.2.role": "admin", "data.users.2.email": "admin@demo.local"}
		for path, v := range want {
			if got := res.Get(path); got != v {
				t.Errorf("GET /api/demo %s = %v, want %v", path, got, v)
			}
		}
		if res.Status != 200 || bytes.Contains(bytes.ToLower(res.Body), []byte("password")) || bytes.Contains(res.Body, []byte("argon2")) {
			t.Errorf("GET /api/demo must never show a password: %d %s", res.Status, res.Body)
		}
		cfg := on(env, "GET", "/api/config", "", nil)
		if cfg.Get("data.lms_demo.enabled") != true || cfg.String("data.lms_demo.front_url") != "http://demo.test:3000" {
			t.Errorf("/api/config lms_demo: %s", cfg.Body)
		}
	})
}

func TestDemoLogin(t *testing.T) {
	each(t, true, "", func(t *testing.T, env *apitest.Env, rec platform.Record) {
		admin, _ := env.Login(demoHost, "admin@"+demoHost, "admin-password")
		// A course published after the seed, open to nobody yet.
		course := on(env, "POST", "/api/admin/courses", admin, map[string]any{"title": "Published later", "status": "published"})
		if course.Status != 201 {
			t.Fatalf("create course: %d %s", course.Status, course.Body)
		}
		program := "/api/courses/" + strconv.Itoa(int(course.Number("data.id"))) + "/program"
		for _, role := range demo.Roles {
			res := on(env, "POST", "/api/demo/login", "", map[string]any{"role": role})
			if res.Status != 200 || res.String("message") != "Login successful." || res.String("data.expires_at") == "" {
				t.Fatalf("demo login as %s: %d %s", role, res.Status, res.Body)
			}
			me := on(env, "GET", "/api/profile/me", res.String("data.token"), nil)
			if me.String("data.email") != role+"@demo.local" || me.String("data.roles.0") != role {
				t.Errorf("%s logged in as %s", role, me.Body)
			}
		}
		// The demo student was given access to every published course.
		student := demoLogin(t, env, "student")
		if res := on(env, "GET", program, student, nil); res.Status != 200 {
			t.Errorf("demo student's program of a course published later: %d %s", res.Status, res.Body)
		}
		list := on(env, "GET", "/api/courses/progress", student, nil)
		catalogue := on(env, "GET", "/api/courses?per_page=100", "", nil)
		if n, ok := list.Get("data").([]any); !ok || len(n) == 0 || len(n) < len(catalogue.Get("data").([]any)) {
			t.Errorf("demo student's courses %s, catalogue %s", list.Body, catalogue.Body)
		}
		if res := on(env, "POST", "/api/demo/login", "", map[string]any{"role": "owner"}); res.Status != 422 {
			t.Errorf("unknown role: %d %s", res.Status, res.Body)
		}
		// The configured account is missing: the first user with the role.
		env.Server.Demo.Config.AdminEmail = "gone@demo.local"
		me := on(env, "GET", "/api/profile/me", demoLogin(t, env, "admin"), nil)
		if me.String("data.email") != "admin@"+demoHost {
			t.Errorf("fallback to the first admin: %s", me.Body)
		}
	})
}

func TestDemoLoginIsLimited(t *testing.T) {
	env, _ := newDemo(t, "sqlite", true, "")
	for i := 0; i < 60; i++ {
		if res := on(env, "POST", "/api/demo/login", "", map[string]any{"role": "tutor"}); res.Status != 200 {
			t.Fatalf("login %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	res := on(env, "POST", "/api/demo/login", "", map[string]any{"role": "tutor"})
	if res.Status != 429 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("61st login in a minute: %d %v %s", res.Status, res.Header, res.Body)
	}
	env.Clock.Advance(time.Minute)
	if res := on(env, "POST", "/api/demo/login", "", map[string]any{"role": "tutor"}); res.Status != 200 {
		t.Fatalf("login in the next minute: %d %s", res.Status, res.Body)
	}
}

// seededTitles are the demo courses without H5P packages.
var seededTitles = []string{"Basics of photography", "Getting started with the platform", "Introduction to data privacy",
	"Packaged course: study habits (SCORM)"}

func catalogueTitles(t *testing.T, env *apitest.Env) []string {
	t.Helper()
	res := on(env, "GET", "/api/courses?per_page=100", "", nil)
	var titles []string
	for _, c := range res.Get("data").([]any) {
		titles = append(titles, c.(map[string]any)["title"].(string))
	}
	slices.Sort(titles)
	return titles
}

func TestSeedUsesEveryTopicKind(t *testing.T) {
	dir := h5pDir(t)
	each(t, true, dir, func(t *testing.T, env *apitest.Env, rec platform.Record) {
		titles := catalogueTitles(t, env)
		want := slices.Clone(seededTitles)
		if dir != "" {
			want = append(want, "Interactive exercises")
			slices.Sort(want)
		}
		if !slices.Equal(titles, want) {
			t.Fatalf("catalogue %v, want %v", titles, want)
		}
		admin, _ := env.Login(demoHost, "admin@"+demoHost, "admin-password")
		res := on(env, "GET", "/api/admin/topics?per_page=100", admin, nil)
		kinds := map[string]int{}
		figures, quiz := 0, false
		for _, tp := range res.Get("data").([]any) {
			kinds[tp.(map[string]any)["kind"].(string)]++
			content, _ := tp.(map[string]any)["topicable"].(map[string]any)
			if lib, _ := content["library"].(string); strings.HasPrefix(lib, "LMS.QuickCheck ") &&
				tp.(map[string]any)["title"] == "Quick check: what did you learn?" {
				quiz = true
			}
			if html, _ := content["html"].(string); strings.Contains(html, `<img src="data:image/png;base64,`) &&
				strings.Contains(html, ` alt="`) {
				figures++
			}
		}
		if !quiz {
			t.Error("no generated quick check among the topics")
		}
		if figures < 3 {
			t.Errorf("%d rich text topics keep their pictures and alt texts", figures)
		}
		for _, k := range []string{"richtext", "image", "pdf", "audio", "video", "project", "h5p", "layout", "quiz", "scorm", "cmi5", "interactive", "liascript"} {
			if kinds[k] == 0 {
				t.Errorf("no %s topic in %v", k, kinds)
			}
		}
		// The generated quick check, and with packages one valid, one refused.
		if want := map[bool]int{false: 1, true: 2}[dir != ""]; kinds["h5p"] != want {
			t.Errorf("H5P topics: %v, want %d", kinds, want)
		}
		// Running the seed again adds nothing.
		rep, err := env.Server.Demo.Seed(context.Background(), rec)
		if err != nil || rep.Courses != 0 || rep.Accounts != 0 {
			t.Fatalf("second seed: %+v %v", rep, err)
		}
		if got := catalogueTitles(t, env); !slices.Equal(got, titles) {
			t.Fatalf("second seed changed the catalogue: %v", got)
		}
	})
}

// h5pDir is a directory with one valid and one broken H5P package copied
// from the shared fixtures, or "" when they are absent.
func h5pDir(t *testing.T) string {
	t.Helper()
	if !fixtures.Has(t, "h5p/valid/h5p-test.h5p") {
		return ""
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{"h5p/valid/h5p-test.h5p": "true-false.h5p", "h5p/invalid/broken-h5p-json.h5p": "broken.h5p"} {
		data := fixtures.Read(t, src)
		if err := os.WriteFile(filepath.Join(dir, dst), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func h5pCount(t *testing.T, env *apitest.Env) int {
	t.Helper()
	res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents?perPage=100", Host: demoHost,
		Headers: map[string]string{"X-Internal-Token": env.Server.Config.InternalKey}})
	if res.Status != 200 {
		t.Fatalf("list H5P content: %d %s", res.Status, res.Body)
	}
	return len(res.Get("data").([]any))
}

func TestReset(t *testing.T) {
	dir := h5pDir(t)
	each(t, true, dir, func(t *testing.T, env *apitest.Env, rec platform.Record) {
		ctx := context.Background()
		before := catalogueTitles(t, env)
		h5pBefore := h5pCount(t, env)
		student := demoLogin(t, env, "student")
		admin, _ := env.Login(demoHost, "admin@"+demoHost, "admin-password")
		// Changes the reset must undo: a course deleted, one added, a file.
		list := on(env, "GET", "/api/admin/courses?per_page=100", admin, nil)
		first := strconv.Itoa(int(list.Number("data.0.id")))
		if res := on(env, "DELETE", "/api/admin/courses/"+first, admin, nil); res.Status != 200 {
			t.Fatalf("delete course: %d %s", res.Status, res.Body)
		}
		on(env, "POST", "/api/admin/courses", admin, map[string]any{"title": "Scratch", "status": "published", "public": true})
		tenant, release := env.OpenTenant(rec)
		if err := tenant.Blob.Put(ctx, "stray/note.txt", strings.NewReader("x"), 1, "text/plain"); err != nil {
			t.Fatal(err)
		}
		release()

		rep, err := env.Server.Demo.Reset(ctx, rec, demo.ResetOptions{})
		if err != nil {
			t.Fatalf("reset: %v", err)
		}
		if rep.AdminEmail != "admin@"+demoHost || rep.AdminPassword != "" {
			t.Errorf("admin after reset: %+v", rep)
		}
		for name, token := range map[string]string{"demo student": student, "admin": admin} {
			if res := on(env, "GET", "/api/profile/me", token, nil); res.Status != 401 {
				t.Errorf("%s's token issued before the reset: %d %s", name, res.Status, res.Body)
			}
		}
		if got := catalogueTitles(t, env); !slices.Equal(got, before) {
			t.Errorf("catalogue after reset %v, want %v", got, before)
		}
		if got := h5pCount(t, env); got != h5pBefore || rep.H5PDeleted != h5pBefore {
			t.Errorf("H5P content after reset: %d (deleted %d), want %d", got, rep.H5PDeleted, h5pBefore)
		}
		// The tenant's admin keeps its password; the demo login works.
		env.Login(demoHost, "admin@"+demoHost, "admin-password")
		demoLogin(t, env, "student")
		if !blobExists(t, env, rec, "stray/note.txt") {
			t.Error("a reset without --wipe-files deleted a file")
		}

		// Too soon and too many: --wipe-files empties the tenant's files
		// before the seed writes its own again.
		if _, err := env.Server.Demo.Reset(ctx, rec, demo.ResetOptions{WipeFiles: true}); err != nil {
			t.Fatalf("reset with wipe: %v", err)
		}
		if blobExists(t, env, rec, "stray/note.txt") {
			t.Error("--wipe-files left a file")
		}
		if n := blobCount(t, env, rec); n == 0 {
			t.Error("the seed after a wipe stored no file")
		}
	})
}

func blobExists(t *testing.T, env *apitest.Env, rec platform.Record, key string) bool {
	t.Helper()
	tenant, release := env.OpenTenant(rec)
	defer release()
	_, err := tenant.Blob.Stat(context.Background(), key)
	return err == nil
}

func blobCount(t *testing.T, env *apitest.Env, rec platform.Record) int {
	t.Helper()
	tenant, release := env.OpenTenant(rec)
	defer release()
	n := 0
	if err := tenant.Blob.List(context.Background(), "", func(blob.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRecapture(t *testing.T) {
	env, rec := newDemo(t, "sqlite", true, "")
	ctx := context.Background()
	admin := demoLogin(t, env, "admin")
	// An operator prepares the demo: a student of their own, a new look.
	res := on(env, "POST", "/api/admin/users", admin, map[string]any{"email": "lee@demo.test", "password": "lee-password",
		"first_name": "Lee", "last_name": "Chen", "roles": []string{"student"}, "is_active": true, "email_verified": true})
	if res.Status != 201 {
		t.Fatalf("create student: %d %s", res.Status, res.Body)
	}
	if res := on(env, "PUT", "/api/profile/settings", admin, map[string]string{"theme": "dark", "accent": "#db2777"}); res.Status != 200 {
		t.Fatalf("settings: %d %s", res.Status, res.Body)
	}
	rep, err := env.Server.Demo.Reset(ctx, rec, demo.ResetOptions{Recapture: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Baseline.Theme != "dark" || rep.Baseline.Accent != "#db2777" || len(rep.Baseline.Students) != 4 {
		t.Fatalf("baseline %+v", rep.Baseline)
	}
	// The student survives resets with its password, and the look too.
	env.Login(demoHost, "lee@demo.test", "lee-password")
	if _, err := env.Server.Demo.Reset(ctx, rec, demo.ResetOptions{}); err != nil {
		t.Fatal(err)
	}
	env.Login(demoHost, "lee@demo.test", "lee-password")
	settings := on(env, "GET", "/api/profile/settings", demoLogin(t, env, "student"), nil)
	if settings.String("data.theme") != "dark" || settings.String("data.accent") != "#db2777" {
		t.Fatalf("demo student's look after reset: %s", settings.Body)
	}
}

func TestScheduledReset(t *testing.T) {
	each(t, true, "", func(t *testing.T, env *apitest.Env, rec platform.Record) {
		ctx := context.Background()
		if !slices.ContainsFunc(env.Server.Jobs.Jobs(), func(j jobs.Job) bool { return j.Name == "demo-reset" }) {
			t.Fatal("the reset is not scheduled in demo mode")
		}
		token := demoLogin(t, env, "student")
		// Just seeded: the first tick leaves the tenant alone.
		if err := env.Server.Jobs.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if res := on(env, "GET", "/api/profile/me", token, nil); res.Status != 200 {
			t.Fatalf("a fresh tenant was reset at once: %d", res.Status)
		}
		// Past the next hour, the tick resets it, once.
		env.Clock.Advance(time.Hour + time.Minute)
		if err := env.Server.Jobs.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if res := on(env, "GET", "/api/profile/me", token, nil); res.Status != 401 {
			t.Fatalf("token after the scheduled reset: %d", res.Status)
		}
		token = demoLogin(t, env, "student")
		if err := env.Server.Jobs.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if res := on(env, "GET", "/api/profile/me", token, nil); res.Status != 200 {
			t.Fatalf("the reset ran twice in one hour: %d", res.Status)
		}
		last, err := env.Server.Demo.LastReset(ctx, rec.ID)
		if err != nil || last == nil || last.Before(env.Clock.Now().Add(-time.Second)) {
			t.Fatalf("last reset %v %v", last, err)
		}
	})
}

// At start-up the server seeds demo tenants that have no course.
func TestSeedIfEmpty(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{Configure: demoConfig(true, "")})
	ctx := context.Background()
	if _, _, err := env.Server.AddTenant(ctx, server.NewTenant{Host: demoHost, AdminPassword: "admin-password", Demo: true}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := env.Server.Demo.SeedIfEmpty(ctx); err != nil {
			t.Fatal(err)
		}
		if got := catalogueTitles(t, env); !slices.Equal(got, seededTitles) {
			t.Fatalf("run %d: catalogue %v", i+1, got)
		}
	}
	// Other tenants are left alone.
	if res := env.Do(apitest.Request{Method: "GET", Path: "/api/courses"}); len(res.Get("data").([]any)) != 0 {
		t.Fatalf("a tenant that is not a demo tenant was seeded: %s", res.Body)
	}
}
