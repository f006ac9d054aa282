package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

// The SCORM player nests three frames: the topic page (the frontend's
// origin) holds the player (#scorm-frame), the player holds the SCO
// (#sco), and the golf SCO's launch page shows its pages in
// #contentFrame. The player, the package files and the tracking routes
// are passed through by the content origin, so the topic page's scripts
// reach none of them; the player and the frames in it share the content
// origin. The expressions below run in the player's frame (see
// inPlayer), where scormFrames is the walk; they take its result as F.
const scormFrames = `(function () {
	function win(doc, id) { var f = doc && doc.getElementById(id); return f && f.contentWindow; }
	var player = window;
	var sco = player && win(player.document, 'sco');
	var page = sco && win(sco.document, 'contentFrame');
	return {player: player, sco: sco, page: page};
})()`

// inFrames wraps a JavaScript expression of F (the frames) so that a
// frame not there yet reads as false, not as an exception.
func inFrames(expr string) string {
	return `(function (F) { try { return (` + expr + `); } catch (e) { return false; } })(` + scormFrames + `)`
}

// scormPlay is a learner signed in to the frontend in Chromium, with the
// real API on SQLite behind it, and a course to put SCORM topics in.
type scormPlay struct {
	t       *testing.T
	env     *apitest.Env
	ctx     context.Context
	origin  string
	course  seeded
	admin   string
	learner *apitest.User
	api     *countingAPI
	front   *front

	mu      sync.Mutex
	dialogs []string // the SCO's alert and confirm boxes, as "type: message"
}

// scormSession bounds a browser session of these tests.
var scormSession = 3 * time.Minute

func newScormPlay(t *testing.T) *scormPlay {
	t.Helper()
	return newScormPlayAs(t, "student")
}

// newScormPlayAs is newScormPlay with a user of another role in the
// browser.
func newScormPlayAs(t *testing.T, role string) *scormPlay {
	t.Helper()
	env := apitest.New(t, "sqlite", apitest.Options{})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	p := &scormPlay{t: t, env: env, api: api, admin: env.As("admin").Token, learner: env.NewUser(role), front: f}
	p.course = seedCourse(t, env, env.Host, p.admin, "Golf course")
	_, port, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	p.origin = "http://" + env.Host + ":" + port
	// The session bounds every wait of the test: a hang fails it.
	p.ctx = browsertest.New(t, scormSession, browsertest.MapHosts(env.Host), browsertest.SameProcessFrames())
	chromedp.ListenTarget(p.ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			t.Logf("browser exception: %s", e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeWarning || os.Getenv("LMS_TEST_CONSOLE") != "" {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				t.Logf("console.%s: %s", e.Type, strings.Join(args, " "))
			}
		case *page.EventJavascriptDialogOpening:
			// The golf SCO asks with confirm() whether to resume; a dialog
			// left open would stop every script of the page. It is
			// answered yes, from outside the event loop of the listener.
			// The golf SCOs tell of every runtime call that failed with
			// alert(): any alert fails the test.
			p.mu.Lock()
			p.dialogs = append(p.dialogs, string(e.Type)+": "+e.Message)
			p.mu.Unlock()
			go chromedp.Run(p.ctx, page.HandleJavaScriptDialog(true))
		}
	})
	t.Cleanup(func() {
		for _, d := range p.seen() {
			if strings.HasPrefix(d, "alert: ") {
				t.Errorf("the SCO reported an error: %s", d)
			}
		}
	})
	p.run("sign in", chromedp.Navigate(p.origin+"/login"),
		chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, p.learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, p.learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(landed, chromedp.ByQuery))
	return p
}

// run runs browser actions; a failure shows where each frame was.
func (p *scormPlay) run(what string, actions ...chromedp.Action) {
	p.t.Helper()
	if err := chromedp.Run(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(p.ctx, `location.href + ' | ' + document.body.innerText.slice(0, 300)`))
	}
}

