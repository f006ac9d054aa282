package web

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
	"github.com/lms-platform/lms/internal/server"
)

// fixture returns the path of a shared test package.
func fixture(t *testing.T, rel string) string {
	t.Helper()
	return fixtures.Path(t, rel)
}

// h5pTopic adds an H5P topic made from a package to a lesson.
func h5pTopic(t *testing.T, env *apitest.Env, host, token string, lesson int64, pkg string) int64 {
	t.Helper()
	data, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("lesson", strconv.FormatInt(lesson, 10))
	w.WriteField("title", "Slide through the pictures")
	w.WriteField("topicable", h5pcontent.Class)
	part, _ := w.CreateFormFile("package", "content.h5p")
	part.Write(data)
	w.Close()
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Host: host, Token: token, Body: b.Bytes(),
		Type: w.FormDataContentType()})
	if res.Status != http.StatusCreated {
		t.Fatalf("H5P topic: %d %s", res.Status, res.Body)
	}
	return int64(res.Number("data.id"))
}

// evaluate runs a script that may return a promise.
func evaluate(js string, out any) chromedp.Action {
	return chromedp.Evaluate(js, out, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})
}

// TestLearnerInBrowser is the end-to-end check in Chromium: sign
// in as the demo student with one click (or through the form where demo
// mode is not there), open a course, read a rich-text topic (it
// completes), play an H5P topic (it completes), see both in "my learning";
// a cross-site POST to /bff/ is refused, a path outside the allow-list is
// 404, no cookie is 401, the API stopped is 502, and document.cookie never
// shows the token.
func TestLearnerInBrowser(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.Demo = config.Demo{Enabled: true, StudentEmail: "student@demo.test", TutorEmail: "tutor@demo.test",
			AdminEmail: "admin@demo.test"}
	}})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})

	// The learner's site: a demo tenant when demo mode is there, else the
	// apitest tenant with a learner who signs in through the form.
	host := env.Host
	adminToken := env.As("admin").Token
	demo := false
	if rec, _, err := env.Server.AddTenant(context.Background(), server.NewTenant{Host: "demo.test",
		AdminEmail: "admin@demo.test", AdminPassword: "admin-password", Demo: true}); err == nil && env.Server.Demo != nil {
		if _, err := env.Server.Demo.Seed(context.Background(), rec); err != nil {
			t.Fatalf("demo seed: %v", err)
		}
		if res := env.Do(apitest.Request{Method: "GET", Path: "/api/demo", Host: "demo.test"}); res.Status == 200 && res.Get("data.enabled") == true {
			demo, host = true, "demo.test"
			adminToken, _ = env.Login(host, "admin@demo.test", "admin-password")
		}
	}
	c := seedCourse(t, env, host, adminToken, "Browser course")
	h5pID := h5pTopic(t, env, host, adminToken, c.lesson, fixture(t, "h5p/valid/valid3-3-images.h5p"))
	learner := &apitest.User{Email: "learner@" + host, Password: "learner-password"}
	if !demo {
		learner = env.NewUser("student")
		t.Log("TODO: demo mode is not available yet; the learner signs in through the form")
	}

	// A page of another site that posts a form to the frontend's /bff/.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/bff/api/courses/progress/%d/h5p">
