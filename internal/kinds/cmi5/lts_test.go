package cmi5_test

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
)

// ltsIRI is the prefix of the ids in CATAPULT's LTS course structures.
const ltsIRI = "https://w3id.org/xapi/cmi5/catapult/lts/"

// lts runs ADL CATAPULT's cmi5 LMS Test Suite packages: one API server
// on SQLite (the rule tests cover PostgreSQL; the browser adds nothing
// per database), one learner and one Chromium.
type lts struct {
	t       *testing.T
	w       *world
	dir     string
	learner *client.Client
	admin   *client.Client
	browser context.Context
}

// ltsResult is what a runtime AU writes into its page's <pre id="result">.
type ltsResult struct {
	Success      bool           `json:"success"`
	IsError      bool           `json:"isError"`
	ReqID        string         `json:"reqId"`
	Msg          string         `json:"msg"`
	Registration string         `json:"registration"`
	SessionID    string         `json:"sessionId"`
	Session      string         `json:"session"`
	LaunchMode   string         `json:"launchMode"`
	MasteryScore any            `json:"masteryScore"`
	MoveOn       string         `json:"moveOn"`
	LaunchParams string         `json:"launchParameters"`
	LaunchString string         `json:"launchString"`
	Actor        map[string]any `json:"actor"`
	ActivityID   string         `json:"activityId"`
}

// TestCATAPULTLMSTestSuite: every runtime package (0xx) of CATAPULT's LTS
// is imported and its AU 0 launched through POST /api/cmi5/launch/{topic}
// in Chromium, where it reports success; the checks of the suite's
// procedure (upstream's lts/__tests__/runtime.js) hold on the stored
// statements; 008-1 and 009-1 abandon and waive through the operator
// routes. The valid imports (1xx) succeed, the invalid ones (2xx) are
// refused with 422 naming the problem.
func TestCATAPULTLMSTestSuite(t *testing.T) {
	dir := fixtures.Path(t, "cmi5-lts")
	env := apitest.New(t, "sqlite", apitest.Options{})
	w := newWorld(t, env)
	// The AU calls the API's origin the launch names: the browser's,
	// with the test server's port.
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(env.HTTP.URL, "http://"))
	host := env.Host + ":" + port
	l := &lts{t: t, w: w, dir: dir, learner: env.Client(host, w.learner.Token), admin: env.Client(host, w.admin.Token)}
	l.browser = browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host))

	t.Run("imports", l.imports)

	r := l.run("001-essentials.zip", "")
	st := l.statements(r.Registration)
	launched := 0
	for _, s := range st {
		if verbOf(s) == cmi5.VerbLaunched {
			launched++
		}
	}
	if launched != 1 || verbOf(st[0]) != cmi5.VerbLaunched {
		t.Fatalf("001: %d launched statements, first %s", launched, verbOf(st[0]))
	}
	for _, i := range []int{0, 4, 5} {
		l.has(st[i], "category", cmi5.CategoryCmi5)
	}
	ext := extensions(st[0])
	launchURL, _ := url.Parse(ext[cmi5.ExtLaunchURL].(string))
	page, _ := url.Parse(r.LaunchString)
	if ext[cmi5.ExtSessionID] != r.SessionID || ext[cmi5.ExtMasteryScore] != r.MasteryScore || ext[cmi5.ExtLaunchMode] != r.LaunchMode ||
		ext[cmi5.ExtMoveOn] != r.MoveOn || ext[cmi5.ExtLaunchParams] != r.LaunchParams || launchURL.Host != page.Host ||
		launchURL.Path != page.Path || launchURL.Query().Get("paramA") != "1" || launchURL.Query().Get("paramB") != "2" {
		t.Fatalf("001 launched: %v, result %+v", st[0], r)
	}
	l.satisfied(st[4], "block", ltsIRI+"block/001-essentials")
	l.satisfied(st[5], "course", ltsIRI+"course/001-essentials")
	for _, i := range []int{4, 5} {
		if extensions(st[i])[cmi5.ExtSessionID] != r.SessionID {
			t.Fatalf("001 satisfied without the session id: %v", st[i])
		}
	}

	r = l.run("002-allowed.zip", "")
	if st := l.statements(r.Registration); verbOf(st[2]) != "http://adlnet.gov/expapi/verbs/experienced" {
		t.Fatalf("002: third statement %s", verbOf(st[2]))
	}
	l.run("003-launchMethod-OwnWindow.zip", "")
	for _, name := range []string{"004-1-moveOn-Completed", "004-2-moveOn-CompletedOrPassed", "004-3-moveOn-Passed", "004-4-moveOn-CompletedOrPassed"} {
		st := l.statements(l.run(name+".zip", "").Registration)
		l.satisfied(st[3], "block", ltsIRI+"block/"+name)
		l.satisfied(st[4], "course", ltsIRI+"course/"+name)
	}
	st = l.statements(l.run("004-5-moveOn-NotApplicable.zip", "").Registration)
	l.satisfied(st[0], "block", ltsIRI+"block/004-5-moveOn-NotApplicable")
	l.satisfied(st[1], "course", ltsIRI+"course/004-5-moveOn-NotApplicable")
	l.run("005-1-invalid-au.zip", "")
	l.run("005-2-invalid-au.zip", "")
	l.run("006-launchMode.zip", cmi5.Browse)
	l.run("006-launchMode.zip", cmi5.Review)
	for _, name := range []string{"007-1-multi-session.zip", "007-2-multi-session.zip"} {
		topic := l.topic(name)
		first := l.launch(topic, "")
		// The second session finds the first's state (same registration
		// and activityId) and must be refused what the first sent.
		l.launch(topic, "")
		if first.Registration == "" {
			t.Fatalf("%s: the first session names no registration: %+v", name, first)
		}
	}
	l.abandoned()
	l.waived()
}