// inPlayer runs a poll in the player's frame (#scorm-frame of the topic
// page), on the content origin. The frame's document changes as the
// player moves between SCOs: a poll that its navigation cut short runs
// again in the new document, until the browser session ends.
func (p *scormPlay) inPlayer(what, expr string, res any) {
	p.t.Helper()
	var last error
	for p.ctx.Err() == nil {
		var nodes []*cdp.Node
		err := chromedp.Run(p.ctx, chromedp.Nodes(`#scorm-frame`, &nodes, chromedp.ByQuery, chromedp.AtLeast(0)))
		if err == nil && len(nodes) > 0 {
			if err = chromedp.Run(p.ctx, browsertest.Until(expr, res, chromedp.WithPollingInFrame(nodes[0]),
				chromedp.WithPollingInterval(50*time.Millisecond))); err == nil {
				return
			}
		}
		last = err
		select {
		case <-p.ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	p.t.Fatalf("%s: %v (last: %v)\n%s", what, p.ctx.Err(), last, browsertest.Show(p.ctx, `location.href + ' | ' + document.body.innerText.slice(0, 300)`))
}

// until waits for a JavaScript expression of the frames (F) to be truthy
// and stores its value.
func (p *scormPlay) until(what, expr string, res any) {
	p.t.Helper()
	p.inPlayer(what, inFrames(expr), res)
}

// eval evaluates a JavaScript expression of the frames (F) once.
func (p *scormPlay) eval(what, expr string, res any) {
	p.t.Helper()
	var out struct {
		V json.RawMessage `json:"v"`
	}
	p.inPlayer(what, `(function (F) { return {v: (`+expr+`)}; })(`+scormFrames+`)`, &out)
	if len(out.V) == 0 {
		out.V = json.RawMessage("null")
	}
	if res != nil {
		if err := json.Unmarshal(out.V, res); err != nil {
			p.t.Fatalf("%s: %v", what, err)
		}
	}
}

// untilTop waits for a JavaScript expression of the topic page to be
// truthy and stores its value.
func (p *scormPlay) untilTop(what, expr string, res any) {
	p.t.Helper()
	p.run(what, browsertest.Until(expr, res, chromedp.WithPollingInterval(50*time.Millisecond)))
}

// seen lists the dialogs the pages opened, as "type: message".
func (p *scormPlay) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.dialogs...)
}

// scormTopic adds a SCORM topic to the course: an uploaded package and
// the SCO the topic records.
func (p *scormPlay) scormTopic(title string, pkg *apitest.Response, sco int) int64 {
	p.t.Helper()
	res := p.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: p.admin, Body: map[string]any{
		"lesson": p.course.lesson, "title": title, "topicable": scorm.Class, "package": pkg.Number("data.id"),
		"sco": pkg.Number("data.scos." + fmt.Sprint(sco) + ".id")}})
	if res.Status != http.StatusCreated {
		p.t.Fatalf("SCORM topic: %d %s", res.Status, res.Body)
	}
	return int64(res.Number("data.id"))
}

// open opens the topic's page; the player starts in its frame. It
// answers the tracking token and SCO of the session the page launched.
// passModules reports each of the n modules of the prerequisites package
// (module1.html …) done with 95 points through the player's runtime,
// pressing continue between them, which the prerequisites unlock.
func (p *scormPlay) passModules(n int) {
	p.t.Helper()
	var ok bool
	for i := 1; i <= n; i++ {
		if i > 1 {
			p.playerButton("continue", "continue")
		}
		file := fmt.Sprintf("module%d.html", i)
		p.until(file, playerOn(file), &ok)
		var results []string
		p.eval(file+" done", `(function (api) {
			return [api.LMSInitialize(''), api.LMSSetValue('cmi.core.score.raw', '95'), api.LMSSetValue('cmi.core.lesson_status', 'completed'),
				api.LMSCommit(''), api.LMSFinish('')];
		})(F.player.API)`, &results)
		if fmt.Sprint(results) != "[true true true true true]" {
			p.t.Fatalf("%s: runtime calls: %q", file, results)
		}
	}
}

func (p *scormPlay) open(topic int64) (token, sco string) {
	p.t.Helper()
	p.run("topic page", chromedp.Navigate(p.origin+"/learn/"+id(p.course.course)+"/"+id(topic)),
		chromedp.WaitReady(`#scorm-launch`, chromedp.ByID),
		chromedp.Evaluate(`document.querySelector('#scorm-launch input[name=token]').value`, &token),
		chromedp.Evaluate(`document.getElementById('scorm-launch').action.replace(/^.*\/player\//, '')`, &sco))
	if token == "" || sco == "" {
		p.t.Fatalf("the topic page launched no session: %q %q", token, sco)
	}
	return token, sco
}

