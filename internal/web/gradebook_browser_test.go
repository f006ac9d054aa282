package web

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestGradebookInBrowser: after a learner completed a topic, their tutor
// signs in and opens the course's progress table, which shows the
// completion at a desktop's and a phone's width without widening the
// page (the table scrolls inside its box), and opens the learner's page
// from it.
func TestGradebookInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	course, first, _, learner := gradebookCourse(t, s)
	b, origin := browse(t, s, s.env.As("tutor"))
	cell := fmt.Sprintf(`#gradebook tr[data-user="%d"] td[data-topic="%d"][data-topic-status="1"]`, learner.ID, first)
	for _, width := range pageWidths {
		at := fmt.Sprintf("at %d px: ", width)
		var wide bool
		b.run(at+"progress table", chromedp.EmulateViewport(width, 844),
			chromedp.Navigate(origin+"/teach/courses/"+id(course)+"/progress"),
			chromedp.WaitVisible(cell, chromedp.ByQuery),
			chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &wide))
		if wide {
			var what string
			b.run("widest", chromedp.Evaluate(`[...document.querySelectorAll('body *')].filter(e => !e.closest('.table-scroll') && e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 8).map(e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right)).join('; ')`, &what))
			t.Error(at + "the page is wider than the window: " + what)
		}
		b.screenshot(fmt.Sprintf("web-gradebook-progress-%d", width))
	}
	b.run("learner page", chromedp.Click(fmt.Sprintf(`#gradebook tr[data-user="%d"] th a`, learner.ID), chromedp.ByQuery),
		chromedp.WaitVisible(fmt.Sprintf(`#learner-topics tr[data-topic="%d"][data-topic-status="1"]`, first), chromedp.ByQuery))
	b.screenshot("web-gradebook-learner")
}