// imports: 1xx are accepted, 2xx refused with 422 naming the problem.
func (l *lts) imports(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(l.dir, "[12]*"))
	if len(files) != 21 {
		t.Fatalf("%d import packages, want 21", len(files))
	}
	// What each refusal must name.
	want := map[string]string{"201": "not an absolute IRI", "202": "is relative", "203": "does not hold", "204": "launch parameter endpoint",
		"205": "already used", "206": "not a valid URL", "207": "not allowed here", "208": "not well-formed XML",
		"209": "not a readable ZIP", "210": "no cmi5.xml"}
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		pkg, err := upload(t, l.w.env, l.w.admin, name, data)
		if strings.HasPrefix(name, "1") {
			if err != nil {
				t.Fatalf("%s refused: %v", name, err)
			}
			if name == "101-one-thousand-aus.xml" && len(pkg.Aus) != 1001 {
				t.Fatalf("%s: %d AUs", name, len(pkg.Aus))
			}
			continue
		}
		e := apitest.Refused(t, err, 422)
		if len(e.Errors["package"]) == 0 || !apitest.Says(e, want[name[:3]]) {
			t.Fatalf("%s: refused without naming %q: %v", name, want[name[:3]], e.Errors)
		}
		t.Logf("%s: %s", name, strings.Join(e.Errors["package"], "; "))
	}
}

// topic imports a runtime package and makes a topic of its AU 0.
func (l *lts) topic(name string) int64 {
	l.t.Helper()
	pkg := l.w.imported(l.t, name, fixtures.Read(l.t, "cmi5-lts/"+name))
	return l.w.topic(l.t, pkg.ID, &pkg.Aus[0].ID, name)
}

// run imports a runtime package and plays its AU 0 once.
func (l *lts) run(name, mode string) ltsResult {
	l.t.Helper()
	return l.launch(l.topic(name), mode)
}

// launch starts a session of the topic as the learner, opens the launch
// URL in the browser and waits for the AU's verdict, which must be a
// success.
func (l *lts) launch(topic int64, mode string) ltsResult {
	l.t.Helper()
	r := l.result(l.open(topic, mode))
	if !r.Success || r.IsError {
		l.t.Fatalf("topic %d (%s): the AU reports %+v", topic, mode, r)
	}
	return r
}

// open launches the topic and loads the AU in the browser.
func (l *lts) open(topic int64, mode string) string {
	l.t.Helper()
	in := client.LaunchInput{}
	if mode != "" {
		in.LaunchMode = &mode
	}
	launch := apitest.Must(l.learner.PostCmi5LaunchID(context.Background(), topic, in))(l.t)
	if err := chromedp.Run(l.browser, chromedp.Navigate(launch.URL)); err != nil {
		l.t.Fatalf("open %s: %v", launch.URL, err)
	}
	return launch.URL
}

// result waits for the AU's <pre id="result"> and reads it.
func (l *lts) result(at string) ltsResult {
	l.t.Helper()
	var text string
	if err := chromedp.Run(l.browser, browsertest.Until(`!!document.getElementById('result')`, nil),
		chromedp.Evaluate(`document.getElementById('result').textContent`, &text)); err != nil {
		l.t.Fatalf("%s: no result: %v\n%s", at, err, browsertest.Show(l.browser, `document.body.innerText.slice(0, 2000)`))
	}
	var r ltsResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		l.t.Fatalf("%s: result %q: %v", at, text, err)
	}
	return r
}

