package web

import (
	"bytes"
	"context"
	"mime/multipart"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	scormkind "github.com/lms-platform/lms/internal/content/scorm"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/scorm"
)

// scoWindow reaches the golf SCO's launch page: topic page > player page
// (iframe scorm-frame) > SCO (iframe sco), all on the frontend's origin.
const scoWindow = `document.getElementById('scorm-frame').contentWindow.document.getElementById('sco').contentWindow`

// scormWorld is a SCORM topic of a course and a learner signed in to the
// frontend in Chromium.
type scormWorld struct {
	env     *apitest.Env
	ctx     context.Context
	origin  string
	course  int64
	topic   int64
	learner *apitest.User
}

func newScormWorld(t *testing.T, fixture string, sco int) *scormWorld {
	data, err := os.ReadFile(fixtures.Path(t, "scorm/"+fixture))
	if err != nil {
		t.Fatal(err)
	}
	env := apitest.New(t, "sqlite", apitest.Options{})
	f := newFront(t, env.HTTP.URL, "platform.test", frontOptions{clock: env.Clock})
	admin := env.As("admin")
	c := seedCourse(t, env, env.Host, admin.Token, "SCORM course")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("package", fixture)
	fw.Write(data)
	mw.Close()
	pkg := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/scorm/upload", Token: admin.Token, Body: body.Bytes(), Type: mw.FormDataContentType()})
	if pkg.Status != 201 {
		t.Fatalf("upload: %s", pkg.Body)
	}
	scoID := pkg.Get("data.scos").([]any)[sco].(map[string]any)["id"]
	res := env.Call(t, 201, "POST", "/api/admin/topics", admin.Token, map[string]any{"lesson": c.lesson, "title": "Golf",
		"topicable": scormkind.Class, "package": pkg.Number("data.id"), "sco": scoID})
	w := &scormWorld{env: env, course: c.course, topic: int64(res.Number("data.id")), learner: env.NewUser("student")}
	_, port, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	w.origin = "http://" + env.Host + ":" + port
	w.ctx = browsertest.New(t, 4*time.Minute, browsertest.MapHosts(env.Host))
	// The golf SCO asks with confirm() whether to resume: yes.
	chromedp.ListenTarget(w.ctx, func(ev any) {
		if _, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			go chromedp.Run(w.ctx, page.HandleJavaScriptDialog(true))
		}
	})
	w.run(t, "sign in", chromedp.Navigate(w.origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, w.learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, w.learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(`a[href="/my"][aria-current="page"]`, chromedp.ByQuery))
	return w
}

func (w *scormWorld) run(t *testing.T, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(w.ctx, actions...); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(w.ctx, `location.href + "\n" + document.body.innerText.slice(0, 2000)`))
	}
}

func (w *scormWorld) topicPage() string { return w.origin + "/learn/" + id(w.course) + "/" + id(w.topic) }

// stored reads the learner's stored model back through a launch of the
// API (the suspended attempt resumes, so nothing is lost by it).
func (w *scormWorld) stored(t *testing.T, sco string) (map[string]any, string) {
	t.Helper()
	l := w.env.Call(t, 200, "POST", "/api/scorm/launch/"+sco, w.learner.Token, map[string]any{"topic_id": w.topic})
	res := w.env.Do(apitest.Request{Method: "GET", Path: "/api/scorm/tracks/" + sco, Headers: map[string]string{scorm.TokenHeader: l.String("data.token")}})
	if res.Status != 200 {
		t.Fatalf("stored: %s", res.Body)
	}
	// The token opens nothing else.
	if other := w.env.Do(apitest.Request{Method: "GET", Path: "/api/courses/" + id(w.course) + "/scorm",
		Headers: map[string]string{scorm.TokenHeader: l.String("data.token")}}); other.Status != 401 {
		t.Errorf("tracking token on the track list: %d", other.Status)
	}
	return res.Get("data.cmi").(map[string]any), l.String("data.entry")
}

func (w *scormWorld) topicDone(t *testing.T) bool {
	t.Helper()
	res := w.env.Call(t, 200, "GET", "/api/courses/progress/"+id(w.course), w.learner.Token, nil)
	for _, tp := range res.Get("data.topics").([]any) {
		m := tp.(map[string]any)
		if int64(m["topic_id"].(float64)) == w.topic {
			return m["status"].(float64) == 1
		}
	}
	return false
}

