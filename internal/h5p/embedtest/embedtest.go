// Package embedtest runs the H5P embed pages in Chromium the way another
// site uses them (docs/h5p-embed.md): a real platform, a parent page on its
// own origin that frames the page, hands over a learner's token, sizes the
// frame and relays xAPI statements to the API through its own server. It
// serves the browser tests of the H5P service and of content built for it.
package embedtest

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

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
)

// APIHost is the tenant host the browser reaches the platform at.
const APIHost = "school.test"

// parentPage logs every message from the frame into window.lmsLog. It
// answers lms-h5p:ready with the token, lms-h5p:resize by sizing the frame,
// lms-h5p:xapi by relaying the statement (then logs {type: 'relayed',
// completed}), and lms-h5p:loaded with lms-h5p:save when asked to.
var parentPage = template.Must(template.New("parent").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Parent</title></head><body>
<h1>Course page</h1>
<iframe id="player" src="{{.Src}}" style="width:900px;height:150px;border:0" allow="fullscreen"></iframe>
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
  } else if (d.type === 'lms-h5p:loaded' && {{.SaveOnLoad}}) {
    frame.contentWindow.postMessage({ type: 'lms-h5p:save' }, api);
  } else if (d.type === 'lms-h5p:xapi') {
    fetch('/relay?topic={{.Topic}}', { method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ statement: d.statement }) })
      .then(function (r) { return r.json(); })
      .then(function (b) { window.lmsLog.push({ type: 'relayed', completed: b.data && b.data.completed }); });
  }
});
</script></body></html>`))

type pageArgs struct {
	Src, APIOrigin, Token string
	Topic                 int64
	SaveOnLoad            bool
}

// Site is a platform, a parent site and a browser tab.
type Site struct {
	T   testing.TB
	Env *apitest.Env
	// Ctx is the browser tab.
	Ctx          context.Context
	APIOrigin    string
	ParentOrigin string

	parentPort string

	mu   sync.Mutex
	page pageArgs
	// relayToken is the token the parent's server relays statements with.
	relayToken string
}

// New starts the parent site, the platform (allowing the parent's origin
// to embed; configure may change more) and the browser. Extra host names
// resolve to 127.0.0.1 too, for pages of further sites.
func New(t testing.TB, timeout time.Duration, configure func(*config.Config), hosts ...string) *Site {
	s := &Site{T: t}
	parent := httptest.NewServer(http.HandlerFunc(s.serveParent))
	t.Cleanup(parent.Close)
	s.parentPort = Port(t, parent.URL)
	s.ParentOrigin = s.Origin("parent.test")
	s.Ctx = browsertest.New(t, timeout, browsertest.MapHosts(append([]string{APIHost, "parent.test"}, hosts...)...),
		browsertest.SameProcessFrames())
	s.Env = apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.H5PEmbedOrigins = []string{s.ParentOrigin}
		if configure != nil {
			configure(c)
		}
	}})
	s.APIOrigin = "http://" + APIHost + ":" + Port(t, s.Env.HTTP.URL)
	chromedp.ListenTarget(s.Ctx, func(ev any) {
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
	return s
}

func (s *Site) serveParent(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	page, token := s.page, s.relayToken
	s.mu.Unlock()
	switch r.URL.Path {
	case "/page":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		parentPage.Execute(w, page)
	case "/relay":
		// The parent's server posts the statement to the API as the
		// learner.
		req, _ := http.NewRequest("POST", s.Env.HTTP.URL+"/api/courses/progress/"+r.URL.Query().Get("topic")+"/h5p", r.Body)
		req.Host = APIHost
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
}

// Course creates a published course with one lesson that learner may
// take, and returns the lesson's id.
func (s *Site) Course(title string, learner *apitest.User) int64 {
	t, env := s.T, s.Env
	t.Helper()
	admin := env.As("admin")
	course := int64(env.Call(t, 201, "POST", "/api/admin/courses", admin.Token,
		map[string]any{"title": title, "status": "published"}).Number("data.id"))
	lesson := int64(env.Call(t, 201, "POST", "/api/admin/lessons", admin.Token,
		map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id"))
	env.Call(t, 200, "POST", fmt.Sprintf("/api/admin/courses/%d/access", course), admin.Token,
		map[string]any{"users": []any{map[string]any{"id": learner.ID}}})
	return lesson
}

// Topic creates an H5P topic in lesson from a package through the API and
// returns the topic and content ids.
func (s *Site) Topic(lesson int64, title string, pkg []byte) (topicID int64, contentID string) {
	t, env := s.T, s.Env
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	w.WriteField("lesson", strconv.FormatInt(lesson, 10))
	w.WriteField("title", title)
	w.WriteField("topicable", h5pcontent.Class)
	part, _ := w.CreateFormFile("package", "content.h5p")
	part.Write(pkg)
	w.Close()
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: env.As("admin").Token,
		Body: b.Bytes(), Type: w.FormDataContentType()})
	if res.Status != 201 {
		t.Fatalf("H5P topic %s: %d %s", title, res.Status, res.Body)
	}
	return int64(res.Number("data.id")), res.String("data.topicable.content_id")
}

// Play opens the parent page with the player of content in the context of
// topic, as learner, and waits for lms-h5p:loaded.
func (s *Site) Play(learner *apitest.User, topic int64, content string) {
	s.T.Helper()
	s.open(pageArgs{Src: s.APIOrigin + "/h5p/embed/play/" + content + "?contextId=" + ContextID(topic),
		Token: learner.Token, Topic: topic}, learner.Token)
	s.WaitLog(`m.type === 'lms-h5p:loaded'`)
}

// Edit opens the parent page with the editor of content (or "new") as
// user; the parent asks for a save once the editor has loaded.
func (s *Site) Edit(user *apitest.User, content string) {
	s.T.Helper()
	s.open(pageArgs{Src: s.APIOrigin + "/h5p/embed/edit/" + content, Token: user.Token, SaveOnLoad: true}, user.Token)
}

// Origin is the origin of the parent site under another host name (one
// given to New), which makes it another site.
func (s *Site) Origin(host string) string { return "http://" + host + ":" + s.parentPort }

// Visit opens the parent page on another origin (see Origin), framing src;
// nothing is awaited.
func (s *Site) Visit(origin, src string, user *apitest.User) {
	s.T.Helper()
	s.mu.Lock()
	s.page = pageArgs{Src: src, APIOrigin: s.APIOrigin, Token: user.Token}
	s.mu.Unlock()
	if err := chromedp.Run(s.Ctx, chromedp.Navigate(origin+"/page")); err != nil {
		s.T.Fatal(err)
	}
}

func (s *Site) open(page pageArgs, token string) {
	s.T.Helper()
	page.APIOrigin = s.APIOrigin
	s.mu.Lock()
	s.page, s.relayToken = page, token
	s.mu.Unlock()
	if err := chromedp.Run(s.Ctx, network.Enable(), chromedp.Navigate(s.ParentOrigin+"/page")); err != nil {
		s.T.Fatal(err)
	}
}

// ContextID is the context the parent page plays a topic's content in.
func ContextID(topic int64) string { return "topic-" + strconv.FormatInt(topic, 10) }

// Frame is the embed page's iframe, for queries inside it (In).
func (s *Site) Frame() *cdp.Node {
	s.T.Helper()
	var nodes []*cdp.Node
	if err := chromedp.Run(s.Ctx, chromedp.Nodes("iframe#player", &nodes, chromedp.ByQuery)); err != nil || len(nodes) != 1 {
		s.T.Fatalf("player frame: %v", err)
	}
	return nodes[0]
}

// In makes a query run inside the frame.
func In(frame *cdp.Node) []chromedp.QueryOption {
	return []chromedp.QueryOption{chromedp.ByQuery, chromedp.FromNode(frame)}
}

// WaitLog waits until a message m of the parent's log satisfies the
// JavaScript expression expr.
func (s *Site) WaitLog(expr string) {
	s.T.Helper()
	var ok bool
	if err := chromedp.Run(s.Ctx, browsertest.Until(`window.lmsLog.some(function (m) { return `+expr+`; })`, &ok)); err != nil {
		log := browsertest.Show(s.Ctx, `JSON.stringify(window.lmsLog.map(function (m) {
			return m.type + (m.statement ? ' ' + m.statement.verb.id : '') + (m.message ? ' ' + m.message : ''); }))`)
		s.T.Fatalf("no message with %s; got %s (%v)", expr, log, err)
	}
}

// Log returns the messages of the parent's log satisfying expr.
func (s *Site) Log(expr string) []map[string]any {
	s.T.Helper()
	var out []map[string]any
	if err := chromedp.Run(s.Ctx, chromedp.Evaluate(`window.lmsLog.filter(function (m) { return `+expr+`; })`, &out)); err != nil {
		s.T.Fatal(err)
	}
	return out
}

// WaitHeight waits until the frame was sized by an lms-h5p:resize taller
// than min, and returns that height.
func (s *Site) WaitHeight(min int) float64 {
	s.T.Helper()
	var height float64
	if err := chromedp.Run(s.Ctx, browsertest.Until(fmt.Sprintf(`(function () {
		var r = window.lmsLog.filter(function (m) { return m.type === 'lms-h5p:resize'; }).pop();
		return r && r.height > %d && document.getElementById('player').style.height === r.height + 'px' ? r.height : 0; })()`, min),
		&height)); err != nil {
		s.T.Fatalf("no resize above %d px: %v %s", min, err,
			browsertest.Show(s.Ctx, `JSON.stringify(window.lmsLog.filter(function (m) { return m.type === 'lms-h5p:resize'; }))`))
	}
	return height
}

// WaitState waits until the learner's saved state of content in topic's
// context contains want, and returns it. H5P saves on a timer of its
// own, so the state is read again until it is there or the browser
// session ends.
func (s *Site) WaitState(learner *apitest.User, topic int64, content, want string) string {
	s.T.Helper()
	path := "/h5p/contentUserData/" + content + "/state/0?contextId=" + url.QueryEscape(ContextID(topic))
	var last string
	for s.Ctx.Err() == nil {
		last, _ = s.Env.Call(s.T, 200, "GET", path, learner.Token, nil).Get("data").(string)
		if strings.Contains(last, want) {
			return last
		}
		time.Sleep(250 * time.Millisecond)
	}
	s.T.Fatalf("state %q was not saved; last %q", want, last)
	return ""
}

// TopicDone reports whether learner has completed topic.
func (s *Site) TopicDone(learner *apitest.User, topic int64) bool {
	s.T.Helper()
	return s.Env.Count(s.T, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1 AND topic_id = $2 AND status = 1`,
		learner.ID, topic) == 1
}

// Port is the port of a server URL.
func Port(t testing.TB, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}
