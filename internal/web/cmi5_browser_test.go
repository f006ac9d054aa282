package web

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/demo/cmi5demo"
	"github.com/lms-platform/lms/internal/fixtures"
)

const cmi5Class = `Lms\TopicTypes\Models\TopicContent\Cmi5Au`

// cmi5Package uploads a cmi5 package of the shared fixtures and returns
// its id and the ids of its AUs, in order.
func cmi5Package(t *testing.T, env *apitest.Env, token, rel string) (int64, []int64) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("package", "course.zip")
	part.Write(fixtures.Read(t, rel))
	w.Close()
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/cmi5", Token: token, Body: b.Bytes(), Type: w.FormDataContentType()})
	if res.Status != 201 {
		t.Fatalf("cmi5 upload %s: %d %s", rel, res.Status, res.Body)
	}
	aus, _ := res.Get("data.aus").([]any)
	ids := make([]int64, len(aus))
	for i := range aus {
		ids[i] = int64(res.Number("data.aus." + id(int64(i)) + ".id"))
	}
	return int64(res.Number("data.id")), ids
}

// cmi5Topic adds a topic playing one AU of a package to a lesson.
func cmi5Topic(t *testing.T, env *apitest.Env, token string, lesson, pkg, au int64, title string) int64 {
	t.Helper()
	return int64(env.Call(t, 201, "POST", "/api/admin/topics", token, map[string]any{"lesson": lesson, "title": title,
		"topicable": cmi5Class, "package": pkg, "au": au}).Number("data.id"))
}

// cmi5Site is the API on SQLite with the frontend before it, and a
// published public course of the tenant's admin.
func cmi5Site(t *testing.T, title string) (*apitest.Env, *front, *apitest.User, seeded) {
	t.Helper()
	env := apitest.New(t, "sqlite", apitest.Options{})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	admin := env.As("admin")
	return env, f, admin, seedCourse(t, env, env.Host, admin.Token, title)
}

// cmi5Browser is a signed-in learner's browser on the frontend.
type cmi5Browser struct {
	t      *testing.T
	ctx    context.Context
	origin string
	// content is the content origin, where the AU runs.
	content string
}

func (b *cmi5Browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(b.ctx, `location.href + "\n" + document.body.innerText.slice(0, 1500) +
			"\n--- frame: " + (function () { try { var f = document.getElementById('cmi5-frame');
			return f.contentWindow.location.href + "\n" + f.contentDocument.body.innerText.slice(0, 1500); } catch (e) { return String(e); } })()`))
	}
}

// frame is the AU's iframe node, read anew: its document changes with
// every launch.
func (b *cmi5Browser) frame() *cdp.Node {
	b.t.Helper()
	var nodes []*cdp.Node
	b.run("frame", chromedp.Nodes(`#cmi5-frame`, &nodes, chromedp.ByQuery))
	return nodes[0]
}

// inFrame waits for expr to hold in the AU's frame, polling again when a
// navigation of the frame ends a poll. The AU runs on the content origin:
// the topic page cannot look into the frame, the test can.
func (b *cmi5Browser) inFrame(what string, f *cdp.Node, expr string) {
	b.t.Helper()
	b.frameValue(what, f, expr, nil)
}

// frameValue waits for expr to hold in the AU's frame and stores its
// value in res.
func (b *cmi5Browser) frameValue(what string, f *cdp.Node, expr string, res any) {
	b.t.Helper()
	b.run(what, chromedp.ActionFunc(func(ctx context.Context) error {
		for {
			err := browsertest.Until(expr, res, chromedp.WithPollingInFrame(f)).Do(ctx)
			// Before the frame's first document has a script context,
			// the browser names none: that is a wait too.
			if err == nil || ctx.Err() != nil || !navigated(err) && !strings.Contains(err.Error(), "executionContextId") {
				return err
			}
		}
	}))
}

