package h5p_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/h5p/embedtest"
)

// TestEmbedPlayerInBrowser runs the player page in Chromium inside a page
// of another site, with the token handed over by postMessage, and follows
// a learner through two real H5P contents.
func TestEmbedPlayerInBrowser(t *testing.T) {
	site := embedtest.New(t, 3*time.Minute, nil)
	env, ctx := site.Env, site.Ctx
	student := env.NewUser("student")
	lesson := site.Course("H5P in the browser", student)
	quizTopic, quiz := site.Topic(lesson, "True or false", readFixture(t, trueFalseFixture))
	sliderTopic, slider := site.Topic(lesson, "Slider", readFixture(t, filepath.Join(fixtureDir, "valid", "valid3-3-images.h5p")))

	// Every URL the browser asks for, to check no token is ever in one.
	var urlsMu sync.Mutex
	var urls []string
	chromedp.ListenTarget(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			urlsMu.Lock()
			urls = append(urls, e.Request.URL)
			urlsMu.Unlock()
		}
	})

	// The true/false question: loaded and sized, answered, state saved.
	site.Play(student, quizTopic, quiz)
	site.WaitHeight(150)
	if loaded := site.Log(`m.type === 'lms-h5p:loaded'`)[0]; loaded["contentId"] != quiz ||
		!strings.HasPrefix(fmt.Sprint(loaded["library"]), "H5P.TrueFalse ") {
		t.Errorf("loaded message %v", loaded)
	}
	f := site.Frame()
	if err := chromedp.Run(ctx,
		chromedp.Click(`.h5p-true-false-answer`, embedtest.In(f)...),
		chromedp.Click(`.h5p-question-check-answer`, embedtest.In(f)...)); err != nil {
		t.Fatalf("answer the question: %v", err)
	}
	site.WaitLog(`m.type === 'lms-h5p:xapi' && /answered$/.test(m.statement.verb.id) && m.contentId === '` + quiz + `'`)
	site.WaitLog(`m.type === 'relayed'`)

	// H5P saves the state a few seconds after an answer, and the result at
	// once: both through the service, with the token in a header.
	site.WaitState(student, quizTopic, quiz, `"answer":true`)
	result := env.Call(t, 200, "GET", "/h5p/finishedData?contentId="+quiz, student.Token, nil)
	if result.Number("data.score") != 1 || result.Number("data.maxScore") != 1 {
		t.Errorf("result: %s", result.Body)
	}
	if n := env.Count(t, `SELECT COUNT(*) FROM topic_h5p_statements WHERE topic_id = $1`, quizTopic); n == 0 {
		t.Error("no statement stored for the topic")
	}

	// After a reload the learner finds their answer again.
	site.Play(student, quizTopic, quiz)
	if err := chromedp.Run(ctx, chromedp.WaitReady(`.h5p-true-false-answer[aria-checked="true"]`, embedtest.In(site.Frame())...)); err != nil {
		t.Fatalf("state not restored after reload: %v", err)
	}

	// The image slider completes when every image has been seen: the
	// completed statement of the top-level content completes the topic.
	site.Play(student, sliderTopic, slider)
	if err := browsertest.SlideH5PImages(ctx, site.Frame(), 2); err != nil {
		t.Fatalf("slide through the images: %v", err)
	}
	site.WaitLog(`m.type === 'lms-h5p:xapi' && /completed$/.test(m.statement.verb.id)`)
	site.WaitLog(`m.type === 'relayed' && m.completed === true`)
	if !site.TopicDone(student, sliderTopic) {
		t.Error("slider topic not completed")
	}
	if site.TopicDone(student, quizTopic) {
		t.Error("an answered statement completed the quiz topic")
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
