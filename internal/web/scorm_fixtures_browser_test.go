package web

import (
	"fmt"
	"testing"
)

// TestScormFixturesCompleteInBrowser plays every valid SCORM fixture to
// completion in Chromium through the web frontend, one after the other in
// one browser against one server, each as a topic of the course opened by
// a learner: Rustici's golf SCO of SCORM 1.2 and of 2004 read to the end
// with its quiz passed and left by its exit button; the golf pages of one
// asset each, walked with the player's continue button; the four modules
// with prerequisites, each reported done with a passing score in its page's place (the pages
// do not talk to the runtime) and reached with continue once unlocked.
// Each topic is then complete in the learner's progress, and every SCO
// or asset of the package has a finished track.
func TestScormFixturesCompleteInBrowser(t *testing.T) {
	p := newScormPlay(t)
	var ok bool
	finished := func(what string, topic int64, want int) {
		t.Helper()
		p.completes(what, topic)
		tracks := p.env.Call(t, 200, "GET", "/api/courses/"+id(p.course.course)+"/scorm", p.learner.Token, nil)
		n := 0
		for _, tr := range tracks.Get("data").([]any) {
			m := tr.(map[string]any)
			if int64(m["topic_id"].(float64)) != topic {
				continue
			}
			switch m["status"] {
			case "completed", "passed":
				n++
			default:
				t.Errorf("%s: a track is %v: %v", what, m["status"], m)
			}
		}
		if n != want {
			t.Errorf("%s: %d finished tracks, want %d: %s", what, n, want, tracks.Body)
		}
	}

	for _, ed := range []golfEdition{golf12, golf2004} {
		topic := p.scormTopic("Golf "+ed.api, p.uploadPackage(ed.fixture), 0)
		p.open(topic)
		p.until(ed.fixture+" starts", `F.sco.currentPage === 0 && /Playing\/Playing\.html$/.test(F.page.location.pathname)`, &ok)
		p.passGolfQuiz(1)
		p.click("exit", `#butExit`)
		finished(ed.fixture, topic, 1)
	}

	// Eighteen pages in four sections: continue until the last.
	pages := p.scormTopic("Golf pages", p.uploadPackage("scorm/multi-sco-scorm12.zip"), 0)
	p.open(pages)
	p.until("the first page", playerOn("Playing/Playing.html"), &ok)
	const current = `F.player.document.querySelector('#toc-list li.current button').textContent`
	var toc []tocEntry
	p.eval("contents", tocJS, &toc)
	items := 0
	for _, e := range toc {
		if e.Button {
			items++
		}
	}
	for i := 1; i < items; i++ {
		var was string
		p.until("where", current, &was)
		p.playerButton("continue", "continue")
		p.until(fmt.Sprintf("page %d", i+1), `F.player.document.readyState === 'complete' && F.sco.document.readyState === 'complete' && `+
			current+` !== `+jsString(was), &ok)
	}
	finished("the golf pages", pages, items)

	// Module 1 (the topic's SCO) has a mastery score of 80, module 4 of
	// 90; each module is reported done with 95 points, committed before
	// continue asks for the next, which its prerequisites unlock.
	modules := p.scormTopic("Modules", p.uploadPackage("scorm/PrerequisitesTest_SCORM12.zip"), 0)
	p.open(modules)
	p.passModules(4)
	finished("the modules", modules, 4)
}