// start opens the topic page and presses the start button: the AU loads
// in the frame from this origin. It returns the frame once the AU has
// initialized, and the launch URL's parameters.
func (b *cmi5Browser) start(course, topic int64) (*cdp.Node, url.Values) {
	b.t.Helper()
	return b.startUntil(course, topic, catapultReady)
}

// catapultReady holds once a CATAPULT AU has initialized: its navigation
// is drawn, or it asks about its bookmark.
const catapultReady = `!!document.querySelector('.navmenuitem.seen, #bookmark-overlay.full-overlay-visible')`

// startUntil is start for an AU whose readiness ready tells.
func (b *cmi5Browser) startUntil(course, topic int64, ready string) (*cdp.Node, url.Values) {
	b.t.Helper()
	b.run("topic page", chromedp.Navigate(b.origin+"/learn/"+id(course)+"/"+id(topic)),
		chromedp.WaitVisible(`#cmi5-start`, chromedp.ByID), chromedp.Click(`#cmi5-start`, chromedp.ByID),
		browsertest.Until(`!document.getElementById('cmi5-frame').hidden`, nil))
	f := b.frame()
	var href string
	b.frameValue("AU loaded", f, `location.origin === '`+b.content+`' && location.pathname.indexOf('/api/cmi5/content/') === 0 &&
		document.readyState === 'complete' && location.href`, &href)
	// The node again: it holds the AU's document now.
	f = b.frame()
	b.inFrame("AU initialized", f, ready)
	u, err := url.Parse(href)
	if err != nil {
		b.t.Fatal(err)
	}
	q := u.Query()
	for _, k := range []string{"endpoint", "fetch"} {
		if !strings.HasPrefix(q.Get(k), b.content+"/api/") {
			b.t.Fatalf("the launch URL's %s is not on the content origin: %s", k, q.Get(k))
		}
	}
	return f, q
}

// acrossNavigation waits for expr to hold in the page, polling again when
// a navigation of the page ends a poll.
func acrossNavigation(expr string) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		for {
			err := browsertest.Until(expr, nil).Do(ctx)
			if err == nil || ctx.Err() != nil || !navigated(err) {
				return err
			}
		}
	})
}

func navigated(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "navigated or closed") || strings.Contains(msg, "Execution context was destroyed") ||
		strings.Contains(msg, "Cannot find context")
}

// settled holds in the AU's frame once no statement is on its way: the
// AU disables its exit buttons while one is.
const settled = `!document.querySelector('.navexit .exit-button').disabled`

// exit presses the AU's exit button matching sel: the AU terminates and
// sends the learner to the return URL, which takes the whole page back
// to the topic.
func (b *cmi5Browser) exit(f *cdp.Node, sel string, course, topic int64) {
	b.t.Helper()
	b.inFrame("statements sent", f, settled)
	b.leave(f, sel, course, topic)
}

// leave presses the button sel of the AU that ends its session and waits
// for the topic page the AU returns to.
func (b *cmi5Browser) leave(f *cdp.Node, sel string, course, topic int64) {
	b.t.Helper()
	b.run("leave the AU", chromedp.Evaluate(`window.leftBehind = true`, nil),
		chromedp.Click(sel, chromedp.ByQuery, chromedp.FromNode(f)),
		acrossNavigation(`!window.leftBehind && location.pathname === '/learn/`+id(course)+`/`+id(topic)+`' &&
			document.readyState === 'complete'`))
}

func (b *cmi5Browser) complete(what string) {
	b.t.Helper()
	var ok bool
	b.run(what, chromedp.Evaluate(`!!document.querySelector('#topic-status.status-1')`, &ok))
	if !ok {
		b.t.Fatalf("%s: the topic is not complete: %s", what, browsertest.Show(b.ctx, `document.getElementById('topic-status').textContent`))
	}
}