// close leaves the topic page for "my learning", which unloads the player
// and the SCO (the SCO finishes in its unload handler).
func (p *scormPlay) close() {
	p.t.Helper()
	p.run("close", chromedp.Navigate(p.origin+"/my"), chromedp.WaitVisible(`.progress-list`, chromedp.ByQuery))
}

// press clicks with the mouse, as the learner does, the element a
// JavaScript expression of the frames (F) finds once it is there: the
// element is scrolled into view, its centre is carried up through the
// offsets of the frames that hold it (the SCO's #sco in the player, the
// player's #scorm-frame in the topic page) to the tab's viewport, and the
// mouse clicks there. The frames in the player share its origin; the
// player's own place in the topic page is read there.
func (p *scormPlay) press(what, element string) {
	p.t.Helper()
	var ok bool
	p.until(what, `(function (el) { return !!el && el.ownerDocument.readyState === 'complete'; })(`+element+`)`, &ok)
	var at []float64
	p.eval(what, `(function (el) {
		el.scrollIntoView({block: 'center'});
		var r = el.getBoundingClientRect(), x = r.left + r.width / 2, y = r.top + r.height / 2;
		for (var w = el.ownerDocument.defaultView; w !== window; w = w.parent) {
			var f = w.frameElement, fr = f.getBoundingClientRect();
			x += fr.left + f.clientLeft;
			y += fr.top + f.clientTop;
		}
		return [x, y];
	})(`+element+`)`, &at)
	var frame []float64
	p.run(what, chromedp.Evaluate(`(function (f) { var r = f.getBoundingClientRect(); return [r.left + f.clientLeft, r.top + f.clientTop]; })(document.getElementById('scorm-frame'))`, &frame))
	p.run(what, chromedp.MouseClickXY(at[0]+frame[0], at[1]+frame[1]))
}

// pressTop clicks an element of the topic page.
func (p *scormPlay) pressTop(what, selector string) {
	p.t.Helper()
	p.run(what, chromedp.Click(selector, chromedp.ByQuery))
}

// click presses a button of the SCO's launch page.
func (p *scormPlay) click(what, selector string) {
	p.t.Helper()
	p.press(what, `F.sco.document.querySelector('`+selector+`')`)
}

// playerButton presses a button of the player: previous, continue, or a
// page of the contents by its title.
func (p *scormPlay) playerButton(what, idOrTitle string) {
	p.t.Helper()
	p.press(what, `(F.player.document.getElementById('`+idOrTitle+`') || Array.prototype.filter.call(
		F.player.document.querySelectorAll('#toc-list button'), function (b) { return b.textContent === '`+idOrTitle+`'; })[0])`)
}

// stored reads the session's stored track through the tracking route.
func (p *scormPlay) stored(token, sco string) *apitest.Response {
	p.t.Helper()
	res := p.env.Do(apitest.Request{Method: "GET", Path: "/api/scorm/tracks/" + sco,
		Headers: map[string]string{scorm.TokenHeader: token}})
	if res.Status != http.StatusOK {
		p.t.Fatalf("stored track: %d %s", res.Status, res.Body)
	}
	return res
}

