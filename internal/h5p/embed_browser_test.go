package h5p_test

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/content/h5pcontent"
)

// parentPage is a third-party page embedding the player the way the spec
// describes: it answers lms-h5p:ready with the learner's token, sizes the
// frame on lms-h5p:resize and relays every xAPI statement to the API
// through its own server.
var parentPage = template.Must(template.New("parent").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Parent</title></head><body>
<h1>Course page</h1>
<iframe id="player" src="{{.Src}}" style="width:760px;height:150px;border:0" allow="fullscreen"></iframe>
<script>
window.lmsLog = [];
var api = {{.APIOrigin}}, frame = document.getElementById('player');
window.addEventListener('message', function (e) {
  if (e.source !== frame.contentWindow || e.origin !== api) { return; }
  var d = e.data;
  window.lmsLog.push(d);
  if (d.type === 'lms-h5p:ready') {
    frame.contentWindow.postMessage({ type: 'lms-h5p:token', token: {{.Token}} }, api);
  } else if (d.type === 'lms-h5p:resize') {
    frame.style.height = d.height + 'px';
  } else if (d.type === 'lms-h5p:xapi') {
    fetch('/relay?topic={{.Topic}}', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ statement: d.statement }) })
      .then(function (r) { return r.json(); })
      .then(function (b) { window.lmsLog.push({ type: 'relayed', completed: b.data && b.data.completed }); });
  }
});
</script></body></html>`))

// h5pTopic creates an H5P topic from a fixture through the API and returns
// the topic and content ids.
func h5pTopic(t *testing.T, env *apitest.Env, token string, lesson int64, fixture string) (topicID int64, contentID string) {
	t.Helper()
	pkg := readFixture(t, fixture)
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("lesson", strconv.FormatInt(lesson, 10))
	w.WriteField("title", fixture)
	w.WriteField("topicable", h5pcontent.Class)
	part, _ := w.CreateFormFile("package", "content.h5p")
	part.Write(pkg)
	w.Close()
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: token, Body: b.Bytes(), Type: w.FormDataContentType()})
	if res.Status != 201 {
		t.Fatalf("H5P topic from %s: %d %s", fixture, res.Status, res.Body)
	}
	return int64(res.Number("data.id")), res.String("data.topicable.content_id")
}

// TestEmbedPlayerInBrowser runs the player page in Chromium inside a page
// of another site, with the token handed over by postMessage, and follows
// a learner through two real H5P contents.
func TestEmbedPlayerInBrowser(t *testing.T) {
	ctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts("school.test", "parent.test"), browsertest.SameProcessFrames())

	type pageArgs struct {
		Src, APIOrigin, Token string
		Topic                 int64
	}
	var (
		mu      sync.Mutex
		args    pageArgs
		apiURL  string
		student *apitest.User
	)
	parent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := args
		mu.Unlock()
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			parentPage.Execute(w, a)
		case "/relay":
			// The parent's server posts the statement to the API as the
			// learner.
			req, _ := http.NewRequest("POST", apiURL+"/api/courses/progress/"+r.URL.Query().Get("topic")+"/h5p", r.Body)
			req.Host = "school.test"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+student.Token)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer res.Body.Close()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(res.StatusCode)
			io.Copy(w, res.Body)
		default:
			http.NotFound(w, r)
		}
	}))
	defer parent.Close()
	parentOrigin := "http://parent.test:" + port(t, parent.URL)

	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.H5PEmbedOrigins = []string{parentOrigin}
	}})
	apiURL = env.HTTP.URL
	apiOrigin := "http://school.test:" + port(t, env.HTTP.URL)
	admin := env.As("admin")
	student = env.NewUser("student")

	course := int64(env.Call(t, 201, "POST", "/api/admin/courses", admin.Token,
		map[string]any{"title": "H5P in the browser", "status": "published"}).Number("data.id"))
	lesson := int64(env.Call(t, 201, "POST", "/api/admin/lessons", admin.Token,
		map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id"))
	env.Call(t, 200, "POST", fmt.Sprintf("/api/admin/courses/%d/access", course), admin.Token,
		map[string]any{"users": []any{map[string]any{"id": student.ID}}})
	quizTopic, quiz := h5pTopic(t, env, admin.Token, lesson, "/work/shared/fixtures/h5p/hub/H5P.TrueFalse.h5p")
	sliderTopic, slider := h5pTopic(t, env, admin.Token, lesson, "/work/shared/fixtures/h5p/valid/valid3-3-images.h5p")

	// Every URL the browser asks for, to check no token is ever in one.
	var urlsMu sync.Mutex
	var urls []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			urlsMu.Lock()
			urls = append(urls, e.Request.URL)
			urlsMu.Unlock()
		case *runtime.EventExceptionThrown:
			t.Logf("browser exception: %s", e.ExceptionDetails.Error())
		case *runtime.EventConsoleAPICalled:
			var parts []string
			for _, a := range e.Args {
				parts = append(parts, string(a.Value)+a.Description)
			}
			t.Logf("browser console %s: %s", e.Type, strings.Join(parts, " "))
		}
	})

	open := func(topic int64, content string) {
		t.Helper()
		mu.Lock()
		args = pageArgs{Src: apiOrigin + "/h5p/embed/play/" + content + "?contextId=topic-" + strconv.FormatInt(topic, 10),
			APIOrigin: apiOrigin, Token: student.Token, Topic: topic}
		mu.Unlock()
		var loaded bool
		if err := chromedp.Run(ctx, network.Enable(), chromedp.Navigate(parentOrigin+"/page"),
			chromedp.Poll(`window.lmsLog.some(function (m) { return m.type === 'lms-h5p:loaded'; })`, &loaded,
				chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			var dump string
			chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify({log: window.lmsLog, loc: location.href, frame: (function () { try { return document.getElementById('player').contentDocument.body.innerText; } catch (e) { return 'no access: ' + e; } })()})`, &dump))
			t.Fatalf("content %s did not load: %v\n%s", content, err, dump)
		}
	}
	frame := func() *cdp.Node {
		t.Helper()
		var nodes []*cdp.Node
		if err := chromedp.Run(ctx, chromedp.Nodes("iframe#player", &nodes, chromedp.ByQuery)); err != nil || len(nodes) != 1 {
			t.Fatalf("player frame: %v", err)
		}
		return nodes[0]
	}
	waitLog := func(expr string) {
		t.Helper()
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Poll(`window.lmsLog.some(function (m) { return `+expr+`; })`, &ok,
			chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			var log string
			chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify(window.lmsLog.map(function (m) { return m.type + (m.statement ? ' ' + m.statement.verb.id : ''); }))`, &log))
			t.Fatalf("no message with %s; got %s (%v)", expr, log, err)
		}
	}

	// The true/false question: loaded and resized, answered, state saved.
	open(quizTopic, quiz)
	var loadedMsg map[string]any
	var height float64
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`window.lmsLog.find(function (m) { return m.type === 'lms-h5p:loaded'; })`, &loadedMsg),
		chromedp.Poll(`(function () { var r = window.lmsLog.filter(function (m) { return m.type === 'lms-h5p:resize'; }).pop();
			return r && r.height > 150 && document.getElementById('player').style.height === r.height + 'px' ? r.height : 0; })()`,
			&height, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		var dump string
		chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify(window.lmsLog.filter(function (m) { return m.type !== 'lms-h5p:xapi'; }).concat([document.getElementById('player').style.height]))`, &dump))
		t.Fatalf("resize: %v %s", err, dump)
	}
	if loadedMsg["contentId"] != quiz || !strings.HasPrefix(fmt.Sprint(loadedMsg["library"]), "H5P.TrueFalse ") {
		t.Errorf("loaded message %v", loadedMsg)
	}
	f := frame()
	if err := chromedp.Run(ctx,
		chromedp.Click(`.h5p-true-false-answer`, chromedp.ByQuery, chromedp.FromNode(f)),
		chromedp.Click(`.h5p-question-check-answer`, chromedp.ByQuery, chromedp.FromNode(f))); err != nil {
		t.Fatalf("answer the question: %v", err)
	}
	waitLog(`m.type === 'lms-h5p:xapi' && /answered$/.test(m.statement.verb.id) && m.contentId === '` + quiz + `'`)
	waitLog(`m.type === 'relayed'`)

	// H5P saves the state a few seconds after an answer, and the result at
	// once: both through the service, with the token in a header.
	stateURL := "/h5p/contentUserData/" + quiz + "/state/0?contextId=topic-" + strconv.FormatInt(quizTopic, 10)
	var state string
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res := env.Call(t, 200, "GET", stateURL, student.Token, nil)
		if s, ok := res.Get("data").(string); ok && strings.Contains(s, `"answer":true`) {
			state = s
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if state == "" {
		t.Fatal("the answer was not saved as the learner's state")
	}
	result := env.Call(t, 200, "GET", "/h5p/finishedData?contentId="+quiz, student.Token, nil)
	if result.Number("data.score") != 1 || result.Number("data.maxScore") != 1 {
		t.Errorf("result: %s", result.Body)
	}
	if n := env.Count(t, `SELECT COUNT(*) FROM topic_h5p_statements WHERE topic_id = $1`, quizTopic); n == 0 {
		t.Error("no statement stored for the topic")
	}

	// After a reload the learner finds their answer again.
	open(quizTopic, quiz)
	f = frame()
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Run(wait, chromedp.WaitReady(`.h5p-true-false-answer[aria-checked="true"]`, chromedp.ByQuery, chromedp.FromNode(f))); err != nil {
		t.Fatalf("state not restored after reload: %v", err)
	}

	// The image slider completes when every image has been seen: the
	// completed statement of the top-level content completes the topic.
	open(sliderTopic, slider)
	f = frame()
	if err := chromedp.Run(ctx,
		chromedp.WaitVisible(`.h5p-agamotto-slider-thumb`, chromedp.ByQuery, chromedp.FromNode(f)),
		chromedp.SendKeys(`.h5p-agamotto-slider-thumb`, kb.ArrowRight, chromedp.ByQuery, chromedp.FromNode(f)),
		chromedp.Sleep(300*time.Millisecond),
		chromedp.SendKeys(`.h5p-agamotto-slider-thumb`, kb.ArrowRight, chromedp.ByQuery, chromedp.FromNode(f))); err != nil {
		t.Fatalf("slide through the images: %v", err)
	}
	waitLog(`m.type === 'lms-h5p:xapi' && /completed$/.test(m.statement.verb.id)`)
	waitLog(`m.type === 'relayed' && m.completed === true`)
	if n := env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1 AND topic_id = $2 AND status = 1`,
		student.ID, sliderTopic); n != 1 {
		t.Errorf("slider topic not completed (%d rows)", n)
	}
	if n := env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1 AND topic_id = $2 AND status = 1`,
		student.ID, quizTopic); n != 0 {
		t.Errorf("an answered statement completed the quiz topic")
	}
	browsertest.Screenshot(t, ctx, "h5p-embed-slider")

	urlsMu.Lock()
	defer urlsMu.Unlock()
	if len(urls) < 10 {
		t.Fatalf("only %d requests seen", len(urls))
	}
	for _, u := range urls {
		if strings.Contains(u, student.Token) || strings.Contains(u, "_token=") {
			t.Errorf("token in a URL: %s", u)
		}
	}
}

func port(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