func newCmi5Browser(t *testing.T, env *apitest.Env, f *front, learner *apitest.User) *cmi5Browser {
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	b := &cmi5Browser{t: t, origin: "http://" + env.Host + ":" + frontPort, content: "http://" + env.Host + ":" + f.contentPort}
	b.ctx = browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host), browsertest.SameProcessFrames())
	chromedp.ListenTarget(b.ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Logf("browser exception: %s", e.ExceptionDetails.Error())
		case *page.EventJavascriptDialogOpening:
			// The AU alerts when it cannot reach the LRS: say so, and let
			// the page go on (the test then fails on its conditions).
			t.Logf("dialog: %s", e.Message)
			go chromedp.Run(b.ctx, page.HandleJavaScriptDialog(true))
		}
	})
	b.run("sign in", chromedp.Navigate(b.origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(landed, chromedp.ByQuery))
	return b
}

// statements queries the LRS as the tenant's admin.
func statements(t *testing.T, env *apitest.Env, token string, q url.Values) []any {
	t.Helper()
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/statements?" + q.Encode(), Token: token,
		Headers: map[string]string{"X-Experience-API-Version": "1.0.3"}})
	if res.Status != 200 {
		t.Fatalf("statements %v: %d %s", q, res.Status, res.Body)
	}
	list, _ := res.Get("statements").([]any)
	return list
}

const (
	verbSatisfied  = "https://w3id.org/xapi/adl/verbs/satisfied"
	verbAbandoned  = "https://w3id.org/xapi/adl/verbs/abandoned"
	verbTerminated = "http://adlnet.gov/expapi/verbs/terminated"
	verbPassed     = "http://adlnet.gov/expapi/verbs/passed"
)