// abandoned: 008-1 waits for the operator to abandon its session, then
// checks its token is refused; the third statement is abandoned.
func (l *lts) abandoned() {
	t := l.t
	topic := l.topic("008-1-abandoned.zip")
	at := l.open(topic, "")
	var session string
	if err := chromedp.Run(l.browser, browsertest.Until(`!!document.getElementById('abandon')`, nil),
		chromedp.Evaluate(`document.getElementById('abandon').getAttribute('value')`, &session)); err != nil {
		t.Fatalf("008-1: no abandon button: %v", err)
	}
	out := apitest.Must(l.admin.PostCmi5AbandonID(context.Background(), topic, client.AbandonInput{User: l.w.learner.ID}))(t)
	if len(out.Sessions) != 1 || out.Sessions[0] != session {
		t.Fatalf("008-1: abandoned %v, the AU's session is %s", out.Sessions, session)
	}
	if err := chromedp.Run(l.browser, chromedp.Click(`#abandon`, chromedp.ByID)); err != nil {
		t.Fatal(err)
	}
	r := l.result(at)
	if !r.Success || r.IsError {
		t.Fatalf("008-1: the AU reports %+v", r)
	}
	st := l.statements(r.Registration)[2]
	l.has(st, "category", cmi5.CategoryCmi5)
	if extensions(st)[cmi5.ExtSessionID] != session || verbOf(st) != cmi5.VerbAbandoned || st["object"].(map[string]any)["id"] != r.ActivityID ||
		st["result"].(map[string]any)["duration"] == nil || !reflect.DeepEqual(st["actor"], r.Actor) ||
		st["context"].(map[string]any)["registration"] != r.Registration {
		t.Fatalf("008-1 abandoned: %v, result %+v", st, r)
	}
}

// waived: 009-1 runs, then the operator waives its AU (Administrative);
// the fourth statement is waived, the fifth satisfied in its session.
func (l *lts) waived() {
	t := l.t
	topic := l.topic("009-1-waived.zip")
	r := l.launch(topic, "")
	apitest.Must(l.admin.PostCmi5WaiveID(context.Background(), topic, client.WaiveInput{User: l.w.learner.ID, Reason: cmi5.ReasonAdmin}))(t)
	list := l.statements(r.Registration)
	waived, sat := list[3], list[4]
	result, _ := waived["result"].(map[string]any)
	resultExt, _ := result["extensions"].(map[string]any)
	l.has(waived, "category", cmi5.CategoryCmi5)
	l.has(waived, "category", cmi5.CategoryMoveOn)
	l.has(sat, "category", cmi5.CategoryCmi5)
	session, _ := extensions(waived)[cmi5.ExtSessionID].(string)
	if verbOf(waived) != cmi5.VerbWaived || resultExt[cmi5.ExtReason] != cmi5.ReasonAdmin || session == "" || session == r.Session ||
		result["success"] != true || result["completion"] != true || !reflect.DeepEqual(waived["actor"], r.Actor) ||
		waived["context"].(map[string]any)["registration"] != r.Registration || waived["object"].(map[string]any)["id"] != r.ActivityID {
		t.Fatalf("009-1 waived: %v, result %+v", waived, r)
	}
	if verbOf(sat) != cmi5.VerbSatisfied || !reflect.DeepEqual(sat["actor"], r.Actor) || sat["context"].(map[string]any)["registration"] != r.Registration ||
		extensions(sat)[cmi5.ExtSessionID] != session {
		t.Fatalf("009-1 satisfied: %v", sat)
	}
}

// statements are a registration's statements, oldest first, as the
// suite's procedure pulls them.
func (l *lts) statements(reg string) []map[string]any {
	l.t.Helper()
	if reg == "" {
		l.t.Fatal("the AU's result names no registration")
	}
	return l.w.adminStatements(l.t, url.Values{"registration": {reg}, "ascending": {"true"}})
}

// has checks that a statement's context lists an activity.
func (l *lts) has(st map[string]any, list, id string) {
	l.t.Helper()
	ca, _ := st["context"].(map[string]any)["contextActivities"].(map[string]any)
	items, _ := ca[list].([]any)
	for _, a := range items {
		if a.(map[string]any)["id"] == id {
			return
		}
	}
	l.t.Fatalf("%s lacks %s in %s: %v", verbOf(st), id, list, st)
}

// satisfied checks an LMS satisfied statement of a block or course: its
// own activity id (not the publisher's) and type, the publisher's id in
// grouping.
func (l *lts) satisfied(st map[string]any, kind, iri string) {
	l.t.Helper()
	obj, _ := st["object"].(map[string]any)
	def, _ := obj["definition"].(map[string]any)
	if verbOf(st) != cmi5.VerbSatisfied || def["type"] != "https://w3id.org/xapi/cmi5/activitytype/"+kind || obj["id"] == iri {
		l.t.Fatalf("satisfied %s %s: %v", kind, iri, st)
	}
	l.has(st, "category", cmi5.CategoryCmi5)
	l.has(st, "grouping", iri)
}

func verbOf(st map[string]any) string {
	v, _ := st["verb"].(map[string]any)["id"].(string)
	return v
}
