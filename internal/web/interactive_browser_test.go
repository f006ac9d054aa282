package web

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/demo/simdemo"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
)

// stepsApp is an app of the three steps of interactivetest.Manifest: it
// shows the range the page sent it, and buttons report the next step,
// completion and a score through the documented protocol.
var stepsApp = map[string]string{
	"lms-interactive.json": interactivetest.Manifest,
	"index.html": `<!doctype html><meta charset="utf-8"><title>Steps</title>
<p id="range">waiting</p><p id="step">none</p>
<button id="next">Next step</button> <button id="done">Done</button> <button id="score">Score 80</button>
<script src="app.js"></script>`,
	"app.js": `var steps = ['intro', 'swing', 'done'];
var at = -1;
window.addEventListener('message', function (e) {
  if (e.data && e.data.type === 'lms-interactive:init') {
    document.getElementById('range').textContent = e.data.startStep + '..' + e.data.endStep + ' ' +
      (e.data.steps || []).map(function (s) { return s.id + ':' + s.title; }).join(',');
    at = Math.max(steps.indexOf(e.data.startStep), 0) - 1;
  }
});
function send(m) { window.parent.postMessage(m, '*'); }
document.getElementById('next').onclick = function () {
  at++;
  document.getElementById('step').textContent = steps[at];
  send({ type: 'lms-interactive:step', step: steps[at] });
};
document.getElementById('done').onclick = function () { send({ type: 'lms-interactive:complete' }); };
document.getElementById('score').onclick = function () { send({ type: 'lms-interactive:score', score: 80 }); };
`,
}

// prowlerApp tries to reach what a sandboxed app must not: the parent
// page's document, the session cookie, the API and the frontend's /bff,
// and shows what each attempt gave.
var prowlerApp = map[string]string{
	"lms-interactive.json": interactivetest.Manifest,
	"index.html":           `<!doctype html><meta charset="utf-8"><title>Prowler</title><pre id="out"></pre><script src="app.js"></script>`,
	"app.js": `var out = {};
function show() { document.getElementById('out').textContent = JSON.stringify(out); }
try { out.parent = String(window.parent.document.cookie); } catch (e) { out.parent = 'blocked: ' + e.name; }
try { out.cookie = document.cookie; } catch (e) { out.cookie = 'blocked: ' + e.name; }
try { out.storage = String(window.localStorage.length); } catch (e) { out.storage = 'blocked: ' + e.name; }
var pending = 2;
function settle(name, p) {
  p.then(function (r) { return r.text().then(function (t) { out[name] = 'read: ' + r.status + ' ' + t.slice(0, 80); }); })
   .catch(function (e) { out[name] = 'blocked: ' + e.name; })
   .then(function () { pending--; if (pending === 0) { out.done = true; } show(); });
}
settle('api', fetch('/api/profile/me', { credentials: 'include' }));
settle('bff', fetch('/bff/api/profile/me', { credentials: 'include' }));
show();
`,
}

// appTopic uploads an app and makes a topic of it with the given fields.
func appTopic(t *testing.T, env *apitest.Env, admin string, lesson int64, files map[string]string, fields map[string]any) int64 {
	t.Helper()
	body, ctype := interactivetest.Form(t, "file", "app.zip", interactivetest.Zip(t, files), nil)
	pkg := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/interactive", Token: admin, Body: body, Type: ctype})
	if pkg.Status != 201 {
		t.Fatalf("package: %d %s", pkg.Status, pkg.Body)
	}
	b := map[string]any{"lesson": lesson, "title": "App", "topicable": interactive.Class, "package": pkg.Number("data.id")}
	for k, v := range fields {
		b[k] = v
	}
	return int64(env.Call(t, 201, "POST", "/api/admin/topics", admin, b).Number("data.id"))
}