// TestCmi5SingleAUInBrowser plays CATAPULT's single-AU course through the
// frontend: the learner pages through it, passes its quiz with its own
// "select correct answers" button and exits; the topic completes and the
// course is satisfied. A second session resumes the same registration at
// the bookmark. A third, left without terminating (the network is gone
// when the page closes), is abandoned by the next launch.
func TestCmi5SingleAUInBrowser(t *testing.T) {
	env, f, admin, c := cmi5Site(t, "Geology")
	pkg, aus := cmi5Package(t, env, admin.Token, "cmi5/single_au_basic_responsive.zip")
	topic := cmi5Topic(t, env, admin.Token, c.lesson, pkg, aus[0], "Introduction to Geology")
	learner := env.NewUser("student")
	b := newCmi5Browser(t, env, f, learner)

	// Session 1: page through to the quiz, pass it, exit.
	frame, launch := b.start(c.course, topic)
	reg := launch.Get("registration")
	if reg == "" {
		t.Fatal("no registration in the launch URL")
	}
	browsertest.Screenshot(t, b.ctx, "web-cmi5-single")
	var pages int
	b.frameValue("pages", frame, `document.querySelectorAll('.navmenuitem').length`, &pages)
	if pages < 3 {
		t.Fatalf("the AU shows %d pages", pages)
	}
	for i := 1; i < pages; i++ {
		b.run("next page", chromedp.Click(`.footerbar`, chromedp.ByQuery, chromedp.FromNode(frame)))
		b.inFrame("page "+id(int64(i)), frame, `document.querySelectorAll('.navmenuitem.seen').length === `+id(int64(i+1))+` && `+settled)
	}
	b.run("quiz", chromedp.Click(`button[onclick="course.autopass()"]`, chromedp.ByQuery, chromedp.FromNode(frame)),
		chromedp.Click(`button[onclick="course.submitAnswers()"]`, chromedp.ByQuery, chromedp.FromNode(frame)))
	b.inFrame("passed", frame, `document.getElementById('score-passed').classList.contains('visible') && `+settled)
	// The AU keeps its bookmark in the registration's state.
	state := env.Do(apitest.Request{Method: "GET", Path: "/api/xapi/activities/state?" + url.Values{"stateId": {"suspendData"},
		"activityId": {launch.Get("activityId")}, "agent": {launch.Get("actor")}, "registration": {reg}}.Encode(),
		Token: admin.Token, Headers: map[string]string{"X-Experience-API-Version": "1.0.3"}})
	if state.Status != 200 || state.String("bookmark") != "quiz" {
		t.Fatalf("bookmark after the quiz: %d %s", state.Status, state.Body)
	}
	browsertest.Screenshot(t, b.ctx, "web-cmi5-passed")
	b.exit(frame, `#score-panel .exit-button`, c.course, topic)
	b.complete("after the first session")
	browsertest.Screenshot(t, b.ctx, "web-cmi5-complete")
	regQ := url.Values{"registration": {reg}}
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbSatisfied}})); n != 1 {
		t.Fatalf("satisfied statements (the course): %d", n)
	}
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbTerminated}})); n != 1 {
		t.Fatalf("terminated statements: %d", n)
	}
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbPassed}})); n != 1 {
		t.Fatalf("passed statements: %d", n)
	}
	prog := env.Call(t, 200, "GET", "/api/courses/progress/"+id(c.course), learner.Token, nil)
	if !strings.Contains(string(prog.Body), `"topic_id":`+id(topic)+`,`) {
		t.Fatalf("progress: %s", prog.Body)
	}

	// Session 2: the same registration, resumed at the bookmark.
	frame, launch2 := b.start(c.course, topic)
	if reg2 := launch2.Get("registration"); reg2 != reg {
		t.Fatalf("the second session's registration %s is not the first's %s", reg2, reg)
	}
	b.inFrame("asks to resume", frame, `document.getElementById('bookmark-overlay').classList.contains('full-overlay-visible')`)
	b.run("resume", chromedp.Click(`#bookmark-overlay .resume-button`, chromedp.ByQuery, chromedp.FromNode(frame)))
	b.inFrame("at the quiz", frame, `document.querySelectorAll('.navmenuitem')[`+id(int64(pages-1))+`].parentNode.classList.contains('current') ||
		document.querySelectorAll('#navmenu li')[`+id(int64(pages-1))+`].classList.contains('current')`)
	b.exit(frame, `.navexit .exit-button`, c.course, topic)
	b.complete("after the second session")
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbTerminated}})); n != 2 {
		t.Fatalf("terminated statements after two sessions: %d", n)
	}

	// Session 3 is left while the network is gone: the AU's terminated
	// never arrives. The next launch abandons it.
	frame, _ = b.start(c.course, topic)
	b.run("restart", chromedp.Click(`#bookmark-overlay .restart-button`, chromedp.ByQuery, chromedp.FromNode(frame)))
	b.inFrame("first page", frame, `!!document.querySelector('.navmenuitem.seen') && `+settled)
	before := len(statements(t, env, admin.Token, regQ))
	b.run("offline", network.Enable(), network.EmulateNetworkConditions(true, 0, -1, -1),
		chromedp.Navigate("about:blank"), network.EmulateNetworkConditions(false, 0, -1, -1))
	if after := len(statements(t, env, admin.Token, regQ)); after != before {
		t.Fatalf("statements arrived while offline: %d, then %d", before, after)
	}
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbAbandoned}})); n != 0 {
		t.Fatalf("abandoned before the next launch: %d", n)
	}
	b.start(c.course, topic)
	abandoned := statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbAbandoned}})
	if len(abandoned) != 1 {
		t.Fatalf("abandoned statements after the next launch: %d", len(abandoned))
	}
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbTerminated}})); n != 2 {
		t.Fatalf("terminated statements after the abandoned session: %d", n)
	}
}

