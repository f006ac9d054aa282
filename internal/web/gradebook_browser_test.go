package web

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
)

// TestGradebookInBrowser: after a learner finished the course, their
// tutor signs in and opens the course's progress table, which shows the
// completion and its chart at a desktop's and a phone's width without
// widening the page (the table scrolls inside its box) and passes axe;
// the tutor opens the chart's table, filters by the course's group with the
// keyboard, and opens the learner's page from the table.
func TestGradebookInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	ctx := t.Context()
	course, first, _, learner := gradebookCourse(t, s)
	s.must(req{method: "POST", path: "/learn/" + id(course) + "/" + id(first+1) + "/complete", token: learner.Token}, http.StatusSeeOther)
	admin := s.env.ClientAs("admin")
	night := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Night class"}))(t).ID
	apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Groups: []client.GrantBody{{ID: night}}}))(t)
	b, origin := browse(t, s, s.env.As("tutor"))
	cell := fmt.Sprintf(`#gradebook tr[data-user="%d"] td[data-topic="%d"][data-topic-status="1"]`, learner.ID, first)
	for _, width := range pageWidths {
		at := fmt.Sprintf("at %d px: ", width)
		var wide bool
		b.run(at+"progress table", chromedp.EmulateViewport(width, 844),
			chromedp.Navigate(origin+"/teach/courses/"+id(course)+"/progress"),
			chromedp.WaitVisible(cell, chromedp.ByQuery), chromedp.WaitVisible(`#completion-chart svg`, chromedp.ByQuery),
			chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &wide))
		if wide {
			var what string
			b.run("widest", chromedp.Evaluate(`[...document.querySelectorAll('body *')].filter(e => !e.closest('.table-scroll') && e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('; ')`, &what))
			t.Error(at + "the page is wider than the window: " + what)
		}
		b.run(at+"chart table", chromedp.Click(`.chart-table summary`, chromedp.ByQuery),
			chromedp.WaitVisible(`#completion-table`, chromedp.ByID))
		vs, err := browsertest.Axe(b.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range browsertest.Severe(vs) {
			t.Errorf("%s%s", at, v)
		}
		b.screenshot(fmt.Sprintf("web-gradebook-progress-%d", width))
	}
	// The group filter, chosen with the arrow key and sent with Enter
	// from the search box.
	var chosen string
	b.run("choose a group", chromedp.Focus(`#gb-group`, chromedp.ByID), chromedp.KeyEvent(kb.ArrowDown),
		chromedp.Value(`#gb-group`, &chosen, chromedp.ByID))
	if chosen != id(night) {
		t.Fatalf("the arrow key chose %q", chosen)
	}
	b.run("group filter", chromedp.Focus(`#gb-q`, chromedp.ByID), chromedp.KeyEvent("\r"),
		chromedp.WaitReady(fmt.Sprintf(`#gb-group option[value="%d"][selected]`, night), chromedp.ByQuery))
	var rows int
	b.run("rows", chromedp.Evaluate(`document.querySelectorAll('#gradebook tbody tr').length`, &rows))
	if rows != 0 {
		t.Errorf("the group of nobody shows %d learners", rows)
	}
	b.run("all groups", chromedp.Navigate(origin+"/teach/courses/"+id(course)+"/progress"), chromedp.WaitVisible(cell, chromedp.ByQuery))
	b.run("learner page", chromedp.Click(fmt.Sprintf(`#gradebook tr[data-user="%d"] th a`, learner.ID), chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#learner-topics tr[data-topic="%d"][data-topic-status="1"]`, first), chromedp.ByQuery))
	b.screenshot("web-gradebook-learner")

	// The learner's tracks: a quiz attempt, a SCORM track, a cmi5
	// session and an H5P result, each opened from the learner's page
	// with the keyboard, at both widths.
	tutor := s.env.As("tutor").Token
	lesson := apitest.Must(s.env.Client("", tutor).PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Kiln"}))(t).ID
	tr := s.env.TrackedTopics(t, tutor, lesson, learner)
	learnerURL := origin + "/teach/courses/" + id(course) + "/learners/" + id(learner.ID)
	for _, width := range pageWidths {
		for _, c := range []struct {
			name  string
			topic int64
			shown string
		}{
			{"quiz", tr.Quiz, `#quiz-track tr[data-question] td`},
			{"scorm", tr.SCORM, `#scorm-track tr[data-interaction="par-1"]`},
			{"cmi5", tr.CMI5, `#cmi5-track tr[data-verb="http://adlnet.gov/expapi/verbs/completed"]`},
			{"h5p", tr.H5P, `#h5p-track tr[data-verb="http://adlnet.gov/expapi/verbs/answered"]`},
		} {
			at := fmt.Sprintf("at %d px, %s track: ", width, c.name)
			link := fmt.Sprintf(`a.track-link[href$="/topics/%d"]`, c.topic)
			var wide bool
			b.run(at+"open", chromedp.EmulateViewport(width, 844), chromedp.Navigate(learnerURL),
				chromedp.WaitVisible(link, chromedp.ByQuery), chromedp.Focus(link, chromedp.ByQuery), chromedp.KeyEvent("\r"),
				chromedp.WaitVisible(c.shown, chromedp.ByQuery),
				chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &wide))
			if wide {
				t.Error(at + "the page is wider than the window")
			}
			vs, err := browsertest.Axe(b.ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range browsertest.Severe(vs) {
				t.Errorf("%s%s", at, v)
			}
			if width == pageWidths[0] {
				b.screenshot("web-gradebook-track-" + c.name)
			}
		}
	}
}