// playGolf answers pages of a golf SCO, suspends by leaving, resumes at
// the stored page with its data, then completes it.
func playGolf(t *testing.T, fixture, location, status, exit string, completed []string) {
	w := newScormWorld(t, fixture, 0)
	sco := w.env.Call(t, 200, "GET", "/api/admin/topics/"+id(w.topic), w.env.As("admin").Token, nil)
	scoID := id(int64(sco.Number("data.topicable.sco_id")))
	started := scoWindow + `.currentPage === 0`
	w.run(t, "open", chromedp.Navigate(w.topicPage()), browsertest.Until(`(function(){try{return `+started+`}catch(e){return false}})()`, nil))
	browsertest.Screenshot(t, w.ctx, "web-scorm-"+fixture)
	w.run(t, "pages", chromedp.Evaluate(scoWindow+`.doNext(); `+scoWindow+`.doNext(); `+scoWindow+`.doNext();`, nil),
		browsertest.Until(scoWindow+`.currentPage === 3`, nil))
	// Leaving the page unloads the SCO, which suspends.
	w.run(t, "close", chromedp.Navigate(w.origin+"/my"))
	var cmi map[string]any
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		cmi, _ = w.stored(t, scoID)
		if cmi[exit] == "suspend" {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	if cmi[location] != "3" || cmi[exit] != "suspend" || cmi[status] != "incomplete" {
		t.Fatalf("stored after suspend: %v", cmi)
	}
	if w.topicDone(t) {
		t.Fatal("topic complete before the end")
	}
	// Reopen: the SCO resumes at page 3.
	w.run(t, "reopen", chromedp.Navigate(w.topicPage()), browsertest.Until(`(function(){try{return `+scoWindow+`.currentPage === 3}catch(e){return false}})()`, nil))
	var entry string
	w.run(t, "entry", chromedp.Evaluate(`(function(){var p=document.getElementById('scorm-frame').contentWindow; return (p.API ? p.API.LMSGetValue('cmi.core.entry') : p.API_1484_11.GetValue('cmi.entry'))})()`, &entry))
	if entry != "resume" {
		t.Fatalf("entry %q", entry)
	}
	// To the last page: the SCO completes; leaving finishes it.
	w.run(t, "end", chromedp.Evaluate(scoWindow+`.currentPage = 13; `+scoWindow+`.doNext();`, nil),
		browsertest.Until(scoWindow+`.currentPage === 14`, nil))
	w.run(t, "leave", chromedp.Navigate(w.origin+"/my"))
	deadline = time.Now().Add(20 * time.Second)
	for !w.topicDone(t) && time.Now().Before(deadline) {
		time.Sleep(300 * time.Millisecond)
	}
	if !w.topicDone(t) {
		t.Fatal("the topic did not complete")
	}
	tracks := w.env.Call(t, 200, "GET", "/api/courses/"+id(w.course)+"/scorm", w.learner.Token, nil)
	got := tracks.String("data.0.completion_status")
	found := false
	for _, c := range completed {
		found = found || got == c
	}
	if !found || tracks.Number("data.0.seconds") < 0 {
		t.Fatalf("track: %s", tracks.Body)
	}
}

func TestScorm12GolfInBrowser(t *testing.T) {
	playGolf(t, "RuntimeBasicCalls_SCORM12.zip", "cmi.core.lesson_location", "cmi.core.lesson_status", "cmi.core.exit", []string{"completed", "passed"})
}

func TestScorm2004GolfInBrowser(t *testing.T) {
	playGolf(t, "RuntimeBasicCalls_SCORM20043rdEdition.zip", "cmi.location", "cmi.completion_status", "cmi.exit", []string{"completed"})
}

// TestScormMultiSCOInBrowser: the table of contents and previous,
// continue and choice between the SCOs of a package.
func TestScormMultiSCOInBrowser(t *testing.T) {
	w := newScormWorld(t, "multi-sco-scorm12.zip", 0)
	player := `document.getElementById('scorm-frame').contentWindow.document`
	w.run(t, "open", chromedp.Navigate(w.topicPage()),
		browsertest.Until(`(function(){try{return `+player+`.querySelectorAll('#toc-list li').length === 22}catch(e){return false}})()`, nil))
	var prevDisabled bool
	w.run(t, "first", chromedp.Evaluate(player+`.getElementById('previous').disabled`, &prevDisabled))
	if !prevDisabled {
		t.Error("previous is enabled on the first SCO")
	}
	w.run(t, "continue", chromedp.Evaluate(player+`.getElementById('continue').click()`, nil),
		browsertest.Until(`(function(){try{return `+player+`.querySelector('#toc-list li.current button').textContent === 'Par'}catch(e){return false}})()`, nil))
	// A choice from the table of contents: the Etiquette quiz.
	w.run(t, "choice", chromedp.Evaluate(`Array.prototype.filter.call(`+player+`.querySelectorAll('#toc-list button'), function(b){return b.textContent === 'Etiquette Quiz'})[0].click()`, nil),
		browsertest.Until(`(function(){try{return `+player+`.getElementById('sco').contentWindow.location.search === '?questions=Etiquette'}catch(e){return false}})()`, nil))
	browsertest.Screenshot(t, w.ctx, "web-scorm-multi")
	w.run(t, "previous", chromedp.Evaluate(player+`.getElementById('previous').click()`, nil),
		browsertest.Until(`(function(){try{return `+player+`.querySelector('#toc-list li.current button').textContent === 'Playing Politely'}catch(e){return false}})()`, nil))
	// Assets complete when launched; the topic's own SCO completed it.
	if !w.topicDone(t) {
		t.Fatal("the topic did not complete")
	}
	tracks := w.env.Call(t, 200, "GET", "/api/courses/"+id(w.course)+"/scorm", w.learner.Token, nil)
	if n := len(tracks.Get("data").([]any)); n != 4 {
		t.Fatalf("%d tracks: %s", n, tracks.Body)
	}
}
