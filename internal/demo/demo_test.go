package demo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
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

// demoAs is the typed client of the demo tenant signed in with token
// ("": anonymous).
func demoAs(env *apitest.Env, token string) *client.Client { return env.Client(demoHost, token) }

func demoLogin(t *testing.T, env *apitest.Env, role string) string {
	t.Helper()
	issued := apitest.Must(demoAs(env, "").PostDemoLogin(t.Context(), client.DemoLoginInputBody{Role: role}))(t)
	if issued.Token == "" {
		t.Fatalf("demo login as %s: %+v", role, issued)
	}
	return issued.Token
}

// email is the e-mail address of the token's user.
func email(t *testing.T, env *apitest.Env, token string) string {
	t.Helper()
	return apitest.Must(demoAs(env, token).GetProfileMe(t.Context()))(t).Email
}

// signedIn reports whether the token still signs its user in: a 200 or,
// for a revoked token, a 401.
func signedIn(t *testing.T, env *apitest.Env, token string) bool {
	t.Helper()
	_, err := demoAs(env, token).GetProfileMe(t.Context())
	if err != nil && client.StatusOf(err) != 401 {
		t.Fatalf("profile: %v", err)
	}
	return err == nil
}

func TestDemoRoutesAnswer404WhenOff(t *testing.T) {
	each(t, false, "", func(t *testing.T, env *apitest.Env, rec platform.Record) {
		// The refusals' envelopes (success false, a message) are read raw.
		for _, host := range []string{demoHost, env.Host} {
			res := env.Do(apitest.Request{Method: "POST", Path: "/api/demo/login", Host: host, Body: map[string]any{"role": "student"}})
			if res.Status != 404 || res.Get("success") != false || res.String("message") == "" {
				t.Errorf("%s: login with demo mode off: %d %s", host, res.Status, res.Body)
			}
			if res := env.Do(apitest.Request{Method: "GET", Path: "/api/demo", Host: host}); res.Status != 404 || res.Get("success") != false {
				t.Errorf("%s: GET /api/demo with demo mode off: %d %s", host, res.Status, res.Body)
			}
			if cfg, err := env.Client(host, "").GetConfig(t.Context()); err != nil || cfg["lms_demo"] != nil {
				t.Errorf("%s: /api/config shows lms_demo with demo mode off: %v %v", host, cfg, err)
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
	anonymous := env.ClientAs("anonymous")
	_, err := anonymous.PostDemoLogin(t.Context(), client.DemoLoginInputBody{Role: "admin"})
	apitest.Refused(t, err, 404)
	if cfg := apitest.Must(anonymous.GetConfig(t.Context()))(t); cfg["lms_demo"] != nil {
		t.Fatalf("lms_demo on a tenant that is not a demo tenant: %v", cfg)
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
		cfg := apitest.Must(demoAs(env, "").GetConfig(t.Context()))(t)
		if apitest.Lookup(cfg, "lms_demo.enabled") != true || apitest.LookupString(cfg, "lms_demo.front_url") != "http://demo.test:3000" {
			t.Errorf("/api/config lms_demo: %v", cfg)
		}
	})
}

func TestDemoLogin(t *testing.T) {
	each(t, true, "", func(t *testing.T, env *apitest.Env, rec platform.Record) {
		ctx := t.Context()
		admin, _ := env.Login(demoHost, "admin@"+demoHost, "admin-password")
		// A course published after the seed, open to nobody yet.
		course := apitest.Must(demoAs(env, admin).PostAdminCourses(ctx, client.CourseBody{Title: "Published later",
			Status: client.Ptr("published")}))(t).ID
		for _, role := range demo.Roles {
			// The answer's message is read from the envelope, raw.
			res := on(env, "POST", "/api/demo/login", "", map[string]any{"role": role})
			if res.Status != 200 || res.String("message") != "Login successful." || res.String("data.expires_at") == "" {
				t.Fatalf("demo login as %s: %d %s", role, res.Status, res.Body)
			}
			me := apitest.Must(demoAs(env, res.String("data.token")).GetProfileMe(ctx))(t)
			if me.Email != role+"@demo.local" || len(me.Roles) == 0 || me.Roles[0] != role {
				t.Errorf("%s logged in as %+v", role, me)
			}
		}
		// The demo student was given access to every published course.
		student := demoAs(env, demoLogin(t, env, "student"))
		if _, err := student.GetCoursesIDProgram(ctx, course); err != nil {
			t.Errorf("demo student's program of a course published later: %v", err)
		}
		list := apitest.Must(student.GetCoursesProgress(ctx, client.GetCoursesProgressParams{}))(t)
		catalogue := apitest.Must(demoAs(env, "").GetCourses(ctx, client.GetCoursesParams{PerPage: client.Ptr(int64(100))}))(t)
		if len(list) == 0 || len(list) < len(catalogue.Items) {
			t.Errorf("demo student's courses %+v, catalogue %+v", list, catalogue.Items)
		}
		_, err := demoAs(env, "").PostDemoLogin(ctx, client.DemoLoginInputBody{Role: "owner"})
		apitest.Refused(t, err, 422)
		// The configured account is missing: the first user with the role.
		env.Server.Demo.Config.AdminEmail = "gone@demo.local"
		if got := email(t, env, demoLogin(t, env, "admin")); got != "admin@"+demoHost {
			t.Errorf("fallback to the first admin: %s", got)
		}
	})
}

func TestDemoLoginIsLimited(t *testing.T) {
	env, _ := newDemo(t, "sqlite", true, "")
	login := func() error {
		_, err := demoAs(env, "").PostDemoLogin(t.Context(), client.DemoLoginInputBody{Role: "tutor"})
		return err
	}
	for i := 0; i < 60; i++ {
		if err := login(); err != nil {
			t.Fatalf("login %d: %v", i+1, err)
		}
	}
	// The refusal carries a Retry-After header (the client's RetryAfter).
	if e := apitest.Refused(t, login(), 429); e.RetryAfter <= 0 {
		t.Fatalf("61st login in a minute: no Retry-After: %v", e)
	}
	env.Clock.Advance(time.Minute)
	if err := login(); err != nil {
		t.Fatalf("login in the next minute: %v", err)
	}
}

// seededTitles are the demo courses without H5P packages.
var seededTitles = []string{"Basics of photography", "Getting started with the platform", "Introduction to data privacy",
	"Packaged course: study habits (SCORM)"}

func catalogueTitles(t *testing.T, env *apitest.Env) []string {
	t.Helper()
	page := apitest.Must(demoAs(env, "").GetCourses(t.Context(), client.GetCoursesParams{PerPage: client.Ptr(int64(100))}))(t)
	var titles []string
	for _, c := range page.Items {
		titles = append(titles, c.Title)
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
		topics := apitest.Must(demoAs(env, admin).GetAdminTopics(t.Context(), client.GetAdminTopicsParams{PerPage: client.Ptr(int64(100))}))(t)
		kinds := map[string]int{}
		figures, quiz := 0, false
		for _, tp := range topics.Items {
			kinds[tp.Kind]++
			content, _ := tp.Topicable.(map[string]any)
			if lib, _ := content["library"].(string); strings.HasPrefix(lib, "LMS.QuickCheck ") &&
				tp.Title == "Quick check: what did you learn?" {
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
		// The timed quiz runs the time its duration states: a learner
		// reads "5 min" and gets 5 minutes, not the tenant's default hour.
		for _, tp := range topics.Items {
			if tp.Kind != "quiz" {
				continue
			}
			var minutes int64
			if _, err := fmt.Sscanf(tp.Duration, "%d min", &minutes); err != nil {
				t.Fatalf("quiz %q states no duration in minutes: %q", tp.Title, tp.Duration)
			}
			a := apitest.Must(demoAs(env, demoLogin(t, env, "student")).PostQuizAttempts(t.Context(), client.StartInputBody{TopicID: tp.ID}))(t)
			if a.SecondsLeft > minutes*60 || a.SecondsLeft < (minutes-1)*60 {
				t.Errorf("quiz %q says %q and its attempt has %d s", tp.Title, tp.Duration, a.SecondsLeft)
			}
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
	page := apitest.Must(demoAs(env, "").WithHeader("X-Internal-Token", env.Server.Config.InternalKey).GetH5PContents(t.Context(),
		client.GetH5PContentsParams{PerPage: client.Ptr(int64(100))}))(t)
	return len(page.Items)
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
		adminC := demoAs(env, admin)
		list := apitest.Must(adminC.GetAdminCourses(ctx, client.GetAdminCoursesParams{PerPage: client.Ptr(int64(100))}))(t)
		if len(list.Items) == 0 {
			t.Fatal("no course to delete")
		}
		apitest.OK(t, adminC.DeleteAdminCoursesID(ctx, list.Items[0].ID))
		apitest.Must(adminC.PostAdminCourses(ctx, client.CourseBody{Title: "Scratch", Status: client.Ptr("published"), Public: client.Ptr(true)}))(t)
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
			if signedIn(t, env, token) {
				t.Errorf("%s's token issued before the reset still signs in", name)
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
	adminC := demoAs(env, admin)
	apitest.Must(adminC.PostAdminUsers(ctx, client.CreateUserInputBody{Email: "lee@demo.test", Password: client.Ptr("lee-password"),
		FirstName: "Lee", LastName: "Chen", Roles: []string{"student"}, IsActive: client.Ptr(true), EmailVerified: client.Ptr(true)}))(t)
	apitest.Must(adminC.PutProfileSettings(ctx, map[string]string{"theme": "dark", "accent": "#db2777"}))(t)
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
	settings := apitest.Must(demoAs(env, demoLogin(t, env, "student")).GetProfileSettings(ctx))(t)
	if settings["theme"] != "dark" || settings["accent"] != "#db2777" {
		t.Fatalf("demo student's look after reset: %v", settings)
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
		if !signedIn(t, env, token) {
			t.Fatal("a fresh tenant was reset at once")
		}
		// Past the next hour, the tick resets it, once.
		env.Clock.Advance(time.Hour + time.Minute)
		if err := env.Server.Jobs.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if signedIn(t, env, token) {
			t.Fatal("the token still signs in after the scheduled reset")
		}
		token = demoLogin(t, env, "student")
		if err := env.Server.Jobs.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if !signedIn(t, env, token) {
			t.Fatal("the reset ran twice in one hour")
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
	if page := apitest.Must(env.ClientAs("anonymous").GetCourses(ctx, client.GetCoursesParams{}))(t); len(page.Items) != 0 {
		t.Fatalf("a tenant that is not a demo tenant was seeded: %+v", page.Items)
	}
}