// TestCmi5MultiAUInBrowser plays each AU of CATAPULT's multi-AU course as
// a topic of its own: the seven reading AUs pass on launch, the quiz AU
// (CompletedAndPassed) by its quiz. Each topic completes when its AU is
// satisfied, and the course is satisfied once, after the last AU, in the
// learner's one registration.
func TestCmi5MultiAUInBrowser(t *testing.T) {
	env, f, admin, c := cmi5Site(t, "Geology, framed")
	pkg, aus := cmi5Package(t, env, admin.Token, "cmi5/multi_au_framed.zip")
	if len(aus) != 8 {
		t.Fatalf("AUs: %d", len(aus))
	}
	topics := make([]int64, len(aus))
	for i, au := range aus {
		topics[i] = cmi5Topic(t, env, admin.Token, c.lesson, pkg, au, "Part "+id(int64(i+1)))
	}
	learner := env.NewUser("student")
	b := newCmi5Browser(t, env, f, learner)

	var reg string
	for i, topic := range topics {
		frame, launch := b.start(c.course, topic)
		r := launch.Get("registration")
		if reg == "" {
			reg = r
		} else if r != reg {
			t.Fatalf("AU %d: registration %s, want the course's %s", i+1, r, reg)
		}
		if i < len(topics)-1 {
			// Completion on launch: passed and completed follow
			// initialized.
			b.inFrame("AU "+id(int64(i+1))+" passes", frame, settled)
		} else {
			b.run("quiz", chromedp.Click(`button[onclick="course.autopass()"]`, chromedp.ByQuery, chromedp.FromNode(frame)),
				chromedp.Click(`button[onclick="course.submitAnswers()"]`, chromedp.ByQuery, chromedp.FromNode(frame)))
			b.inFrame("quiz passed", frame, `document.getElementById('score-passed').classList.contains('visible') && `+settled)
			browsertest.Screenshot(t, b.ctx, "web-cmi5-multi-quiz")
		}
		sat := statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbSatisfied}})
		if i < len(topics)-1 && len(sat) != 0 {
			t.Fatalf("the course is satisfied after %d of %d AUs", i+1, len(topics))
		}
		exit := `.navexit .exit-button`
		if i == len(topics)-1 {
			// The score panel lies over the page: its own button.
			exit = `#score-panel .exit-button`
		}
		b.exit(frame, exit, c.course, topic)
		b.complete("AU " + id(int64(i+1)))
	}
	sat := statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbSatisfied}})
	if len(sat) != 1 {
		t.Fatalf("satisfied statements after every AU: %d", len(sat))
	}
	obj, _ := sat[0].(map[string]any)["object"].(map[string]any)
	def, _ := obj["definition"].(map[string]any)
	if def["type"] != "https://w3id.org/xapi/cmi5/activitytype/course" {
		t.Fatalf("satisfied: %v", sat[0])
	}
}

// demoTopic makes a topic of a cmi5 package uploaded with the topic.
func demoTopic(t *testing.T, env *apitest.Env, token string, lesson int64, data []byte) int64 {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("lesson", id(lesson))
	w.WriteField("title", cmi5demo.Title)
	w.WriteField("topicable", cmi5Class)
	part, _ := w.CreateFormFile("package", "study-habits-cmi5.zip")
	part.Write(data)
	w.Close()
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: token, Body: body.Bytes(), Type: w.FormDataContentType()})
	if res.Status != 201 {
		t.Fatalf("topic: %d %s", res.Status, res.Body)
	}
	return int64(res.Number("data.id"))
}

// TestCmi5DemoAUInBrowser plays the demo's generated cmi5 course: a right
// answer passes the AU (completed and passed, CompletedAndPassed with
// mastery 0.5), Finish terminates it and the learner is back at the
// complete topic.
func TestCmi5DemoAUInBrowser(t *testing.T) {
	env, f, admin, c := cmi5Site(t, "Study habits")
	data, err := cmi5demo.Package()
	if err != nil {
		t.Fatal(err)
	}
	topic := demoTopic(t, env, admin.Token, c.lesson, data)
	b := newCmi5Browser(t, env, f, env.NewUser("student"))

	frame, launch := b.startUntil(c.course, topic, `document.body.dataset.ready === '1'`)
	reg := launch.Get("registration")
	b.run("answer", chromedp.Click(`#a-spaced`, chromedp.ByID, chromedp.FromNode(frame)))
	b.inFrame("judged", frame, `document.body.dataset.busy === '0' && document.getElementById('status').textContent.indexOf('passed') >= 0`)
	// The page shows the topic complete while the AU is still open.
	b.run("status while playing", browsertest.Until(`!!document.querySelector('#topic-status.status-1') &&
		!!document.querySelector('.outline-topic.status-1[data-topic-id="`+id(topic)+`"]')`, nil))
	browsertest.Screenshot(t, b.ctx, "web-cmi5-demo")
	b.leave(frame, `#finish`, c.course, topic)
	b.complete("the demo AU")
	passed := statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbPassed}})
	if len(passed) != 1 {
		t.Fatalf("passed statements: %d", len(passed))
	}
	result, _ := passed[0].(map[string]any)["result"].(map[string]any)
	score, _ := result["score"].(map[string]any)
	if score["scaled"] != 1.0 || result["success"] != true {
		t.Fatalf("passed: %v", passed[0])
	}
	for _, v := range []string{verbTerminated, verbSatisfied} {
		if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {v}})); n != 1 {
			t.Fatalf("%s statements: %d", v, n)
		}
	}
}

