package quickcheck_test

import (
	"bytes"
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
	"github.com/lms-platform/lms/internal/demo/quickcheck"
)

// parentPage embeds the player as a course page of another site does
// (docs/h5p-embed.md): it hands over the learner's token, sizes the frame
// and relays every xAPI statement to the API through its own server.
var parentPage = template.Must(template.New("parent").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Parent</title></head><body>
<h1>Course page</h1>
<iframe id="player" src="{{.Src}}" style="width:760px;height:150px;border:0"></iframe>
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

// topLevelCompleted matches a completed statement of the whole content.
const topLevelCompleted = `m.type === 'lms-h5p:xapi' && /\/completed$/.test(m.statement.verb.id) &&
	!(m.statement.context && m.statement.context.contextActivities && m.statement.context.contextActivities.parent)`

// TestPlayInBrowser plays a generated quiz in the embed page inside a page
// of another site, in Chromium: the learner answers with the keyboard and
// the mouse, leaves and comes back to find their answers, checks, and the
// completed statement completes the topic; after a reload the result is
// still there.
func TestPlayInBrowser(t *testing.T) {
	ctx := browsertest.New(t, 2*time.Minute, browsertest.MapHosts("school.test", "parent.test"), browsertest.SameProcessFrames())

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
		a, token := args, ""
		if student != nil {
			token = student.Token
		}
		mu.Unlock()
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			parentPage.Execute(w, a)
		case "/relay":
			req, _ := http.NewRequest("POST", apiURL+"/api/courses/progress/"+r.URL.Query().Get("topic")+"/h5p", r.Body)
			req.Host = "school.test"
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
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
	mu.Lock()
	student = env.NewUser("student")
	mu.Unlock()

	course := int64(env.Call(t, 201, "POST", "/api/admin/courses", admin.Token,
		map[string]any{"title": "Quick check in the browser", "status": "published"}).Number("data.id"))
	lesson := int64(env.Call(t, 201, "POST", "/api/admin/lessons", admin.Token,
		map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id"))
	env.Call(t, 200, "POST", fmt.Sprintf("/api/admin/courses/%d/access", course), admin.Token,
		map[string]any{"users": []any{map[string]any{"id": student.ID}}})
	topic, content := quizTopic(t, env, admin.Token, lesson)

	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
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

	open := func() *cdp.Node {
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
			chromedp.Run(ctx, chromedp.Evaluate(`JSON.stringify(window.lmsLog)`, &dump))
			t.Fatalf("content %s did not load: %v\n%s", content, err, dump)
		}
		var nodes []*cdp.Node
		if err := chromedp.Run(ctx, chromedp.Nodes("iframe#player", &nodes, chromedp.ByQuery)); err != nil || len(nodes) != 1 {
			t.Fatalf("player frame: %v", err)
		}
		return nodes[0]
	}
	in := func(f *cdp.Node) []chromedp.QueryOption {
		return []chromedp.QueryOption{chromedp.ByQuery, chromedp.FromNode(f)}
	}
	waitFor := func(f *cdp.Node, sel, what string) {
		t.Helper()
		if err := chromedp.Run(ctx, chromedp.WaitReady(sel, in(f)...)); err != nil {
			t.Fatalf("%s (%s): %v", what, sel, err)
		}
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
	countLog := func(expr string) int {
		t.Helper()
		var n int
		if err := chromedp.Run(ctx, chromedp.Evaluate(`window.lmsLog.filter(function (m) { return `+expr+`; }).length`, &n)); err != nil {
			t.Fatal(err)
		}
		return n
	}
	stateURL := "/h5p/contentUserData/" + content + "/state/0?contextId=topic-" + strconv.FormatInt(topic, 10)
	waitState := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		var last string
		for time.Now().Before(deadline) {
			last, _ = env.Call(t, 200, "GET", stateURL, student.Token, nil).Get("data").(string)
			if strings.Contains(last, want) {
				return
			}
			time.Sleep(250 * time.Millisecond)
		}
		t.Fatalf("state %q was not saved; last %q", want, last)
	}
	answer := func(q, a int) string {
		return fmt.Sprintf(`.lms-quickcheck__question[data-question="%d"] input[value="%d"]`, q, a)
	}

	// Loaded, sized to its content.
	f := open()
	var loadedMsg map[string]any
	var height float64
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`window.lmsLog.find(function (m) { return m.type === 'lms-h5p:loaded'; })`, &loadedMsg),
		chromedp.Poll(`(function () { var r = window.lmsLog.filter(function (m) { return m.type === 'lms-h5p:resize'; }).pop();
			return r && r.height > 300 && document.getElementById('player').style.height === r.height + 'px' ? r.height : 0; })()`,
			&height, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("resize: %v", err)
	}
	if loadedMsg["contentId"] != content || loadedMsg["library"] != quickcheck.MachineName+" 1.0" {
		t.Errorf("loaded message %v", loadedMsg)
	}

	// The first two questions with the keyboard: space picks the focused
	// answer, the arrow keys move through a question's answers.
	q0, q1 := sample.Questions[0], sample.Questions[1]
	keys := " " + strings.Repeat(kb.ArrowDown, q0.Correct)
	if err := chromedp.Run(ctx,
		chromedp.WaitVisible(answer(0, 0), in(f)...),
		chromedp.SendKeys(answer(0, 0), keys, in(f)...),
		chromedp.SendKeys(answer(1, 0), " "+strings.Repeat(kb.ArrowDown, q1.Correct), in(f)...)); err != nil {
		t.Fatalf("answer with the keyboard: %v", err)
	}
	waitFor(f, answer(1, q1.Correct)+":checked", "second answer chosen with the arrow keys")
	waitLog(`m.type === 'lms-h5p:xapi' && /\/interacted$/.test(m.statement.verb.id)`)
	waitState(fmt.Sprintf(`"answers":[%d,%d,null]`, q0.Correct, q1.Correct))

	// Back later: the answers are there; checking with one left open
	// points it out and completes nothing.
	f = open()
	waitFor(f, answer(0, q0.Correct)+":checked", "first answer restored")
	waitFor(f, answer(1, q1.Correct)+":checked", "second answer restored")
	var status string
	if err := chromedp.Run(ctx,
		chromedp.Click(`.lms-quickcheck__check`, in(f)...),
		chromedp.WaitVisible(`.lms-quickcheck__question[data-question="2"].is-missing .lms-quickcheck__feedback`, in(f)...),
		chromedp.Text(`.lms-quickcheck__status`, &status, in(f)...)); err != nil {
		t.Fatalf("check with a question left: %v", err)
	}
	if !strings.Contains(status, "2 of 3 answered") {
		t.Errorf("status %q", status)
	}

	// The last answer by its label, then the check button with Enter.
	q2 := sample.Questions[2]
	label := fmt.Sprintf(`.lms-quickcheck__question[data-question="2"] .lms-quickcheck__answer:nth-of-type(%d)`, q2.Correct+1)
	if err := chromedp.Run(ctx,
		chromedp.Click(label, in(f)...),
		chromedp.WaitReady(answer(2, q2.Correct)+":checked", in(f)...),
		chromedp.SendKeys(`.lms-quickcheck__check`, kb.Enter, in(f)...)); err != nil {
		t.Fatalf("answer and check: %v", err)
	}
	waitLog(topLevelCompleted)
	if n := countLog(`m.type === 'lms-h5p:xapi' && /\/completed$/.test(m.statement.verb.id)`); n != 1 {
		t.Errorf("%d completed statements for one check", n)
	}
	var stmt map[string]any
	if err := chromedp.Run(ctx, chromedp.Evaluate(`window.lmsLog.filter(function (m) { return `+topLevelCompleted+`; })[0].statement`, &stmt)); err != nil {
		t.Fatal(err)
	}
	result, _ := stmt["result"].(map[string]any)
	score, _ := result["score"].(map[string]any)
	if score["raw"] != 3.0 || score["max"] != 3.0 || result["success"] != true || result["completion"] != true {
		t.Errorf("completed statement result %v", result)
	}
	ext := stmt["object"].(map[string]any)["definition"].(map[string]any)["extensions"].(map[string]any)
	if fmt.Sprint(ext["http://h5p.org/x-api/h5p-local-content-id"]) != content {
		t.Errorf("statement object %v", stmt["object"])
	}
	waitLog(`m.type === 'relayed' && m.completed === true`)
	if n := env.Count(t, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1 AND topic_id = $2 AND status = 1`,
		student.ID, topic); n != 1 {
		t.Errorf("topic not completed (%d rows)", n)
	}
	// The keyboard focus moved from the vanished check button to the next
	// action, visibly.
	waitFor(f, `.lms-quickcheck__retry:focus-visible`, "focus on the retry button")
	if err := chromedp.Run(ctx, chromedp.Text(`.lms-quickcheck__status`, &status, in(f)...)); err != nil || status != "You got 3 of 3 right." {
		t.Errorf("result %q %v", status, err)
	}
	finished := env.Call(t, 200, "GET", "/h5p/finishedData?contentId="+content, student.Token, nil)
	if finished.Number("data.score") != 3 || finished.Number("data.maxScore") != 3 {
		t.Errorf("finished data: %s", finished.Body)
	}
	waitState(`"checked":true`)
	browsertest.Screenshot(t, ctx, "quickcheck-checked")

	// After a reload the result is shown again, the answers locked, and
	// nothing is completed a second time.
	f = open()
	waitFor(f, answer(2, q2.Correct)+":checked:disabled", "checked answers restored")
	if err := chromedp.Run(ctx,
		chromedp.WaitVisible(`.lms-quickcheck__retry`, in(f)...),
		chromedp.Text(`.lms-quickcheck__status`, &status, in(f)...)); err != nil || status != "You got 3 of 3 right." {
		t.Errorf("result after reload %q %v", status, err)
	}
	if n := countLog(`m.type === 'lms-h5p:xapi'`); n != 0 {
		t.Errorf("%d statements after restoring a checked quiz", n)
	}

	// Try again clears the answers, and the cleared state is saved.
	if err := chromedp.Run(ctx, chromedp.Click(`.lms-quickcheck__retry`, in(f)...),
		chromedp.WaitReady(answer(0, q0.Correct)+":not(:checked):not(:disabled)", in(f)...)); err != nil {
		t.Fatalf("try again: %v", err)
	}
	waitState(`"answers":[null,null,null],"checked":false`)

	// A wrong answer: the check still completes, without success, and the
	// solution shows the right answer.
	wrong := (q0.Correct + 1) % len(q0.Answers)
	if err := chromedp.Run(ctx,
		chromedp.Click(answer(0, wrong), in(f)...),
		chromedp.Click(answer(1, q1.Correct), in(f)...),
		chromedp.Click(answer(2, q2.Correct), in(f)...),
		chromedp.Click(`.lms-quickcheck__check`, in(f)...),
		chromedp.WaitVisible(`.lms-quickcheck__solution`, in(f)...),
		chromedp.Text(`.lms-quickcheck__status`, &status, in(f)...)); err != nil || status != "You got 2 of 3 right." {
		t.Fatalf("check with a wrong answer: %q %v", status, err)
	}
	waitLog(topLevelCompleted + ` && m.statement.result.success === false && m.statement.result.score.raw === 2`)
	var feedback string
	if err := chromedp.Run(ctx,
		chromedp.Click(`.lms-quickcheck__solution`, in(f)...),
		chromedp.WaitVisible(fmt.Sprintf(`.lms-quickcheck__question[data-question="0"] .lms-quickcheck__answer.is-correct:nth-of-type(%d) .lms-quickcheck__mark`, q0.Correct+1), in(f)...),
		chromedp.Text(`.lms-quickcheck__question[data-question="0"] .lms-quickcheck__feedback`, &feedback, in(f)...)); err != nil {
		t.Fatalf("show the solution: %v", err)
	}
	if want := "Not quite. The answer is: " + q0.Answers[q0.Correct] + "."; !strings.HasPrefix(feedback, want) {
		t.Errorf("feedback %q, want %q", feedback, want)
	}
	browsertest.Screenshot(t, ctx, "quickcheck-solution")
}

// quizTopic creates an H5P topic from the sample quiz through the topics
// route, as the demo seed does, and returns the topic and content ids.
func quizTopic(t *testing.T, env *apitest.Env, token string, lesson int64) (int64, string) {
	t.Helper()
	data, err := quickcheck.Package(sample)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("lesson", strconv.FormatInt(lesson, 10))
	w.WriteField("title", sample.Title)
	w.WriteField("topicable", h5pcontent.Class)
	part, _ := w.CreateFormFile("package", "quick-check.h5p")
	part.Write(data)
	w.Close()
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: token, Body: b.Bytes(), Type: w.FormDataContentType()})
	if res.Status != 201 || res.String("data.topicable.content_id") == "" {
		t.Fatalf("H5P topic: %d %s", res.Status, res.Body)
	}
	return int64(res.Number("data.id")), res.String("data.topicable.content_id")
}

func port(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