<input name="statement" value="{}"></form><script>document.getElementById('f').submit()</script>`, r.URL.Query().Get("front"), c.reading)
	}))
	defer evil.Close()
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	_, evilPort, _ := strings.Cut(strings.TrimPrefix(evil.URL, "http://"), ":")
	origin := "http://" + host + ":" + frontPort
	ctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts(host, "evil.test"), browsertest.SameProcessFrames())
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*runtime.EventExceptionThrown); ok {
			t.Logf("browser exception: %s", e.ExceptionDetails.Error())
		}
	})
	// Each step waits for its condition in the page, bounded only by the
	// browser session.
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(ctx, `location.href + "\n" + document.body.innerText.slice(0, 2000)`))
		}
	}

	// The catalogue.
	run("catalogue", chromedp.Navigate(origin+"/courses"), chromedp.WaitVisible(`.card-grid`, chromedp.ByQuery))
	browsertest.Screenshot(t, ctx, "web-catalogue")

	// Sign in.
	run("sign-in page", chromedp.Navigate(origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID))
	if demo {
		run("demo login", chromedp.Click(`button[data-demo-role="student"]`, chromedp.ByQuery),
			chromedp.WaitVisible(landed, chromedp.ByQuery))
	} else {
		run("form login",
			chromedp.SendKeys(`#email`, learner.Email, chromedp.ByID),
			chromedp.SendKeys(`#password`, learner.Password, chromedp.ByID),
			chromedp.Submit(`#password`, chromedp.ByID),
			chromedp.WaitVisible(landed, chromedp.ByQuery))
	}
	var cookies []*network.Cookie
	var docCookie string
	run("cookies", chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().WithURLs([]string{origin}).Do(ctx)
		return err
	}), chromedp.Evaluate(`document.cookie`, &docCookie))
	var session *network.Cookie
	for _, ck := range cookies {
		if ck.Name == sessionCookie {
			session = ck
		}
	}
	if session == nil {
		t.Fatalf("no session cookie after signing in: %s",
			browsertest.Show(ctx, `location.href + "\n" + document.body.innerText.slice(0, 2000)`))
	}
	if !session.HTTPOnly || session.SameSite != network.CookieSameSiteLax {
		t.Fatalf("session cookie: %+v", session)
	}
	if strings.Contains(docCookie, session.Value) || strings.Contains(docCookie, sessionCookie) {
		t.Fatalf("document.cookie shows the session: %q", docCookie)
	}

	// Open the course and read the rich-text topic: it completes.
	run("course page", chromedp.Navigate(origin+"/courses/"+id(c.course)),
		chromedp.Click(`a.button[href^="/learn/`+id(c.course)+`/"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#topic`, chromedp.ByID))
	var url string
	run("reading", chromedp.Location(&url))
	if !strings.HasSuffix(url, "/learn/"+id(c.course)+"/"+id(c.reading)) {
		t.Fatalf("start learning led to %s", url)
	}
	run("reading completes", chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
	browsertest.Screenshot(t, ctx, "web-topic")
	if err := chromedp.Run(ctx, evaluate(`document.cookie`, &docCookie)); err != nil || strings.Contains(docCookie, session.Value) {
		t.Fatalf("document.cookie on a topic page: %q %v", docCookie, err)
	}

	// Play the H5P topic: sliding to the end completes it.
	run("h5p page", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(h5pID)),
		chromedp.WaitVisible(`#h5p-frame`, chromedp.ByID))
	var loaded bool
	if err := chromedp.Run(ctx, browsertest.Until(`document.getElementById('h5p-frame').dataset.loaded === '1'`, &loaded)); err != nil {
		t.Fatalf("the H5P content did not load: %v %s", err, browsertest.Show(ctx, `JSON.stringify({
			error: document.getElementById('h5p-frame').dataset.error,
			frame: (function () { try { return document.getElementById('h5p-frame').contentDocument.body.innerText; } catch (e) { return String(e); } })()})`))
	}
	var frames []*cdp.Node
	run("frame", chromedp.Nodes(`#h5p-frame`, &frames, chromedp.ByQuery))
	// The package's slider has three images: two steps each way.
	if err := browsertest.SlideH5PImages(ctx, frames[0], 2); err != nil {
		t.Fatalf("slide: %v", err)
	}
	run("h5p completes", chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
	var frameHeight string
	run("frame height", chromedp.Evaluate(`document.getElementById('h5p-frame').style.height`, &frameHeight))
	if frameHeight == "" {
		t.Error("lms-h5p:resize did not size the frame")
	}
	browsertest.Screenshot(t, ctx, "web-h5p-topic")

	// Both in my learning.
	var both bool
	run("my learning", chromedp.Navigate(origin+"/my"), chromedp.WaitVisible(`.progress-list`, chromedp.ByQuery),
		chromedp.Evaluate(`!!document.querySelector('[data-topic-id="`+id(c.reading)+`"].status-1') &&
			!!document.querySelector('[data-topic-id="`+id(h5pID)+`"].status-1')`, &both),
		chromedp.Evaluate(`document.querySelectorAll('.progress-card details').forEach(function (d) { d.open = true; })`, nil))
	if !both {
		t.Fatal("my learning must show the rich-text and the H5P topic complete")
	}
	browsertest.Screenshot(t, ctx, "web-progress")

	// The BFF rules, from the browser.
	var status int
	run("outside the allow-list", evaluate(`fetch('/bff/api/admin/users').then(function (r) { return r.status; })`, &status))
	if status != 404 {
		t.Fatalf("outside the allow-list: %d", status)
	}
	run("no cookie", evaluate(`fetch('/bff/api/profile/me', {credentials: 'omit'}).then(function (r) { return r.status; })`, &status))
	if status != 401 {
		t.Fatalf("without the cookie: %d", status)
	}
	run("same-origin write", evaluate(`fetch('/bff/api/courses/progress/`+id(c.second)+`/ping', {method: 'PUT'}).then(function (r) { return r.status; })`, &status))
	if status != 200 {
		t.Fatalf("a same-origin write: %d", status)
	}
	var body string
	run("cross-site post", chromedp.Navigate("http://evil.test:"+evilPort+"/?front="+origin),
		chromedp.WaitReady(`body`, chromedp.ByQuery),
		browsertest.Until(`location.host === '`+host+`:`+frontPort+`' && document.body.innerText.length > 0`, nil),
		chromedp.Evaluate(`document.body.innerText`, &body))
	if !strings.Contains(body, "Cross-site requests are not allowed.") {
		t.Fatalf("a cross-site POST to /bff/ must answer 403: %q", body)
	}
	run("back", chromedp.Navigate(origin+"/my"), chromedp.WaitVisible(`.progress-list`, chromedp.ByQuery))
	api.srv.Close()
	run("API stopped", evaluate(`fetch('/bff/api/profile/me').then(function (r) { return r.status; })`, &status))
	if status != 502 {
		t.Fatalf("with the API stopped: %d", status)
	}
	// Signing out clears the session even while the API is away.
	run("sign out", chromedp.Click(`form[action="/logout"] button`, chromedp.ByQuery),
		chromedp.WaitVisible(`a[href="/login"]`, chromedp.ByQuery),
		chromedp.ActionFunc(func(ctx context.Context) error {
			var err error
			cookies, err = network.GetCookies().WithURLs([]string{origin}).Do(ctx)
			return err
		}))
	for _, ck := range cookies {
		if ck.Name == sessionCookie || ck.Name == demoCookie {
			t.Fatalf("cookie %s left after signing out", ck.Name)
		}
	}
}