// browse signs learner in on the frontend in a fresh browser and returns
// the browser, the frontend's origin and a runner that fails the test
// with the page's state.
func browse(t *testing.T, s *stack, learner *apitest.User, extra ...chromedp.ExecAllocatorOption) (*browserRun, string) {
	t.Helper()
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(s.srv.URL, "http://"), ":")
	origin := "http://" + s.env.Host + ":" + frontPort
	b := &browserRun{t: t, ctx: newBrowser(t, s.env.Host, extra...)}
	b.run("sign in", chromedp.Navigate(origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(landed, chromedp.ByQuery))
	return b, origin
}

// frame finds the iframe sel of the page, to query and click inside it.
func (b *browserRun) frame(sel string) *cdp.Node {
	b.t.Helper()
	var nodes []*cdp.Node
	b.run("frame "+sel, chromedp.Nodes(sel, &nodes, chromedp.ByQuery))
	return nodes[0]
}

// TestInteractiveAppsInBrowser: an app walks through its steps and
// completes its topic under each completion rule, and not before.
func TestInteractiveAppsInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	admin := env.As("admin").Token
	c := seedCourse(t, env, env.Host, admin, "Apps")
	learner := env.NewUser("student")
	topics := map[string]int64{
		"on_open":      appTopic(t, env, admin, c.lesson, stepsApp, map[string]any{"completion": "on_open"}),
		"on_range_end": appTopic(t, env, admin, c.lesson, stepsApp, map[string]any{"startStep": "intro", "endStep": "swing"}),
		"on_complete":  appTopic(t, env, admin, c.lesson, stepsApp, map[string]any{"completion": "on_complete", "display": "background"}),
		"on_score":     appTopic(t, env, admin, c.lesson, stepsApp, map[string]any{"completion": "on_score", "passScore": 75}),
	}
	env.Call(t, 200, "POST", "/api/admin/courses/"+id(c.course)+"/access", admin, map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	b, origin := browse(t, s, learner)
	complete := func(topic int64) bool {
		return env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND user_id = $2 AND finished_at IS NOT NULL`,
			topic, learner.ID) == 1
	}
	// open loads the topic's page and waits for the app's first report
	// (open) and for the app to have the range the page sent it.
	open := func(mode string) *cdp.Node {
		b.run(mode+" page", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(topics[mode])),
			chromedp.WaitVisible(`#app-frame`, chromedp.ByID),
			waitJS(`Number(document.getElementById('app-frame').dataset.reported || 0) >= 1`))
		f := b.frame(`#app-frame`)
		b.run(mode+" init", waitJS(`document.getElementById('range').textContent !== 'waiting'`, chromedp.WithPollingInFrame(f)))
		return f
	}
	// press clicks a button of the app and waits until the page has
	// recorded the report it sent.
	press := func(f *cdp.Node, button string) {
		t.Helper()
		var before int
		b.run("count", chromedp.Evaluate(`Number(document.getElementById('app-frame').dataset.reported || 0)`, &before))
		// The button is pressed by the app's own page: played as the
		// background, the app lies under the page's text.
		b.run("press "+button+" in "+id(int64(before)), waitJS(`(document.getElementById('`+button+`').click(), true)`, chromedp.WithPollingInFrame(f)),
			waitJS(`Number(document.getElementById('app-frame').dataset.reported || 0) > `+id(int64(before))))
	}

	// on_open: showing the app completes it.
	open("on_open")
	b.run("on_open complete", chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
	if !complete(topics["on_open"]) {
		t.Error("on_open: not complete once shown")
	}

	// on_range_end: the range intro..swing; the first step does not
	// complete it, reaching swing does.
	f := open("on_range_end")
	var rng string
	b.run("range", waitJS(`document.getElementById('range').textContent`, chromedp.WithPollingInFrame(f)),
		chromedp.Text(`#range`, &rng, chromedp.ByQuery, chromedp.FromNode(f)))
	if rng != "intro..swing intro:Intro,swing:Swing" {
		t.Errorf("the app got the range %q", rng)
	}
	press(f, "next")
	if complete(topics["on_range_end"]) {
		t.Fatal("on_range_end: complete at the first step")
	}
	press(f, "next")
	b.run("on_range_end complete", chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
	b.screenshot("web-interactive-steps")

	// on_complete, played as the page's background: steps and a score do
	// not complete it; the app's word does.
	f = open("on_complete")
	var background struct {
		Class    string  `json:"class"`
		Position string  `json:"position"`
		ZIndex   string  `json:"zIndex"`
		Height   float64 `json:"height"`
		Window   float64 `json:"window"`
		Range    string  `json:"range"`
	}
	b.run("background", chromedp.Evaluate(`(function () {
		var frame = document.getElementById('app-frame'), box = frame.parentElement, style = getComputedStyle(box);
		return {class: box.className, position: style.position, zIndex: style.zIndex,
			height: frame.getBoundingClientRect().height, window: window.innerHeight};
	})()`, &background), chromedp.Text(`#range`, &background.Range, chromedp.ByQuery, chromedp.FromNode(f)))
	if background.Class != "app-frame app-background" || background.Position != "fixed" || background.ZIndex != "-1" ||
		background.Height != background.Window || background.Range != "intro..done intro:Intro,swing:Swing,done:Done" {
		t.Errorf("the background app: %+v", background)
	}
	press(f, "next")
	press(f, "next")
	press(f, "next")
	press(f, "score")
	if complete(topics["on_complete"]) {
		t.Fatal("on_complete: complete before the app said so")
	}
	press(f, "done")
	b.run("on_complete complete", chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))

	// on_score: completion alone does not do; a score of 80 ≥ 75 does.
	f = open("on_score")
	press(f, "done")
	if complete(topics["on_score"]) {
		t.Fatal("on_score: complete without a score")
	}
	press(f, "score")
	b.run("on_score complete", chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
	for mode, topic := range topics {
		if !complete(topic) {
			t.Errorf("%s: not complete in the learner's progress", mode)
		}
	}
}

// TestInteractiveSandboxInBrowser: an app that reads the parent page, the
// cookie or storage, or calls the API or /bff gets nothing, and the
// browser's CSP reports of its blocked calls reach /api/csp-report and are
// stored for the topic.
func TestInteractiveSandboxInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	admin := env.As("admin").Token
	c := seedCourse(t, env, env.Host, admin, "Sandbox")
	topic := appTopic(t, env, admin, c.lesson, prowlerApp, map[string]any{"completion": "on_complete"})
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+id(c.course)+"/access", admin, map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	b, origin := browse(t, s, learner)
	b.run("page", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(topic)), chromedp.WaitVisible(`#app-frame`, chromedp.ByID))
	f := b.frame(`#app-frame`)
	var out string
	b.run("attempts", waitJS(`(function () { try { return JSON.parse(document.getElementById('out').textContent).done; } catch (e) { return false; } })()`,
		chromedp.WithPollingInFrame(f)),
		chromedp.Text(`#out`, &out, chromedp.ByQuery, chromedp.FromNode(f)))
	for _, want := range []string{`"parent":"blocked: SecurityError"`, `"cookie":"blocked: SecurityError"`, `"storage":"blocked: SecurityError"`,
		`"api":"blocked: TypeError"`, `"bff":"blocked: TypeError"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the app's attempts %s lack %s", out, want)
		}
	}
	b.screenshot("web-interactive-sandbox")
	// Chromium sends the reports on its own time: they are waited for.
	deadline := time.Now().Add(2 * time.Minute)
	for env.Count(t, `SELECT COUNT(*) FROM csp_reports WHERE topic_id = $1 AND directive = 'connect-src'`, topic) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("CSP reports: %s", env.Call(t, 200, "GET", "/api/admin/topics/"+id(topic)+"/csp-reports", admin, nil).Body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	list := env.Call(t, 200, "GET", "/api/admin/topics/"+id(topic)+"/csp-reports", admin, nil)
	blocked := []string{list.String("data.0.blocked_uri"), list.String("data.1.blocked_uri")}
	joined := strings.Join(blocked, " ")
	if !strings.Contains(joined, "/api/profile/me") || !strings.Contains(joined, "/bff/api/profile/me") {
		t.Errorf("reported: %v", blocked)
	}
	if complete := env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND finished_at IS NOT NULL`, topic); complete != 0 {
		t.Errorf("the prowler completed its topic")
	}
}

