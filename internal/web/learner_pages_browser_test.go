package web

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/demo/simdemo"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/liascript"
)

// pageWidths are the widths the learner's pages are measured at: a
// desktop's and a phone's.
var pageWidths = []int64{1280, 390}

// TestLearnerPagesInBrowser measures the learner's pages in Chromium at a
// desktop's and a phone's width: the topic's title starts on the first
// screen (the course outline is folded on the phone, open beside the
// topic on the desktop); the demo's exposure simulator gets a frame as
// high as its content, so its "Next step" button shows; the LiaScript
// page stays at its top once the course has loaded. On the desktop, the
// height an app reports is held within 240 to 2000 px, and a height of
// another shape or from another window changes nothing.
func TestLearnerPagesInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	admin := env.As("admin").Token
	c := seedCourse(t, env, env.Host, admin, "Pages")
	files, err := simdemo.Files()
	if err != nil {
		t.Fatal(err)
	}
	sim := appTopic(t, env, admin, c.lesson, files, map[string]any{"completion": "on_complete", "height": 560})
	steps := appTopic(t, env, admin, c.lesson, stepsApp, nil)
	workshop := int64(env.Call(t, 201, "POST", "/api/admin/topics", admin, map[string]any{"lesson": c.lesson, "title": "Workshop",
		"topicable": liascript.Class, "markdown": string(fixtures.Read(t, "liascript/workshop.md"))}).Number("data.id"))
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+id(c.course)+"/access", admin, map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	templates := newStandIn(t)
	b, origin := browse(t, s, learner, templates.resolverRules(env.Host), chromedp.Flag("ignore-certificate-errors", true))
	open := func(topic int64, ready string) {
		t.Helper()
		b.run("open "+id(topic), chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(topic)), chromedp.WaitVisible(ready, chromedp.ByQuery))
	}

	for _, width := range pageWidths {
		at := fmt.Sprintf("at %d px: ", width)
		b.run(at+"size", chromedp.EmulateViewport(width, 844))

		// The outline and the title of a reading.
		open(c.reading, `#topic h1`)
		var first struct {
			Title   float64 `json:"title"`
			Screen  float64 `json:"screen"`
			Outline bool    `json:"outline"`
		}
		b.run(at+"outline", chromedp.Evaluate(`({title: document.querySelector('#topic h1').getBoundingClientRect().top,
			screen: window.innerHeight, outline: document.querySelector('.outline-box').open})`, &first))
		if first.Title < 0 || first.Title > first.Screen/2 {
			t.Errorf(at+"the topic's title starts at y=%v, not in the first half screen (%v px)", first.Title, first.Screen)
		}
		if wide := width >= 960; first.Outline != wide {
			t.Errorf(at+"the outline is open: %v, want %v", first.Outline, wide)
		}

		// The LiaScript course, in a window that shows only the top of
		// its frame (as a short window or a phone held sideways does),
		// where LiaScript's focus and scrolling on load would pull the
		// page down to its content: once LiaScript has shown the course
		// and the first section's visit is recorded, the page is still at
		// its top. Chromium renders no frame wholly off screen.
		open(workshop, `#lia-frame`)
		var frameTop float64
		b.run(at+"LiaScript frame", chromedp.Evaluate(`document.getElementById('lia-frame').getBoundingClientRect().top + window.scrollY`, &frameTop))
		b.run(at+"short window", chromedp.EmulateViewport(width, int64(frameTop)+80))
		open(workshop, `#lia-frame`)
		lia := b.frame(`#lia-frame`)
		b.run(at+"LiaScript loaded", waitJS(`document.querySelectorAll('.lia-toc__link').length > 0 && !!document.querySelector('main h1')`,
			chromedp.WithPollingInFrame(lia)),
			waitJS(`Number(document.getElementById('lia-frame').dataset.reported || 0) >= 1`))
		var top struct {
			Scroll float64 `json:"scroll"`
			Title  float64 `json:"title"`
			Status float64 `json:"status"`
		}
		b.run(at+"LiaScript page", chromedp.Evaluate(`({scroll: window.scrollY, title: document.querySelector('#topic h1').getBoundingClientRect().top,
			status: document.getElementById('topic-status').getBoundingClientRect().top})`, &top),
			chromedp.EmulateViewport(width, 844))
		if top.Scroll != 0 || top.Title < 0 || top.Status < 0 {
			t.Errorf(at+"the LiaScript page scrolled itself to y=%v (title at %v, status at %v)", top.Scroll, top.Title, top.Status)
		}

		// The simulator: once it has told its height, the frame shows all
		// of it, "Next step" included.
		open(sim, `#app-frame`)
		f := b.frame(`#app-frame`)
		var fit struct {
			Frame   float64 `json:"frame"`
			Content float64 `json:"content"`
			Next    float64 `json:"next"`
		}
		b.run(at+"simulator fits", browsertest.Until(`(function () {
			var next = document.getElementById('next').getBoundingClientRect();
			var content = document.body.getBoundingClientRect().height;
			return next.height > 0 && next.bottom <= window.innerHeight && content <= window.innerHeight + 1 &&
				{frame: window.innerHeight, content: content, next: next.bottom};
		})()`, &fit, chromedp.WithPollingInFrame(f)))
		if fit.Frame-fit.Content > 2 && fit.Frame > 240 {
			t.Errorf(at+"the frame is %v px for %v px of content", fit.Frame, fit.Content)
		}
	}

	// Heights the page takes from an app, and those it ignores: a string,
	// no number, and a message from this window rather than the app's.
	b.run("desktop", chromedp.EmulateViewport(1280, 844))
	open(steps, `#app-frame`)
	f := b.frame(`#app-frame`)
	b.run("watch the frame", waitJS(`(function (app) {
		window.heights = [];
		new MutationObserver(function () { window.heights.push(app.style.height); }).observe(app, {attributes: true, attributeFilter: ['style']});
		return app.style.height === '600px';
	})(document.getElementById('app-frame'))`))
	post := func(what, js string) {
		t.Helper()
		b.run(what, waitJS(`(`+js+`, true)`, chromedp.WithPollingInFrame(f)))
	}
	post("too high", `parent.postMessage({type: 'lms-interactive:resize', height: 99999}, '*')`)
	b.run("held at 2000", waitJS(`document.getElementById('app-frame').style.height === '2000px'`))
	b.run("from this window", chromedp.Evaluate(`window.postMessage({type: 'lms-interactive:resize', height: 700}, '*'), true`, nil))
	post("not numbers", `parent.postMessage({type: 'lms-interactive:resize', height: '800'}, '*'),
		parent.postMessage({type: 'lms-interactive:resize', height: Infinity}, '*'), parent.postMessage({type: 'lms-interactive:resize'}, '*')`)
	post("too low", `parent.postMessage({type: 'lms-interactive:resize', height: 10.5}, '*')`)
	var heights []string
	b.run("held at 240", waitJS(`document.getElementById('app-frame').style.height === '240px'`),
		chromedp.Evaluate(`window.heights`, &heights))
	if fmt.Sprint(heights) != "[2000px 240px]" {
		t.Errorf("the frame's heights: %q, want 2000px then 240px", heights)
	}
}
