package web

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
)

// TestQuizInBrowser: a learner takes a timed quiz, reloads the page
// half-way without losing an answer, hands in, passes, and the topic is
// complete.
func TestQuizInBrowser(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	admin := env.As("admin")
	env.Call(t, 200, "POST", "/api/admin/config", admin.Token,
		map[string]any{"config": []map[string]any{{"key": "lms_gift_quiz.max_quiz_time", "value": 5}}})
	c := seedCourse(t, env, env.Host, admin.Token, "Quiz course")
	res := env.Call(t, 201, "POST", "/api/admin/topics", admin.Token, map[string]any{"lesson": c.lesson, "title": "Check yourself",
		"topicable": `Lms\TopicTypeGift\Models\GiftQuiz`, "value": "Four questions.", "minPassScore": 3,
		"questions": []map[string]any{
			{"prompt": "Which is a prime?", "options": []map[string]any{{"text": "4", "correct": false}, {"text": "7", "correct": true}}},
			{"gift": "The sun is a star. {T}"},
			{"gift": "Capital of France? {=Paris}"},
			{"gift": "Two plus two? {#4}"},
		}})
	quizID := int64(res.Number("data.id"))
	learner := env.NewUser("student")

	_, frontPort, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	ctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host))
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(ctx, `location.href + "\n" + document.body.innerText.slice(0, 3000)`))
		}
	}
	settled := `document.getElementById('quiz').dataset.saving === '0'`
	run("sign in", chromedp.Navigate(origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(landed, chromedp.ByQuery))
	page := origin + "/learn/" + id(c.course) + "/" + id(quizID)
	run("start", chromedp.Navigate(page), chromedp.WaitVisible(`#quiz-start`, chromedp.ByID),
		chromedp.Click(`#quiz-start`, chromedp.ByID),
		browsertest.Until(`document.getElementById('quiz').dataset.state === 'open'`, nil))
	var timer string
	run("timer", chromedp.Text(`#quiz-timer`, &timer, chromedp.ByID))
	if !strings.HasPrefix(timer, "Time left: 5:00") && !strings.HasPrefix(timer, "Time left: 4:5") {
		t.Fatalf("timer shows %q", timer)
	}
	var said string
	run("limit", chromedp.Text(`#quiz-message`, &said, chromedp.ByID))
	if !strings.Contains(said, "5 minutes in all") {
		t.Errorf("the quiz does not say its time limit: %q", said)
	}
	// Two answers, then a reload.
	run("answer", chromedp.Click(`label[for="q1-1"]`, chromedp.ByQuery), chromedp.Click(`label[for="q2-true"]`, chromedp.ByQuery),
		browsertest.Until(`document.getElementById('saved-1').textContent === 'Saved' && document.getElementById('saved-2').textContent === 'Saved' && `+settled, nil))
	browsertest.Screenshot(t, ctx, "web-quiz")
	run("reload", chromedp.Reload(), browsertest.Until(`document.getElementById('quiz').dataset.state === 'open'`, nil))
	var kept bool
	run("kept", chromedp.Evaluate(`document.getElementById('q1-1').checked && document.getElementById('q2-true').checked`, &kept))
	if !kept {
		t.Fatal("answers were lost on reload")
	}
	run("more answers", chromedp.SendKeys(`#q3`, "paris", chromedp.ByID), chromedp.SendKeys(`#q4`, "4", chromedp.ByID),
		browsertest.Until(`document.getElementById('saved-3').textContent === 'Saved' && document.getElementById('saved-4').textContent === 'Saved' && `+settled, nil))
	run("hand in", chromedp.Click(`#quiz-end`, chromedp.ByID),
		browsertest.Until(`document.getElementById('quiz').dataset.state === 'ended'`, nil),
		chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
	var passed, message string
	run("result", chromedp.Evaluate(`document.getElementById('quiz').dataset.passed`, &passed),
		chromedp.Text(`#quiz-message`, &message, chromedp.ByID))
	if passed != "true" || !strings.Contains(message, "4 points of 4 points") {
		t.Fatalf("result: %s %q", passed, message)
	}
	browsertest.Screenshot(t, ctx, "web-quiz-result")

	// Under the review setting after_answer a checked answer shows its
	// review at once and takes no more changes; the other questions stay
	// open, without a review.
	res = env.Call(t, 201, "POST", "/api/admin/topics", admin.Token, map[string]any{"lesson": c.lesson, "title": "Check as you go",
		"topicable": `Lms\TopicTypeGift\Models\GiftQuiz`, "review": "after_answer",
		"questions": []map[string]any{
			{"prompt": "Which is a prime?", "options": []map[string]any{{"text": "4", "correct": false}, {"text": "7", "correct": true}}},
			{"gift": "The sun is a star. {T#No, it is.#Right.}"},
		}})
	run("after_answer: start", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(int64(res.Number("data.id")))),
		chromedp.WaitVisible(`#quiz-start`, chromedp.ByID), chromedp.Click(`#quiz-start`, chromedp.ByID),
		browsertest.Until(`document.getElementById('quiz').dataset.state === 'open'`, nil))
	run("after_answer: check", chromedp.Click(`label[for="q1-1"]`, chromedp.ByQuery), chromedp.Click(`#check-1`, chromedp.ByID),
		browsertest.Until(`document.querySelector('#question-1 .quiz-earned') !== null && `+settled, nil))
	var review string
	run("after_answer: review", chromedp.Evaluate(`[document.querySelector('#question-1').innerText,
		document.getElementById('q1-1').disabled, document.getElementById('check-1') === null,
		document.querySelector('#question-2 .quiz-earned') === null, document.getElementById('q2-true').disabled].join('|')`, &review))
	if !strings.Contains(review, "You earned 1 point of 1 point.") || !strings.Contains(review, "Right answer: 7") ||
		!strings.HasSuffix(review, "|true|true|true|false") {
		t.Fatalf("after_answer review: %q", review)
	}
	browsertest.Screenshot(t, ctx, "web-quiz-after-answer")
}