// browserRun is a browser tab of a test, whose steps fail the test with
// where the page was.
type browserRun struct {
	t   *testing.T
	ctx context.Context
}

// newBrowser starts Chromium with host mapped to this machine and frames
// kept in the page's process, so that tests can look into sandboxed
// frames.
func newBrowser(t *testing.T, host string, extra ...chromedp.ExecAllocatorOption) context.Context {
	opts := append([]chromedp.ExecAllocatorOption{browsertest.SameProcessFrames()}, extra...)
	if len(extra) == 0 {
		opts = append(opts, browsertest.MapHosts(host))
	}
	return browsertest.New(t, 4*time.Minute, opts...)
}

func (b *browserRun) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(b.ctx, `location.href + "\n" + JSON.stringify(document.querySelector('iframe') && document.querySelector('iframe').dataset) + "\n" + document.body.innerText.slice(0, 3000)`))
	}
}

func (b *browserRun) screenshot(name string) { browsertest.Screenshot(b.t, b.ctx, name) }

// waitJS waits until the expression is truthy.
func waitJS(expr string, opts ...chromedp.PollOption) chromedp.Action {
	return browsertest.Until(expr, nil, opts...)
}

// TestDemoSimulationInBrowser: the demo's exposure simulator (package
// simdemo) plays its three steps in the sandbox and completes its topic
// once the last step's picture is well exposed, not before.
func TestDemoSimulationInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	admin := env.As("admin").Token
	c := seedCourse(t, env, env.Host, admin, "Photography")
	files, err := simdemo.Files()
	if err != nil {
		t.Fatal(err)
	}
	topic := appTopic(t, env, admin, c.lesson, files, map[string]any{"completion": "on_complete", "height": 560})
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+id(c.course)+"/access", admin, map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	b, origin := browse(t, s, learner)
	b.run("page", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(topic)), chromedp.WaitVisible(`#app-frame`, chromedp.ByID))
	f := b.frame(`#app-frame`)
	reported := func() int {
		var n int
		b.run("reports", chromedp.Evaluate(`Number(document.getElementById('app-frame').dataset.reported || 0)`, &n))
		return n
	}
	// in runs a statement in the app's page.
	in := func(what, js string) {
		t.Helper()
		before := reported()
		b.run(what, waitJS(`(function () { `+js+`; return true; })()`, chromedp.WithPollingInFrame(f)),
			waitJS(`Number(document.getElementById('app-frame').dataset.reported || 0) > `+id(int64(before))))
	}
	b.run("first step", waitJS(`document.getElementById('title').textContent === 'Aperture and depth of field'`, chromedp.WithPollingInFrame(f)))
	in("to shutter", `document.getElementById('next').click()`)
	in("to ISO", `document.getElementById('next').click()`)
	var verdict string
	b.run("too dark", chromedp.Text(`#verdict`, &verdict, chromedp.ByQuery, chromedp.FromNode(f)))
	if verdict != "Too dark" || env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE topic_id = $1 AND finished_at IS NOT NULL`, topic) != 0 {
		t.Fatalf("the last step starts %q, or the topic completed early", verdict)
	}
	in("ISO 400", `var s = document.getElementById('setting'); s.value = 2; s.dispatchEvent(new Event('input'))`)
	b.run("complete", chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery),
		waitJS(`document.getElementById('verdict').textContent === 'Well exposed'`, chromedp.WithPollingInFrame(f)))
	// The frame takes the height the app reports of its content, not its
	// topic's first 560 px (TestLearnerPagesInBrowser measures it).
	var content float64
	b.run("content height", browsertest.Until(`document.body.getBoundingClientRect().height`, &content, chromedp.WithPollingInFrame(f)))
	b.run("height", waitJS(`Math.abs(document.getElementById('app-frame').getBoundingClientRect().height - `+
		strconv.FormatFloat(content, 'f', -1, 64)+`) <= 1`))
	b.screenshot("web-demo-simulation")
}
