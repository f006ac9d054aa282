package web

import (
	"bytes"
	"mime/multipart"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/kinds/layout"
)

// layoutDocument has one node of every component the page renders,
// playing the H5P content h5pID.
func layoutDocument(h5pID string) []any {
	n := func(component string, props map[string]any) map[string]any {
		return map[string]any{"component": component, "props": props}
	}
	practice := n("PracticeActivity", map[string]any{"title": "Check yourself", "questions": []any{
		map[string]any{"prompt": "Which planet is the largest?", "options": []any{
			map[string]any{"text": "Mars"}, map[string]any{"text": "Jupiter", "correct": true}, map[string]any{"text": "Venus"}},
			"hints": []any{"It is a gas giant."}, "solution": "Jupiter is more than twice as massive as all other planets combined."},
		map[string]any{"gift": "Which star is closest to the Earth? {=the Sun #Yes, our own star. =Sun}"},
	}})
	practice["id"] = "check"
	return []any{
		n("Callout", map[string]any{"tone": "tip", "title": "Before you start", "body": "Have a notebook ready."}),
		n("Steps", map[string]any{"title": "How to observe", "steps": []any{map[string]any{"title": "Find a dark place"},
			map[string]any{"title": "Wait", "body": "Let your eyes adapt for 20 minutes."}}}),
		n("ComparisonTable", map[string]any{"caption": "Inner and outer planets", "columns": []any{"Inner", "Outer"},
			"rows": []any{map[string]any{"label": "Surface", "cells": []any{"Rock", "Gas"}}}}),
		n("H5PFrame", map[string]any{"content_id": h5pID, "title": "Slide through the pictures"}),
		n("Timeline", map[string]any{"events": []any{map[string]any{"date": "1610", "title": "Galileo sees Jupiter's moons"}}}),
		n("FlipCards", map[string]any{"cards": []any{map[string]any{"front": "Closest planet to the Sun?", "back": "Mercury"}}}),
		n("CodeBlock", map[string]any{"language": "python", "code": "print('hello, planets')", "caption": "A first program"}),
		practice,
	}
}

// TestLayoutLessonInBrowser: a learner sees every component of a layout
// lesson, the page holds no answers, flip cards and answers work from the
// keyboard, and the first checked answer completes the topic.
func TestLayoutLessonInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	admin := env.As("admin")
	c := seedCourse(t, env, env.Host, admin.Token, "Planets")
	data, err := os.ReadFile(fixture(t, "h5p/valid/valid3-3-images.h5p"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("h5p_file", "content.h5p")
	part.Write(data)
	w.Close()
	up := env.Do(apitest.Request{Method: "POST", Path: "/h5p/contents/upload", Token: admin.Token, Body: b.Bytes(), Type: w.FormDataContentType()})
	if up.Status != 201 {
		t.Fatalf("H5P upload: %d %s", up.Status, up.Body)
	}
	lesson := env.Call(t, 201, "POST", "/api/admin/topics", admin.Token, map[string]any{"lesson": c.lesson, "title": "The planets",
		"topicable": layout.Class, "document": layoutDocument(up.String("data.contentId")),
		"fallback": "# The planets\n\nObserve the night sky and compare the planets."})
	topicID := int64(lesson.Number("data.id"))
	learner := env.NewUser("student")

	_, frontPort, _ := strings.Cut(strings.TrimPrefix(s.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	ctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host), browsertest.SameProcessFrames())
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(ctx, `location.href + "\n" + document.body.innerText.slice(0, 3000)`))
		}
	}
	run("sign in", chromedp.Navigate(origin+"/login"), chromedp.WaitVisible(`#email`, chromedp.ByID),
		chromedp.SendKeys(`#email`, learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(landed, chromedp.ByQuery))

	page := origin + "/learn/" + id(c.course) + "/" + id(topicID)
	var html string
	run("layout page", chromedp.Navigate(page), chromedp.WaitVisible(`#layout-doc`, chromedp.ByID),
		chromedp.OuterHTML(`html`, &html, chromedp.ByQuery))
	for _, want := range []string{`class="callout callout-tip"`, "How to observe", "<caption", `scope="row"`, "Galileo",
		"Closest planet to the Sun?", "print('hello, planets')", "Which planet is the largest?", `type="radio"`} {
		if !strings.Contains(html, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, secret := range []string{"gas giant", "twice as massive", "correct", "our own star"} {
		if strings.Contains(html, secret) {
			t.Errorf("the page holds %q before a check", secret)
		}
	}
	var loaded bool
	run("H5PFrame plays", browsertest.Until(`document.querySelector('iframe[data-h5p]').dataset.loaded === '1'`, &loaded))
	var complete bool
	run("viewing does not complete", chromedp.Evaluate(`!!document.querySelector('#topic-status.status-1')`, &complete))
	if complete {
		t.Fatal("a layout with practice completed before a check")
	}

	// Flip a card and answer from the keyboard.
	var back bool
	run("flip card", chromedp.Focus(`.flipcard summary`, chromedp.ByQuery), chromedp.KeyEvent("\r"),
		chromedp.Evaluate(`document.querySelector('.flipcard').open`, &back))
	if !back {
		t.Error("Enter on a flip card does not show its back")
	}
	browsertest.Screenshot(t, ctx, "web-layout")
	run("wrong answer", chromedp.Focus(`#node-7-0-0`, chromedp.ByID), chromedp.KeyEvent(" "),
		chromedp.Click(`form.practice-question button`, chromedp.ByQuery),
		chromedp.WaitVisible(`.practice-verdict.wrong`, chromedp.ByQuery),
		chromedp.WaitVisible(`.practice-hint`, chromedp.ByQuery),
		chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
	var result string
	run("right answer", chromedp.Focus(`#node-7-0-1`, chromedp.ByID), chromedp.KeyEvent(" "),
		chromedp.Focus(`form.practice-question button`, chromedp.ByQuery), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`.practice-verdict.ok`, chromedp.ByQuery),
		chromedp.Text(`.practice-result`, &result, chromedp.ByQuery))
	if !strings.Contains(result, "Correct.") || !strings.Contains(result, "twice as massive") {
		t.Errorf("result of the right answer: %q", result)
	}
	var feedback string
	run("GIFT short answer", chromedp.SendKeys(`#node-7-1-0`, "the sun\r", chromedp.ByID),
		chromedp.WaitVisible(`form[data-kind="shortanswer"] .practice-verdict.ok`, chromedp.ByQuery),
		chromedp.Text(`form[data-kind="shortanswer"] .practice-result`, &feedback, chromedp.ByQuery))
	if !strings.Contains(feedback, "Yes, our own star.") {
		t.Errorf("result of the GIFT answer: %q", feedback)
	}
	browsertest.Screenshot(t, ctx, "web-layout-checked")
	run("complete after reload", chromedp.Navigate(page), chromedp.WaitVisible(`#topic-status.status-1`, chromedp.ByQuery))
}
