package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/media/mediatest"
	"github.com/lms-platform/lms/internal/queue/queuetest"
	"github.com/lms-platform/lms/internal/server"
)

// The demo's film, made by the program and transcoded by the job queue,
// plays in Chromium with nothing but this machine: the demo student signs
// in with one click, opens the video topic and its time runs.
func TestDemoFilmPlaysInChromium(t *testing.T) {
	mediatest.NeedFFmpeg(t)
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.Demo = config.Demo{Enabled: true, StudentEmail: "student@demo.test", TutorEmail: "tutor@demo.test",
			AdminEmail: "admin@demo.test"}
	}})
	ctx := context.Background()
	rec, _, err := env.Server.AddTenant(ctx, server.NewTenant{Host: "demo.test", AdminEmail: "owner@demo.test",
		AdminPassword: "admin-password", Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Server.Demo.Seed(ctx, rec); err != nil {
		t.Fatal(err)
	}
	admin, _ := env.Login("demo.test", "owner@demo.test", "admin-password")
	var film, course int64
	topics := env.Do(apitest.Request{Method: "GET", Path: "/api/admin/topics?per_page=100", Host: "demo.test", Token: admin})
	for _, tp := range topics.Get("data").([]any) {
		tp := tp.(map[string]any)
		if tp["title"] == "Watch: how your progress grows" {
			film = int64(tp["id"].(float64))
			course = int64(tp["course_id"].(float64))
		}
	}
	if film == 0 || course == 0 {
		t.Fatalf("no film among the demo's topics: %s", topics.Body)
	}
	queuetest.Run(t, env.Server.Queue)
	for {
		op := env.Do(apitest.Request{Method: "GET", Path: "/api/admin/operations/video:" + id(film) + "?wait=30",
			Host: "demo.test", Token: admin})
		if op.Status != 200 {
			t.Fatalf("operation: %d %s", op.Status, op.Body)
		}
		if op.Get("data.done") == true {
			if op.String("data.state") != "ready" {
				t.Fatalf("the film was not transcoded: %s", op.Body)
			}
			break
		}
	}

	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	_, port, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	origin := "http://demo.test:" + port
	bctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts("demo.test"))
	run := (&browserRun{t: t, ctx: bctx}).run
	run("demo sign-in", chromedp.Navigate(origin+"/login"),
		chromedp.Click(`button[data-demo-role="student"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`a[href="/my"]`, chromedp.ByQuery))
	run("open the film", chromedp.Navigate(origin+"/learn/"+id(course)+"/"+id(film)),
		browsertest.Until(`!!document.querySelector('video[data-hls]') && !!document.getElementById('topic-media').dataset.player`, nil))
	run("play", chromedp.Evaluate(`(function(){var v=document.getElementById('topic-media'); v.muted=true; v.play(); return true})()`, nil),
		browsertest.Until(`(function(){var v=document.getElementById('topic-media'); return !v.error && v.currentTime > 2})()`, nil))
	var width int
	run("picture", chromedp.Evaluate(`document.getElementById('topic-media').videoWidth`, &width))
	if width < 320 {
		t.Fatalf("the film plays %d pixels wide", width)
	}
	browsertest.Screenshot(t, bctx, "web-demo-film")
}

// In Chromium a learner opens the certificates page from the header and
// the page's download link answers the PDF.
func TestCertificateDownloadInChromium(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	admin := s.env.As("admin").Token
	learner := s.env.NewUser("student")
	finishCourse(t, s, admin, learner)

	_, port, _ := strings.Cut(strings.TrimPrefix(s.srv.URL, "http://"), ":")
	origin := "http://" + s.env.Host + ":" + port
	bctx := browsertest.New(t, 2*time.Minute, browsertest.MapHosts(s.env.Host))
	run := (&browserRun{t: t, ctx: bctx}).run
	run("sign in", signIn(origin, learner), chromedp.WaitVisible(`a[href="/certificates"]`, chromedp.ByQuery))
	run("certificates", chromedp.Click(`a[href="/certificates"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`a[download][href^="/api/files/"]`, chromedp.ByQuery))
	var got string
	run("download", evaluate(`(async function(){
		var r = await fetch(document.querySelector('a[download]').href);
		var b = new Uint8Array(await r.arrayBuffer());
		return r.status + " " + r.headers.get('content-type') + " " + String.fromCharCode.apply(null, b.slice(0, 5));
	})()`, &got))
	if got != "200 application/pdf %PDF-" {
		t.Fatalf("the download link answers %q", got)
	}
	browsertest.Screenshot(t, bctx, "web-certificates")
}

// signIn fills and sends the sign-in form at origin as u.
func signIn(origin string, u *apitest.User) chromedp.Tasks {
	return chromedp.Tasks{chromedp.Navigate(origin + "/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, u.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, u.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID)}
}
