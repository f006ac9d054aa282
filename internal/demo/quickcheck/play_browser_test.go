package quickcheck_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/demo/quickcheck"
	"github.com/lms-platform/lms/internal/h5p/embedtest"
)

// topLevelCompleted matches a completed statement of the whole content.
const topLevelCompleted = `m.type === 'lms-h5p:xapi' && /\/completed$/.test(m.statement.verb.id) &&
	!(m.statement.context && m.statement.context.contextActivities && m.statement.context.contextActivities.parent)`

// TestPlayInBrowser plays a generated quiz in the embed page inside a page
// of another site, in Chromium: the learner answers with the keyboard and
// the mouse, leaves and comes back to find their answers, checks, and the
// completed statement completes the topic; after a reload the result is
// still there.
func TestPlayInBrowser(t *testing.T) {
	site := embedtest.New(t, 2*time.Minute, nil)
	env, ctx := site.Env, site.Ctx
	student := env.NewUser("student")
	pkg, err := quickcheck.Package(sample)
	if err != nil {
		t.Fatal(err)
	}
	topic, content := site.Topic(site.Course("Quick check in the browser", student), sample.Title, pkg)

	open := func() *cdp.Node {
		t.Helper()
		site.Play(student, topic, content)
		return site.Frame()
	}
	in := embedtest.In
	waitFor := func(f *cdp.Node, sel, what string) {
		t.Helper()
		if err := chromedp.Run(ctx, chromedp.WaitReady(sel, in(f)...)); err != nil {
			t.Fatalf("%s (%s): %v", what, sel, err)
		}
	}
	waitLog := site.WaitLog
	countLog := func(expr string) int { return len(site.Log(expr)) }
	waitState := func(want string) { site.WaitState(student, topic, content, want) }
	answer := func(q, a int) string {
		return fmt.Sprintf(`.lms-quickcheck__question[data-question="%d"] input[value="%d"]`, q, a)
	}

	// Loaded, sized to its content.
	f := open()
	site.WaitHeight(300)
	if loaded := site.Log(`m.type === 'lms-h5p:loaded'`)[0]; loaded["contentId"] != content || loaded["library"] != quickcheck.MachineName+" 1.0" {
		t.Errorf("loaded message %v", loaded)
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
	if !site.TopicDone(student, topic) {
		t.Error("topic not completed")
	}
	// The keyboard focus moved from the vanished check button to the next
	// action, visibly.
	waitFor(f, `.lms-quickcheck__retry:focus-visible`, "focus on the retry button")
	if err := chromedp.Run(ctx, chromedp.Text(`.lms-quickcheck__status`, &status, in(f)...)); err != nil || status != "You got 3 of 3 right." {
		t.Errorf("result %q %v", status, err)
	}
	finished := apitest.Must(env.UserClient(student).GetH5PFinishedData(t.Context(), client.GetH5PFinishedDataParams{ContentID: &content}))(t)
	if finished.Score != 3 || finished.MaxScore != 3 {
		t.Errorf("finished data: %+v", finished)
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
