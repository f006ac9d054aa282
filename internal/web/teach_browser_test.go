package web

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
)

// TestTeachWalkInBrowser walks a new tutor's path in Chromium: sign in
// (landing on the dashboard), create a course, add a lesson and topics of
// several kinds (rich text in the Markdown editor, a GIFT quiz, an image,
// an H5P package and a SCORM package with its SCO chosen, the uploads
// with their progress bar), reorder with the arrow buttons, publish; a
// learner assigned to it then completes the reading in another browser.
// Every authoring page is checked with axe-core at 390 and 1280 px (no
// serious or critical violation) and saved as a screenshot.
func mustID(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an id: %q", s)
	}
	return n
}

func TestTeachWalkInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	tutor, learner := env.NewUser("tutor"), env.NewUser("student")
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(s.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	b := &browserRun{t: t, ctx: newBrowser(t, env.Host)}
	pages := 0
	check := func(name string) {
		t.Helper()
		pages++
		for _, width := range pageWidths {
			b.run(fmt.Sprintf("%s at %d px", name, width), chromedp.EmulateViewport(width, 900))
			vs, err := browsertest.Axe(b.ctx)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, v := range browsertest.Severe(vs) {
				t.Errorf("%s at %d px: %s", name, width, v)
			}
			var overflow bool
			b.run(name+" width", chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow))
			if overflow {
				t.Errorf("%s at %d px: the page is wider than the screen", name, width)
			}
			b.screenshot(fmt.Sprintf("teach-%s-%d", name, width))
		}
		b.run(name+" desktop", chromedp.EmulateViewport(1280, 900))
	}

	b.run("sign in", chromedp.Navigate(origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, tutor.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, tutor.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(`a[href="/teach"][aria-current="page"]`, chromedp.ByQuery))
	check("dashboard")

	// A new course.
	b.run("new course", chromedp.Click(`a[href="/teach/courses/new"]`, chromedp.ByQuery), chromedp.WaitVisible(`#title`, chromedp.ByID))
	check("course-new")
	b.run("create", chromedp.SendKeys(`#title`, "Rock pools", chromedp.ByID),
		chromedp.SendKeys(`#summary`, "What lives between the tides.", chromedp.ByID),
		chromedp.Click(`form[action="/teach/courses/new"] button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#program`, chromedp.ByID))
	var loc string
	b.run("course id", chromedp.Location(&loc))
	course := strings.TrimPrefix(strings.Split(strings.TrimPrefix(loc, origin), "?")[0], "/teach/courses/")
	b.run("add lesson", chromedp.SendKeys(`#lesson-title`, "Crabs", chromedp.ByID),
		chromedp.Submit(`#lesson-title`, chromedp.ByID), chromedp.WaitVisible(`.teach-lesson`, chromedp.ByQuery))

	// Rich text, typed in the editor.
	b.run("add topic", chromedp.Click(`.teach-lesson a[href*="/topics/new"]`, chromedp.ByQuery), chromedp.WaitVisible(`.teach-kinds`, chromedp.ByQuery))
	check("topic-kinds")
	b.run("rich text", chromedp.Click(`a.teach-kind[href*="kind=richtext"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#title`, chromedp.ByID), waitJS(`!!document.querySelector('.TinyMDE')`))
	check("topic-richtext")
	b.run("write", chromedp.SendKeys(`#title`, "Shore crabs", chromedp.ByID), chromedp.Click(`.TinyMDE`, chromedp.ByQuery),
		chromedp.SendKeys(`.TinyMDE`, "Crabs walk **sideways**.", chromedp.ByQuery),
		chromedp.Click(`.teach-topic-form button[type=submit]`, chromedp.ByQuery), chromedp.WaitVisible(`#topic-view`, chromedp.ByID))
	check("topic-page")
	var readingURL string
	b.run("reading", chromedp.Location(&readingURL))

	newTopic := func(kind string) {
		t.Helper()
		b.run(kind, chromedp.Navigate(origin+"/teach/courses/"+course+"/topics/new?kind="+kind), chromedp.WaitVisible(`#title`, chromedp.ByID))
	}
	added := chromedp.WaitVisible(`#topic-view`, chromedp.ByID)

	// A GIFT quiz: its questions come back parsed, with the right answers.
	newTopic("quiz")
	check("topic-quiz")
	b.run("quiz", chromedp.SendKeys(`#title`, "Crab quiz", chromedp.ByID),
		chromedp.SendKeys(`#gift`, "How many legs has a crab? {#10}\n\nCrabs are insects. {F}", chromedp.ByID),
		chromedp.SetValue(`#maxAttempts`, "2", chromedp.ByID),
		chromedp.Click(`.teach-topic-form button[type=submit]`, chromedp.ByQuery), added)
	var answers []string
	b.run("answers", chromedp.Evaluate(`Array.from(document.querySelectorAll('.teach-answer')).map(function (e) { return e.textContent; })`, &answers))
	if fmt.Sprint(answers) != "[10 False]" {
		t.Errorf("the quiz's right answers: %q", answers)
	}
	check("topic-quiz-page")

	// Uploads, with the progress bar: an image, an H5P package, and a
	// SCORM package of several SCOs, whose SCO is chosen next.
	png := filepath.Join(t.TempDir(), "crab.png")
	if err := os.WriteFile(png, apitest.PNG(t), 0o600); err != nil {
		t.Fatal(err)
	}
	upload := func(kind, title, file string, then chromedp.Action) {
		t.Helper()
		newTopic(kind)
		b.run(kind+" upload", chromedp.SendKeys(`#title`, title, chromedp.ByID), chromedp.SetUploadFiles(`#upload`, []string{file}, chromedp.ByID),
			chromedp.Click(`.teach-topic-form button[type=submit]`, chromedp.ByQuery), then)
	}
	upload("image", "A crab", png, added)
	upload("h5p", "Greeting card", fixture(t, "h5p/valid/valid2.h5p"), added)
	upload("scorm", "Modules", fixture(t, "scorm/PrerequisitesTest_SCORM12.zip"), chromedp.WaitVisible(`input[name=sco]`, chromedp.ByQuery))
	check("topic-scorm-choice")
	b.run("choose the SCO", chromedp.Click(`.teach-topic-form input[name=sco]:nth-of-type(1)`, chromedp.ByQuery),
		chromedp.Click(`.teach-topic-form button[type=submit]`, chromedp.ByQuery), added)

	// Back on the course: the quiz moves up with its arrow, then publish.
	b.run("course", chromedp.Navigate(origin+"/teach/courses/"+course), chromedp.WaitVisible(`#program`, chromedp.ByID))
	var before, after []string
	titles := `Array.from(document.querySelectorAll('.teach-topic-title')).map(function (e) { return e.textContent; })`
	b.run("order", chromedp.Evaluate(titles, &before))
	b.run("move up", chromedp.Click(`.teach-topic:nth-child(2) button[aria-label^="Move up"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`.notice-ok`, chromedp.ByQuery), chromedp.Evaluate(titles, &after))
	if len(before) != 5 || len(after) != 5 || after[0] != before[1] || after[1] != before[0] {
		t.Errorf("moving up: %q, then %q", before, after)
	}
	// Drag and drop: the last topic dragged above the first; the page
	// reloads once the move is saved.
	var lastID string
	b.run("drag", chromedp.Evaluate(`(function () {
		var items = document.querySelectorAll('.teach-topics > li');
		var last = items[items.length - 1], first = items[0];
		var dt = new DataTransfer();
		document.getElementById('program').classList.add('before-reload');
		last.dispatchEvent(new DragEvent('dragstart', {bubbles: true, dataTransfer: dt}));
		first.dispatchEvent(new DragEvent('dragover', {bubbles: true, cancelable: true, dataTransfer: dt,
			clientY: first.getBoundingClientRect().top + 1}));
		last.dispatchEvent(new DragEvent('dragend', {bubbles: true, dataTransfer: dt}));
		return last.id;
	})()`, &lastID))
	b.run("dropped", chromedp.WaitVisible(`#program:not(.before-reload) .teach-topics > li:first-child#`+lastID, chromedp.ByQuery))
	var dropped []string
	b.run("after the drop", chromedp.WaitReady(`#program`, chromedp.ByID), chromedp.Evaluate(titles, &dropped))
	if len(dropped) != 5 || dropped[0] != after[4] || dropped[1] != after[0] {
		t.Errorf("drag and drop: %q, then %q", after, dropped)
	}
	cid0 := strings.TrimPrefix(lastID, "topic-")
	order := apitest.Must(s.env.Client(env.Host, tutor.Token).GetAdminCoursesIDProgram(t.Context(), mustID(t, course)))(t).Lessons[0].Topics
	if id(order[0].ID) != cid0 {
		t.Errorf("the API's order after the drop: %+v", order)
	}
	check("course-edit")
	b.run("publish", chromedp.Navigate(origin+"/teach/courses/"+course), chromedp.WaitVisible(`#status`, chromedp.ByID),
		chromedp.SetValue(`#status`, "published", chromedp.ByID),
		chromedp.Click(`form[aria-labelledby="details-title"] button[type=submit]`, chromedp.ByQuery), chromedp.WaitVisible(`.notice-ok`, chromedp.ByQuery))
	b.run("list", chromedp.Navigate(origin+"/teach/courses"), chromedp.WaitVisible(`.teach-table`, chromedp.ByQuery))
	check("courses")
	b.run("delete page", chromedp.Navigate(origin+"/teach/courses/"+course+"/delete"), chromedp.WaitVisible(`.teach-delete`, chromedp.ByQuery))
	check("course-delete")

	// The learner, assigned through the API, reads the topic in a browser
	// of their own.
	ctx := t.Context()
	cid := apitest.Must(s.env.Client(env.Host, tutor.Token).GetAdminCourses(ctx, client.GetAdminCoursesParams{Title: client.Ptr("Rock pools")}))(t).Items[0].ID
	apitest.Must(s.env.Client(env.Host, env.As("admin").Token).PostAdminCoursesIDAccess(ctx, cid,
		client.AssignInputBody{Users: []client.GrantBody{{ID: learner.ID}}}))(t)
	lb, _ := browse(t, s, learner)
	reading := strings.Split(strings.TrimPrefix(readingURL, origin+"/teach/courses/"+course+"/topics/"), "?")[0]
	lb.run("read", chromedp.Navigate(origin+"/learn/"+course+"/"+reading), chromedp.WaitVisible(`#topic h1`, chromedp.ByQuery),
		waitJS(`!!document.querySelector('#topic-status.status-1')`))
	p := apitest.Must(s.env.Client(env.Host, learner.Token).GetCoursesProgressID(ctx, cid))(t)
	done := false
	for _, pr := range p.Topics {
		if fmt.Sprint(pr.TopicID) == reading && pr.Status == 1 {
			done = true
		}
	}
	if !done {
		t.Errorf("the reading is not complete in the learner's progress: %+v", p.Topics)
	}
	t.Logf("%d authoring pages checked with axe-core at %v px", pages, pageWidths)
}