// storedWhen reads the stored track until cond holds of its model; the
// browser session bounds the wait (the SCO's last commit is sent as the
// page unloads, and arrives when it arrives).
func (p *scormPlay) storedWhen(what, token, sco string, cond func(cmi map[string]any) bool) map[string]any {
	p.t.Helper()
	for {
		res := p.stored(token, sco)
		cmi, _ := res.Get("data.cmi").(map[string]any)
		if cmi != nil && cond(cmi) {
			return cmi
		}
		select {
		case <-p.ctx.Done():
			p.t.Fatalf("%s: the stored model never got there (%d commits reached the API): %s", what,
				p.api.count("/api/scorm/tracks/"+sco+"/commit"), res.Body)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// completes waits until the topic is complete in the learner's progress:
// the commit that stores the passing model completes the topic after it
// has stored it, so the two are seen a moment apart.
func (p *scormPlay) completes(what string, topic int64) {
	p.t.Helper()
	for p.progressStatus(topic) != 1 {
		select {
		case <-p.ctx.Done():
			p.t.Fatalf("%s: the topic never completed", what)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// progressStatus is the topic's status in the learner's progress.
func (p *scormPlay) progressStatus(topic int64) float64 {
	p.t.Helper()
	res := p.env.Call(p.t, 200, "GET", "/api/courses/progress/"+id(p.course.course), p.learner.Token, nil)
	for _, tp := range res.Get("data.topics").([]any) {
		m := tp.(map[string]any)
		if int64(m["topic_id"].(float64)) == topic {
			return m["status"].(float64)
		}
	}
	p.t.Fatalf("topic %d not in the progress: %s", topic, res.Body)
	return -1
}

// golfEdition is what differs between the SCORM 1.2 and 2004 golf SCOs.
type golfEdition struct {
	fixture    string
	api        string // the runtime object the SCO finds
	get        string // its read call
	location   string
	entry      string
	exit       string
	sessionRe  string
	readable   []string // elements read back in the page and compared with the stored model
	completion map[string]string
}

var golf12 = golfEdition{
	fixture: "scorm/RuntimeBasicCalls_SCORM12.zip", api: "API", get: "LMSGetValue",
	location: "cmi.core.lesson_location", entry: "cmi.core.entry", exit: "cmi.core.exit", sessionRe: "cmi.core.session_time",
	readable: []string{"cmi.core.lesson_status", "cmi.core.lesson_location", "cmi.core.score.raw", "cmi.core.score.min",
		"cmi.core.score.max", "cmi.suspend_data", "cmi.core.student_id", "cmi.core.student_name", "cmi.launch_data",
		"cmi.comments", "cmi.core.credit", "cmi.core.lesson_mode"},
	completion: map[string]string{"cmi.core.lesson_status": "passed", "cmi.core.score.raw": "100", "cmi.core.credit": "credit"},
}

var golf2004 = golfEdition{
	fixture: "scorm/RuntimeBasicCalls_SCORM20043rdEdition.zip", api: "API_1484_11", get: "GetValue",
	location: "cmi.location", entry: "cmi.entry", exit: "cmi.exit", sessionRe: "cmi.session_time",
	readable: []string{"cmi.completion_status", "cmi.success_status", "cmi.location", "cmi.score.raw", "cmi.score.min",
		"cmi.score.max", "cmi.score.scaled", "cmi.suspend_data", "cmi.learner_id", "cmi.learner_name", "cmi.progress_measure",
		"cmi.credit", "cmi.mode"},
	completion: map[string]string{"cmi.completion_status": "completed", "cmi.success_status": "passed", "cmi.score.raw": "100",
		"cmi.score.scaled": "1", "cmi.credit": "credit"},
}

// TestScormGolf12InBrowser and TestScormGolf2004InBrowser play Rustici's
// golf SCO through the web frontend in Chromium: pages, suspend, close,
// reopen and resume, the quiz, the end.
func TestScormGolf12InBrowser(t *testing.T)   { playGolf(t, golf12) }
func TestScormGolf2004InBrowser(t *testing.T) { playGolf(t, golf2004) }

// playGolf: the learner opens the topic, reads three pages, and leaves
// the page (the SCO suspends as it unloads). Reopened, the SCO is told
// entry=resume, asks whether to resume, and is back on the stored page
// with the stored suspend data. The learner reads to the end and passes
// the quiz, then exits: the stored model reads back as the SCO set it
// (field by field, through the tracking route), the topic is complete in
// the learner's progress and on the page, and the track lists the score.
func playGolf(t *testing.T, ed golfEdition) {
	p := newScormPlay(t)
	topic := p.scormTopic("Golf", p.uploadPackage(ed.fixture), 0)
	api := `F.player.` + ed.api
	getValue := func(el string) string { return api + `.` + ed.get + `('` + el + `')` }

	token, sco := p.open(topic)
	var ok bool
	p.until("the SCO starts", `F.sco.currentPage === 0 && /Playing\/Playing\.html$/.test(F.page.location.pathname)`, &ok)
	var entry string
	p.eval("entry", getValue(ed.entry), &entry)
	if entry != "ab-initio" {
		t.Fatalf("first launch: entry %q", entry)
	}
	for page := 1; page <= 3; page++ {
		p.click("next", `#butNext`)
		p.until("page "+fmt.Sprint(page), `F.sco.currentPage === `+fmt.Sprint(page)+` && `+getValue(ed.location)+` === '`+fmt.Sprint(page)+`'`, &ok)
	}
	p.until("page 3 shown", `/Playing\/OtherScoring\.html$/.test(F.page.location.pathname) && F.page.document.readyState === 'complete'`, &ok)
	// The golf SCO keeps its place in the location only; the test writes
	// suspend data through the same runtime, as a SCO that keeps more
	// state does.
	const suspend = `{"page":3,"seen":[0,1,2,3],"note":"ünïcode ✓ & <b>"}`
	var set string
	p.eval("suspend data", api+`.`+strings.Replace(ed.get, "Get", "Set", 1)+`('cmi.suspend_data', `+jsString(suspend)+`)`, &set)
	if set != "true" {
		t.Fatalf("SetValue suspend_data: %q", set)
	}
	p.close()
	cmi := p.storedWhen("suspended", token, sco, func(cmi map[string]any) bool { return cmi[ed.exit] == "suspend" })
	if cmi[ed.location] != "3" || cmi["cmi.suspend_data"] != suspend || cmi[ed.sessionRe] == "" {
		t.Fatalf("suspended model: %v", cmi)
	}
	if s := p.progressStatus(topic); s == 1 {
		t.Fatal("the topic is complete after three pages")
	}

	// Reopen: resume where the learner left.
	token2, sco2 := p.open(topic)
	if sco2 != sco || token2 == token {
		t.Fatalf("reopened session: sco %s (was %s), same token %v", sco2, sco, token2 == token)
	}
	p.until("resumed", `F.sco.currentPage === 3 && /Playing\/OtherScoring\.html$/.test(F.page.location.pathname)`, &ok)
	if d := p.seen(); fmt.Sprint(d) != "[confirm: Would you like to resume from where you previously left off?]" {
		t.Errorf("the SCO did not offer to resume, or said more; dialogs: %q", d)
	}
	var resumed struct{ Entry, Location, Suspend string }
	p.eval("resumed model", `{entry: `+getValue(ed.entry)+`, location: `+getValue(ed.location)+`, suspend: `+getValue("cmi.suspend_data")+`}`, &resumed)
	if resumed.Entry != "resume" || resumed.Location != "3" || resumed.Suspend != suspend {
		t.Fatalf("resumed with %+v", resumed)
	}

	p.passGolfQuiz(4)

	// What the SCO set, read through the runtime before it finishes.
	var fields []string
	for _, el := range ed.readable {
		fields = append(fields, jsString(el)+`: `+getValue(el))
	}
	var inPage map[string]string
	p.eval("runtime values", `{`+strings.Join(fields, ", ")+`}`, &inPage)
	for el, want := range ed.completion {
		if inPage[el] != want {
			t.Errorf("in the page %s = %q, want %q", el, inPage[el], want)
		}
	}
	p.click("exit", `#butExit`)
	final := p.storedWhen("finished", token2, sco, func(cmi map[string]any) bool {
		return cmi[ed.exit] != "suspend" && cmi[ed.sessionRe] != nil && cmi[ed.sessionRe] != ""
	})
	for _, el := range ed.readable {
		got := ""
		if v, ok := final[el]; ok && v != nil {
			got = fmt.Sprint(v)
		}
		if got != inPage[el] {
			t.Errorf("stored %s = %q, the SCO read %q", el, got, inPage[el])
		}
	}
	if final[ed.entry] != nil && final[ed.entry] != "resume" {
		t.Errorf("stored %s = %v", ed.entry, final[ed.entry])
	}
	if ed.api == "API_1484_11" {
		// The 2004 SCO's exit asks for exitAll: the player says so.
		p.until("exitAll", `/You may close this activity/.test(F.player.document.getElementById('notice').textContent)`, &ok)
	}
	raw, _ := json.Marshal(final)
	t.Logf("stored model: %s", raw)

	// The topic is complete: in the learner's progress, on the page (it
	// asks again now and then), and in the SCORM tracks with the score.
	p.completes("after the quiz", topic)
	tracks := p.env.Call(t, 200, "GET", "/api/courses/"+id(p.course.course)+"/scorm", p.learner.Token, nil)
	if tracks.String("data.0.status") != "passed" || tracks.Number("data.0.score.raw") != 100 || tracks.Number("data.0.attempt") != 1 {
		t.Errorf("tracks: %s", tracks.Body)
	}
	p.run("the page shows it", chromedp.Navigate(p.origin+"/learn/"+id(p.course.course)+"/"+id(topic)),
		chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
}

// passGolfQuiz reads the golf SCO's pages from page from on to the
// quiz, the last, and passes it with every answer right: every correct
// answer is marked in the page, and the numeric answers are given after
// the field.
func (p *scormPlay) passGolfQuiz(from int) {
	p.t.Helper()
	var ok bool
	for page := from; page <= 14; page++ {
		p.click("next", `#butNext`)
		p.until("page "+fmt.Sprint(page), `F.sco.currentPage === `+fmt.Sprint(page), &ok)
	}
	p.until("quiz", `/assessmenttemplate\.html$/.test(F.page.location.pathname) && F.page.document.readyState === 'complete' &&
		!!F.page.document.querySelector('#frmTest input[type=button]')`, &ok)
	var answered int
	p.eval("answer the quiz", `(function (d) {
		var n = 0;
		d.querySelectorAll('.correctAnswer').forEach(function (div) {
			var radio = div.querySelector('input[type=radio]'), text = div.querySelector('input[type=text]');
			if (radio) { radio.click(); n++; }
			if (text) { text.value = /\((\d+)\)/.exec(div.textContent)[1]; text.dispatchEvent(new Event('change')); n++; }
		});
		return n;
	})(F.page.document)`, &answered)
	if answered < 10 {
		p.t.Fatalf("only %d answers in the quiz", answered)
	}
	p.eval("submit", `(F.page.document.querySelector('#frmTest input[type=button]').click(), true)`, &ok)
	p.until("score", `/Score: 100/.test(F.page.document.getElementById('test').innerText)`, &ok)
}

// jsString quotes a Go string as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// uploadPackage uploads a SCORM package and answers it.
func (p *scormPlay) uploadPackage(pkgFile string) *apitest.Response {
	p.t.Helper()
	data, err := os.ReadFile(fixture(p.t, pkgFile))
	if err != nil {
		p.t.Fatal(err)
	}
	return p.uploadBytes(pkgFile, data)
}

// uploadBytes uploads a package the test built.
func (p *scormPlay) uploadBytes(pkgFile string, data []byte) *apitest.Response {
	p.t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("package", "package.zip")
	part.Write(data)
	w.Close()
	res := p.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/scorm/upload", Token: p.admin, Body: b.Bytes(),
		Type: w.FormDataContentType()})
	if res.Status != http.StatusCreated {
		p.t.Fatalf("upload %s: %d %s", pkgFile, res.Status, res.Body)
	}
	return res
}

// tocEntry is a line of the player's table of contents as the learner
// sees it.
type tocEntry struct {
	Title    string `json:"title"`
	Status   string `json:"status"`
	Button   bool   `json:"button"`
	Disabled bool   `json:"disabled"`
	Current  bool   `json:"current"`
}

// toc reads the player's table of contents.
const tocJS = `Array.prototype.map.call(F.player.document.querySelectorAll('#toc-list li'), function (li) {
	var b = li.querySelector('button');
	return {title: b ? b.textContent : li.firstChild.textContent, status: li.querySelector('.status').textContent.trim(),
		button: !!b, disabled: !!b && b.disabled, current: li.className === 'current'};
})`

// playerOn is the condition that the player shows the SCO whose launch
// file is file, its runtime ready.
func playerOn(file string) string {
	return `F.player.document.readyState === 'complete' && !!F.player.API && F.player.document.querySelectorAll('#toc-list li').length > 0 &&
		F.sco.location.pathname.endsWith('/` + file + `') && F.sco.document.readyState === 'complete'`
}

// TestScormPrerequisitesInBrowser plays the SCORM 1.2 package of four
// SCOs with prerequisites through the web frontend: the table of
// contents shows the modules, those whose prerequisites are not met
// locked; continue to a locked module is refused with its reason; once
// module 1 passes (its mastery score) continue reaches module 2, which
// gets its launch data, and the contents then unlock what module 1
// opened; previous goes back. Module 1 is the topic's SCO: passing it
// completes the topic.
func TestScormPrerequisitesInBrowser(t *testing.T) {
	p := newScormPlay(t)
	pkg := p.uploadPackage("scorm/PrerequisitesTest_SCORM12.zip")
	topic := p.scormTopic("Modules", pkg, 0)

	token, sco := p.open(topic)
	var ok bool
	p.until("module 1", playerOn("module1.html"), &ok)
	var toc []tocEntry
	p.eval("contents", tocJS, &toc)
	want := []tocEntry{
		{Title: "Module 1: Introduction", Status: "not attempted", Button: true, Disabled: true, Current: true},
		{Title: "Module 2: Basic Concepts", Status: "not attempted", Button: true, Disabled: true},
		{Title: "Module 3: Advanced Topics", Status: "not attempted", Button: true, Disabled: true},
		{Title: "Module 4: Assessment", Status: "not attempted", Button: true, Disabled: true},
	}
	if fmt.Sprint(toc) != fmt.Sprint(want) {
		t.Fatalf("contents before module 1:\n got %+v\nwant %+v", toc, want)
	}
	var nav struct{ Previous, Continue bool }
	p.eval("buttons", `{previous: !F.player.document.getElementById('previous').disabled, continue: !F.player.document.getElementById('continue').disabled}`, &nav)
	if nav.Previous || !nav.Continue {
		t.Fatalf("navigation buttons on module 1: %+v", nav)
	}

	// Module 2 is locked until module 1 is done: continue says why and
	// module 1 comes back.
	p.playerButton("continue too early", "continue")
	var notice string
	p.until("refused", `/needs .*Module 1: Introduction.* first/.test(F.player.document.getElementById('notice').textContent) &&
		F.player.document.getElementById('notice').textContent`, &notice)
	p.until("module 1 again", playerOn("module1.html"), &ok)

	// The module's page does not talk to the runtime; the test does it in
	// the module's place: a raw score of 85 against the mastery score of
	// 80 passes it.
	var results []string
	p.eval("module 1 passes", `(function (api) {
		return [api.LMSInitialize(''), api.LMSGetValue('cmi.student_data.mastery_score'), api.LMSSetValue('cmi.core.score.raw', '85'),
			api.LMSSetValue('cmi.core.lesson_status', 'incomplete'), api.LMSSetValue('cmi.core.exit', ''), api.LMSCommit(''), api.LMSFinish('')];
	})(F.player.API)`, &results)
	if fmt.Sprint(results) != "[true 80 true true true true true]" {
		t.Fatalf("runtime calls: %q", results)
	}
	st := p.storedWhen("module 1 passed", token, sco, func(cmi map[string]any) bool { return cmi["cmi.core.lesson_status"] == "passed" })
	if st["cmi.core.score.raw"] != "85" {
		t.Fatalf("module 1 stored: %v", st)
	}
	p.completes("once its SCO passed", topic)

	// Continue reaches module 2 now, with its launch data.
	p.playerButton("continue", "continue")
	p.until("module 2", playerOn("module2.html"), &ok)
	p.eval("contents", tocJS, &toc)
	want = []tocEntry{
		{Title: "Module 1: Introduction", Status: "passed", Button: true},
		{Title: "Module 2: Basic Concepts", Status: "not attempted", Button: true, Disabled: true, Current: true},
		{Title: "Module 3: Advanced Topics", Status: "not attempted", Button: true, Disabled: true},
		{Title: "Module 4: Assessment", Status: "not attempted", Button: true, Disabled: true},
	}
	if fmt.Sprint(toc) != fmt.Sprint(want) {
		t.Fatalf("contents on module 2:\n got %+v\nwant %+v", toc, want)
	}
	var title, launchData string
	p.eval("module 2 runtime", `F.player.API.LMSInitialize('') && F.player.API.LMSGetValue('cmi.launch_data')`, &launchData)
	p.eval("title", `F.player.document.getElementById('title').textContent`, &title)
	if launchData != "custom_data_for_module2" || !strings.HasSuffix(title, "Module 2: Basic Concepts") {
		t.Fatalf("module 2: launch data %q, title %q", launchData, title)
	}

	// Module 2 done: module 3 unlocks, and so does module 4 (module 1 and
	// module 2); the table of contents of the next launch says so.
	var finished string
	p.eval("module 2 completes", `F.player.API.LMSSetValue('cmi.core.lesson_status', 'completed') + ' ' + F.player.API.LMSFinish('')`, &finished)
	if finished != "true true" {
		t.Fatalf("module 2 runtime calls: %q", finished)
	}
	p.playerButton("previous", "previous")
	p.until("back on module 1", playerOn("module1.html"), &ok)
	p.eval("contents", tocJS, &toc)
	want = []tocEntry{
		{Title: "Module 1: Introduction", Status: "passed", Button: true, Disabled: true, Current: true},
		{Title: "Module 2: Basic Concepts", Status: "completed", Button: true},
		{Title: "Module 3: Advanced Topics", Status: "not attempted", Button: true},
		{Title: "Module 4: Assessment", Status: "not attempted", Button: true},
	}
	if fmt.Sprint(toc) != fmt.Sprint(want) {
		t.Fatalf("contents after module 2:\n got %+v\nwant %+v", toc, want)
	}
	// A choice from the contents: module 4.
	p.playerButton("choose module 4", "Module 4: Assessment")
	p.until("module 4", playerOn("module4.html"), &ok)
	tracks := p.env.Call(t, 200, "GET", "/api/courses/"+id(p.course.course)+"/scorm", p.learner.Token, nil)
	if n := len(tracks.Get("data").([]any)); n != 3 {
		t.Errorf("tracks of three modules, got %d: %s", n, tracks.Body)
	}
}

// TestScormMultiSCOInBrowser plays the 1.2 golf course of eighteen
// assets in four sections through the web frontend: the contents show
// the sections as headings and every page as a choice; an asset, which
// cannot talk to the runtime, is completed by its launch (and, as the
// topic's own item, completes the topic); continue and previous follow
// the manifest's order; a choice launches the item with its parameters
// (the quiz of one section); the full-window option fills the tab with
// the player, and Escape leaves it.
func TestScormMultiSCOInBrowser(t *testing.T) {
	p := newScormPlay(t)
	pkg := p.uploadPackage("scorm/multi-sco-scorm12.zip")
	topic := p.scormTopic("Golf pages", pkg, 0)

	p.open(topic)
	var ok bool
	p.until("first page", playerOn("Playing/Playing.html"), &ok)
	var toc []tocEntry
	p.eval("contents", tocJS, &toc)
	if len(toc) != 22 {
		t.Fatalf("contents: %d lines, want 4 sections and 18 pages: %+v", len(toc), toc)
	}
	var headings []string
	buttons := 0
	for _, e := range toc {
		if e.Button {
			buttons++
		} else {
			headings = append(headings, e.Title)
		}
	}
	if fmt.Sprint(headings) != "[Playing the Game Etiquette Handicapping Having Fun]" || buttons != 18 {
		t.Fatalf("contents: headings %q, %d pages", headings, buttons)
	}
	if first := toc[1]; first.Title != "How to Play" || !first.Current || first.Status != "completed" {
		t.Fatalf("the first page in the contents: %+v", first)
	}
	if s := p.progressStatus(topic); s != 1 {
		t.Fatalf("topic status %v once its asset is launched", s)
	}

	p.playerButton("continue", "continue")
	p.until("second page", playerOn("Playing/Par.html"), &ok)
	p.eval("contents", tocJS, &toc)
	if toc[1].Status != "completed" || toc[2].Title != "Par" || !toc[2].Current || toc[2].Status != "completed" {
		t.Fatalf("contents on the second page: %+v", toc[:3])
	}

	// The section's quiz, chosen from the contents, with its parameters.
	p.playerButton("choose the quiz", "Playing Golf Quiz")
	p.until("quiz", playerOn("shared/assessmenttemplate.html")+` && F.sco.location.search === '?questions=Playing' &&
		/The rules of golf are maintained by/.test(F.sco.document.body.innerText)`, &ok)
	p.playerButton("previous", "previous")
	p.until("the page before the quiz", playerOn("Playing/RulesOfGolf.html"), &ok)

	// Full window: the player fills the tab, and Escape brings it back.
	p.pressTop("full window", `#scorm-full`)
	var full struct{ Width, Height, Pressed string }
	p.untilTop("filled", `document.getElementById('scorm-box').classList.contains('scorm-full') && {
		width: String(Math.round(document.getElementById('scorm-frame').getBoundingClientRect().width) >= window.innerWidth - 20),
		height: String(Math.round(document.getElementById('scorm-frame').getBoundingClientRect().height) >= window.innerHeight - 80),
		pressed: document.getElementById('scorm-full').getAttribute('aria-pressed')}`, &full)
	if full.Width != "true" || full.Height != "true" || full.Pressed != "true" {
		t.Errorf("full window: %+v", full)
	}
	p.run("escape", chromedp.KeyEvent(kb.Escape))
	p.untilTop("back in the page", `!document.getElementById('scorm-box').classList.contains('scorm-full')`, &ok)

	tracks := p.env.Call(t, 200, "GET", "/api/courses/"+id(p.course.course)+"/scorm", p.learner.Token, nil)
	if n := len(tracks.Get("data").([]any)); n != 4 {
		t.Errorf("tracks of the four pages launched, got %d: %s", n, tracks.Body)
	}
}
