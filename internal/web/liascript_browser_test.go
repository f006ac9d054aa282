package web

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/kinds/liascript"
)

// templateHosts are the hosts workshop.md imports its templates and
// scripts from. LiaScript loads a course only once its imports are in
// place; the machine has no network, so a local server stands in for
// them. The browser fetches them, as it would from the real hosts; the
// server never does.
var templateHosts = []string{"raw.githubusercontent.com", "jauhl.github.io"}

// standIn serves every path as a minimal LiaScript template (or an empty
// script) over TLS and records the paths asked for.
type standIn struct {
	srv   *httptest.Server
	mu    sync.Mutex
	paths []string
}

func newStandIn(t *testing.T) *standIn {
	s := &standIn{}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.Host+r.URL.Path)
		s.mu.Unlock()
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if strings.HasSuffix(r.URL.Path, ".js") {
			w.Header().Set("Content-Type", "text/javascript")
			return
		}
		w.Write([]byte("<!--\nauthor: stand-in\n-->\n\n# Template\n"))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *standIn) asked() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.paths, " ")
}

// resolverRules maps host to this machine and each template host's
// HTTPS port to the stand-in.
func (s *standIn) resolverRules(host string) chromedp.ExecAllocatorOption {
	rules := []string{"MAP " + host + " 127.0.0.1"}
	for _, h := range templateHosts {
		rules = append(rules, "MAP "+h+":443 "+s.srv.Listener.Addr().String())
	}
	return chromedp.Flag("host-resolver-rules", strings.Join(rules, ", "))
}

// dotZip is a small course in a .zip whose image is linked by a relative
// path.
var dotZip = map[string]string{
	"course.md":   "# Dots\n\nA dot: ![a dot](img/dot.svg)\n\n## More\n\nThe end.\n",
	"img/dot.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="30"><circle cx="20" cy="15" r="10" fill="teal"/></svg>`,
}

// TestLiaScriptInBrowser: workshop.md plays in LiaScript's own runtime on
// the topic page with its 33 sections; visiting a section and answering a
// quiz there records progress; a .zip course shows its image, served by
// its relative path.
func TestLiaScriptInBrowser(t *testing.T) {
	workshop := string(fixtures.Read(t, "liascript/workshop.md"))
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	admin := env.As("admin").Token
	c := seedCourse(t, env, env.Host, admin, "Workshop")
	topic := int64(env.Call(t, 201, "POST", "/api/admin/topics", admin, map[string]any{"lesson": c.lesson, "title": "Workshop",
		"topicable": liascript.Class, "markdown": workshop}).Number("data.id"))
	body, ctype := interactivetest.Form(t, "file", "dots.zip", interactivetest.Zip(t, dotZip),
		map[string]string{"lesson": id(c.lesson), "title": "Dots", "topicable": liascript.Class})
	dots := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin, Body: body, Type: ctype})
	if dots.Status != 201 {
		t.Fatalf("zip topic: %d %s", dots.Status, dots.Body)
	}
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+id(c.course)+"/access", admin, map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	templates := newStandIn(t)
	b, origin := browse(t, s, learner, templates.resolverRules(env.Host), chromedp.Flag("ignore-certificate-errors", true))

	b.run("page", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(topic)), chromedp.WaitVisible(`#lia-frame`, chromedp.ByID))
	f := b.frame(`#lia-frame`)
	var sections int
	b.run("rendered", waitJS(`!!document.querySelector('main h1')`, chromedp.WithPollingInFrame(f)))
	b.run("sections", waitJS(`document.querySelectorAll('.lia-toc__link').length`, chromedp.WithPollingInFrame(f)),
		chromedp.Poll(`document.querySelectorAll('.lia-toc__link').length`, &sections, chromedp.WithPollingInFrame(f)))
	if sections != 33 {
		t.Errorf("LiaScript shows %d sections, want 33", sections)
	}
	for _, want := range []string{"raw.githubusercontent.com/liaTemplates/rextester/master/README.md", "jauhl.github.io/mecEdit/scripts/g2.js"} {
		if !strings.Contains(templates.asked(), want) {
			t.Errorf("the browser did not load %s: %s", want, templates.asked())
		}
	}
	// The first section's visit is recorded as soon as it shows.
	b.run("first visit", waitJS(`Number(document.getElementById('lia-frame').dataset.reported || 0) >= 1`))
	b.screenshot("web-liascript-workshop")

	// To the quiz section (the 8th), by its entry in LiaScript's own
	// table of contents; then the multiple-choice quiz, answered right.
	b.run("to the quiz", waitJS(`(function () {
		var link = Array.prototype.find.call(document.querySelectorAll('.lia-toc__link'), function (a) { return a.textContent.trim() === 'Quizfrage?'; });
		if (link) { link.click(); }
		return !!link;
	})()`, chromedp.WithPollingInFrame(f)),
		waitJS(`document.querySelectorAll('main .lia-quiz').length === 2`, chromedp.WithPollingInFrame(f)))
	b.run("answer", waitJS(`(function () {
		var quiz = document.querySelectorAll('main .lia-quiz')[1];
		var boxes = quiz.querySelectorAll('input[type=checkbox]');
		boxes[0].click(); boxes[1].click();
		quiz.querySelector('.lia-quiz__check').click();
		return true;
	})()`, chromedp.WithPollingInFrame(f)),
		waitJS(`document.querySelectorAll('main .lia-quiz')[1].classList.contains('solved')`, chromedp.WithPollingInFrame(f)),
		waitJS(`/1 of 2 quizzes solved/.test(document.getElementById('lia-progress').textContent)`))
	b.screenshot("web-liascript-quiz")
	var visited, solved string
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	if err := tenant.DB.QueryRowContext(t.Context(), `SELECT visited, solved FROM liascript_progress WHERE topic_id = $1 AND user_id = $2`,
		topic, learner.ID).Scan(&visited, &solved); err != nil {
		t.Fatal(err)
	}
	if visited != "[0,7]" || solved != "[1]" {
		t.Errorf("recorded visited %s, solved %s; want [0,7] and [1]", visited, solved)
	}
	var progress string
	b.run("status", chromedp.Text(`#lia-progress`, &progress, chromedp.ByID))
	if !strings.Contains(progress, "2 of 33 sections visited") {
		t.Errorf("progress shown: %q", progress)
	}

	// The .zip course's image comes from the tenant's store by its path,
	// relative to the course below the frame's play link, on the content
	// origin (which the topic page's scripts cannot read: the test asks
	// the content origin itself).
	b.run("zip course", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(int64(dots.Number("data.id")))),
		chromedp.WaitVisible(`#lia-frame`, chromedp.ByID),
		waitJS(`Number(document.getElementById('lia-frame').dataset.reported || 0) >= 1`))
	var src string
	var ok bool
	b.run("image", chromedp.AttributeValue(`#lia-frame`, "src", &src, &ok, chromedp.ByID))
	r := s.must(req{path: s.contentPath(src) + "img/dot.svg", content: true}, http.StatusOK)
	image := "200 " + r.header.Get("Content-Type") + " " + strconv.Itoa(strings.Index(r.text(), "<circle"))
	if !strings.HasPrefix(image, "200 image/svg+xml") || strings.HasSuffix(image, " -1") {
		t.Errorf("the course's image by its relative path: %q", image)
	}
}