// ownWindow returns the demo's package with its AU asking for a window of
// its own (launchMethod OwnWindow).
func ownWindow(t *testing.T) []byte {
	t.Helper()
	data, err := cmi5demo.Package()
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		rc, _ := f.Open()
		b, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == "cmi5.xml" {
			b = bytes.Replace(b, []byte(`moveOn="CompletedAndPassed"`), []byte(`moveOn="CompletedAndPassed" launchMethod="OwnWindow"`), 1)
		}
		w, _ := zw.Create(f.Name)
		w.Write(b)
	}
	zw.Close()
	return out.Bytes()
}

// TestCmi5OwnWindowInBrowser: an AU whose launchMethod is OwnWindow opens
// in a window of its own; when it exits, that window goes to the topic,
// complete.
func TestCmi5OwnWindowInBrowser(t *testing.T) {
	env, f, admin, c := cmi5Site(t, "Study habits")
	topic := demoTopic(t, env, admin.Token, c.lesson, ownWindow(t))
	b := newCmi5Browser(t, env, f, env.NewUser("student"))
	b.run("topic page", chromedp.Navigate(b.origin+"/learn/"+id(c.course)+"/"+id(topic)),
		chromedp.WaitVisible(`#cmi5-start`, chromedp.ByID))
	var frames int
	b.run("no frame", chromedp.Evaluate(`document.querySelectorAll('#cmi5-frame').length`, &frames))
	if frames != 0 {
		t.Fatal("an OwnWindow AU gets a frame")
	}
	opened := chromedp.WaitNewTarget(b.ctx, func(info *target.Info) bool { return info.Type == "page" })
	b.run("start", chromedp.Click(`#cmi5-start`, chromedp.ByID))
	var tab target.ID
	select {
	case tab = <-opened:
	case <-b.ctx.Done():
		t.Fatal("no window opened")
	}
	wctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithTargetID(tab))
	defer cancel()
	win := &cmi5Browser{t: t, ctx: wctx, origin: b.origin, content: b.content}
	win.run("AU ready", acrossNavigation(`location.origin === '`+b.content+`' && location.pathname.indexOf('/api/cmi5/content/') === 0 &&
		document.body.dataset.ready === '1'`))
	var reg string
	win.run("registration", chromedp.Evaluate(`new URLSearchParams(location.search).get('registration')`, &reg))
	win.run("answer", chromedp.Click(`#a-spaced`, chromedp.ByID),
		browsertest.Until(`document.body.dataset.busy === '0' && document.getElementById('status').textContent.indexOf('passed') >= 0`, nil),
		chromedp.Click(`#finish`, chromedp.ByID),
		acrossNavigation(`location.pathname === '/learn/`+id(c.course)+`/`+id(topic)+`' && document.readyState === 'complete'`))
	win.complete("in the AU's window")
	if n := len(statements(t, env, admin.Token, url.Values{"registration": {reg}, "verb": {verbSatisfied}})); n != 1 {
		t.Fatalf("satisfied statements: %d", n)
	}
}
