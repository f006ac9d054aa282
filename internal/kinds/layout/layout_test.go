package layout_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/layout"
)

// world is a published course authored by the tutor with one lesson, and
// a learner assigned to it.
type world struct {
	env     *apitest.Env
	course  float64
	lesson  float64
	learner *apitest.User
}

func newWorld(t *testing.T, env *apitest.Env) *world {
	t.Helper()
	tutor := env.As("tutor")
	course := env.Call(t, 201, "POST", "/api/admin/courses", tutor.Token, map[string]any{"title": "Layouts", "status": "published"}).Number("data.id")
	lesson := env.Call(t, 201, "POST", "/api/admin/lessons", tutor.Token, map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")
	learner := env.NewUser("student")
	env.Call(t, 200, "POST", "/api/admin/courses/"+num(course)+"/access", env.As("admin").Token,
		map[string]any{"users": []map[string]any{{"id": learner.ID}}})
	return &world{env: env, course: course, lesson: lesson, learner: learner}
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func node(component string, props map[string]any) map[string]any {
	return map[string]any{"component": component, "props": props}
}

func callout() map[string]any {
	return node("Callout", map[string]any{"tone": "info", "body": "Read this first."})
}

func practice() map[string]any {
	n := node("PracticeActivity", map[string]any{"title": "Check yourself", "questions": []any{
		map[string]any{"prompt": "2 + 2?", "options": []any{
			map[string]any{"text": "3", "correct": false}, map[string]any{"text": "4", "correct": true}},
			"hints": []any{"Count on your fingers twice."}, "solution": "Two and two make four, always."},
		map[string]any{"prompt": "Even numbers?", "score": 3, "options": []any{
			map[string]any{"text": "2", "correct": true}, map[string]any{"text": "3", "correct": false},
			map[string]any{"text": "4", "correct": true}}},
	}})
	n["id"] = "check"
	return n
}

func (w *world) body(doc []any, fallback any) map[string]any {
	b := map[string]any{"lesson": w.lesson, "title": "Layout", "topicable": layout.Class}
	if doc != nil {
		b["document"] = doc
	}
	if fallback != nil {
		b["fallback"] = fallback
	}
	return b
}

// TestValidationErrors: each problem answers 422 keyed by node and prop
// path, with a message naming the node by index and id.
func TestValidationErrors(t *testing.T) {
	many := make([]any, layout.MaxNodes+1)
	for i := range many {
		many[i] = callout()
	}
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		tutor := env.As("tutor")
		cases := []struct {
			name     string
			doc      []any
			fallback any
			key      string
			contains string
		}{
			{"document missing", nil, "Fallback", "document", "required"},
			{"document empty", []any{}, "Fallback", "document", "at least one node"},
			{"too many nodes", many, "Fallback", "document", "more than 200"},
			{"node not an object", []any{"Callout"}, "Fallback", "document[0]", "must be an object"},
			{"component missing", []any{map[string]any{"props": map[string]any{}}}, "Fallback", "document[0].component", "required"},
			{"unknown component", []any{node("Marquee", map[string]any{})}, "Fallback", "document[0].component", "not an approved component"},
			{"unexpected member", []any{map[string]any{"component": "Callout", "props": map[string]any{"tone": "info", "body": "x"}, "style": "red"}},
				"Fallback", "document[0].style", "unexpected member"},
			{"props missing", []any{map[string]any{"component": "Callout"}}, "Fallback", "document[0].props", "props are required"},
			{"bad id", []any{map[string]any{"component": "Callout", "id": "a b", "props": map[string]any{"tone": "info", "body": "x"}}},
				"Fallback", "document[0].id", "letters, digits"},
			{"duplicate id", []any{map[string]any{"component": "Callout", "id": "a", "props": map[string]any{"tone": "info", "body": "x"}},
				map[string]any{"component": "Callout", "id": "a", "props": map[string]any{"tone": "info", "body": "y"}}},
				"Fallback", "document[1].id", "already used by node 0"},
			{"required prop", []any{node("Callout", map[string]any{"tone": "info"})}, "Fallback", "document[0].props", "body"},
			{"unknown prop", []any{node("Callout", map[string]any{"tone": "info", "body": "x", "html": "<b>"})}, "Fallback", "document[0].props.html", "unexpected property"},
			{"enum", []any{node("Callout", map[string]any{"tone": "loud", "body": "x"})}, "Fallback", "document[0].props.tone", "Callout"},
			{"wrong type", []any{node("CodeBlock", map[string]any{"code": 42})}, "Fallback", "document[0].props.code", "string"},
			{"too long", []any{node("CodeBlock", map[string]any{"code": strings.Repeat("x", 20001)})}, "Fallback", "document[0].props.code", "20000"},
			{"nested path", []any{node("Steps", map[string]any{"steps": []any{map[string]any{"title": ""}}})}, "Fallback", "document[0].props.steps[0].title", "Steps"},
			{"no items", []any{node("FlipCards", map[string]any{"cards": []any{}})}, "Fallback", "document[0].props.cards", "FlipCards"},
			{"timeline", []any{node("Timeline", map[string]any{"events": []any{map[string]any{"date": "1492"}}})}, "Fallback", "document[0].props.events[0]", "title"},
			{"table cells", []any{node("ComparisonTable", map[string]any{"caption": "C", "columns": []any{"A", "B"},
				"rows": []any{map[string]any{"label": "r", "cells": []any{"1"}}}})}, "Fallback", "document[0].props.rows[0].cells", "1 cells for 2 columns"},
			{"table column", []any{node("ComparisonTable", map[string]any{"caption": "C", "columns": []any{"A", " "},
				"rows": []any{map[string]any{"label": "r", "cells": []any{"1", "2"}}}})}, "Fallback", "document[0].props.columns[1]", "column heading"},
			{"h5p id", []any{node("H5PFrame", map[string]any{"content_id": "abc", "title": "T"})}, "Fallback", "document[0].props.content_id", "H5PFrame"},
			{"h5p missing", []any{node("H5PFrame", map[string]any{"content_id": "999999", "title": "T"})}, "Fallback", "document[0].props.content_id", "no H5P content 999999"},
			{"liascript missing", []any{node("LiaScriptLesson", map[string]any{"course_id": 999999, "title": "Soil"})}, "Fallback", "document[0].props.course_id", "no LiaScript course 999999"},
			{"liascript id", []any{node("LiaScriptLesson", map[string]any{"course_id": 0, "title": "Soil"})}, "Fallback", "document[0].props.course_id", "LiaScriptLesson"},
			{"liascript title", []any{node("LiaScriptLesson", map[string]any{"course_id": 1})}, "Fallback", "document[0].props", "title"},
			{"one option", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"prompt": "P",
				"options": []any{map[string]any{"text": "a", "correct": true}}}}})}, "Fallback", "document[0].props.questions[0].options", "at least 2 options"},
			{"none correct", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"prompt": "P",
				"options": []any{map[string]any{"text": "a", "correct": false}, map[string]any{"text": "b", "correct": false}}}}})},
				"Fallback", "document[0].props.questions[0].options", "at least one option must be correct"},
			{"blank option", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"prompt": "P",
				"options": []any{map[string]any{"text": "a", "correct": true}, map[string]any{"text": " "}}}}})},
				"Fallback", "document[0].props.questions[0].options", "every option needs a text"},
			{"no prompt", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{
				"options": []any{map[string]any{"text": "a", "correct": true}, map[string]any{"text": "b"}}}}})},
				"Fallback", "document[0].props.questions[0].prompt", "prompt"},
			{"gift does not parse", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"gift": "2+2? {=4 ~3"}}})},
				"Fallback", "document[0].props.questions[0].gift", "Node 0 PracticeActivity, question 0: line 1: "},
			{"two gift questions", []any{node("PracticeActivity", map[string]any{"questions": []any{
				map[string]any{"prompt": "P", "options": []any{map[string]any{"text": "a", "correct": true}, map[string]any{"text": "b"}}},
				map[string]any{"gift": "A? {T}\n\nB? {F}"}}})},
				"Fallback", "document[0].props.questions[1].gift", "question 1: expected one question, found 2"},
			{"gift essay", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"gift": "Tell a story. {}"}}})},
				"Fallback", "document[0].props.questions[0].gift", "essay questions cannot be checked"},
			{"gift description", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"gift": "Just read this."}}})},
				"Fallback", "document[0].props.questions[0].gift", "description questions cannot be checked"},
			{"fallback with gift feedback", []any{node("PracticeActivity", map[string]any{"questions": []any{
				map[string]any{"gift": "2+2? {=4 #Four is twice two. ~3 #Three is one short.####Adding is counting on.}"}}})},
				"Answers: four is TWICE two; three is one short.", "fallback", "feedback of practice questions"},
			{"gift and prompt", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"gift": "Q {=a}", "prompt": "P"}}})},
				"Fallback", "document[0].props.questions[0]", "not both"},
			{"empty hint", []any{node("PracticeActivity", map[string]any{"questions": []any{map[string]any{"prompt": "P", "hints": []any{" "},
				"options": []any{map[string]any{"text": "a", "correct": true}, map[string]any{"text": "b"}}}}})},
				"Fallback", "document[0].props.questions[0].hints[0]", "hint"},
			{"fallback missing", []any{callout()}, nil, "fallback", "required"},
			{"fallback empty", []any{callout()}, "  ", "fallback", "must not be empty"},
			{"fallback too big", []any{callout()}, strings.Repeat("x", layout.MaxFallback+1), "fallback", "greater than"},
			{"fallback with a hint", []any{practice()}, "Practise: count on your  FINGERS twice.", "fallback", "leave out hints"},
			{"fallback with a solution", []any{practice()}, "Two and two make four, always.", "fallback", "worked solutions"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: tutor.Token, Body: w.body(c.doc, c.fallback)})
				if res.Status != 422 {
					t.Fatalf("status %d, want 422: %s", res.Status, res.Body)
				}
				msgs := problems(res)[c.key]
				found := false
				for _, m := range msgs {
					if s, _ := m.(string); strings.Contains(s, c.contains) {
						found = true
					}
				}
				if !found {
					t.Errorf("errors.%s has no message with %q: %s", c.key, c.contains, res.Body)
				}
			})
		}
	})
}

// TestEveryProblemAtOnce: one answer lists the problems of every node,
// named by index and id, and of the fallback.
func TestEveryProblemAtOnce(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		bad := node("Steps", map[string]any{"steps": []any{}})
		bad["id"] = "intro"
		doc := []any{callout(), bad, node("Callout", map[string]any{"tone": "shout"}), node("Carousel", nil)}
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: env.As("tutor").Token, Body: w.body(doc, "")})
		if res.Status != 422 {
			t.Fatalf("status %d: %s", res.Status, res.Body)
		}
		errs := problems(res)
		for _, key := range []string{"document[1].props.steps", "document[2].props.tone", "document[2].props", "document[3].component", "fallback"} {
			if _, ok := errs[key]; !ok {
				t.Errorf("no error for %s: %s", key, res.Body)
			}
		}
		if s := fmt.Sprint(errs["document[1].props.steps"]); !strings.Contains(s, `Node 1 (id "intro") Steps:`) {
			t.Errorf("message does not name the node: %s", s)
		}
		if _, ok := errs["document[0]"]; ok {
			t.Errorf("the valid node has an error: %s", res.Body)
		}
	})
}

// TestAuthoringPermissions: the course's authors and admins create and
// update layout topics; other tutors, learners and anonymous callers do
// not. An update checks what it changes and keeps the rest.
func TestAuthoringPermissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		doc := []any{callout()}
		other := env.NewUser("tutor")
		for _, c := range []struct {
			who    string
			token  string
			status int
		}{{"anonymous", "", 401}, {"learner", w.learner.Token, 403}, {"student", env.As("student").Token, 403},
			{"other tutor", other.Token, 403}, {"author", env.As("tutor").Token, 201}, {"admin", env.As("admin").Token, 201}} {
			res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: c.token, Body: w.body(doc, "Read the note.")})
			if res.Status != c.status {
				t.Errorf("create as %s: %d, want %d: %s", c.who, res.Status, c.status, res.Body)
			}
		}
		res := env.Call(t, 201, "POST", "/api/admin/topics", env.As("tutor").Token, w.body(doc, "Read the note."))
		if res.String("data.kind") != "layout" || res.String("data.topicable.document.0.component") != "Callout" ||
			res.String("data.topicable.fallback_html") != "<p>Read the note.</p>\n" {
			t.Fatalf("created: %s", res.Body)
		}
		path := "/api/admin/topics/" + num(res.Number("data.id"))
		update := map[string]any{"document": []any{practice()}}
		for _, c := range []struct {
			who    string
			token  string
			status int
		}{{"anonymous", "", 401}, {"learner", w.learner.Token, 403}, {"other tutor", other.Token, 403},
			{"author", env.As("tutor").Token, 200}, {"admin", env.As("admin").Token, 200}} {
			res := env.Do(apitest.Request{Method: "PATCH", Path: path, Token: c.token, Body: update})
			if res.Status != c.status {
				t.Errorf("update as %s: %d, want %d: %s", c.who, res.Status, c.status, res.Body)
			}
		}
		got := env.Call(t, 200, "GET", path, env.As("tutor").Token, nil)
		if got.String("data.topicable.document.0.component") != "PracticeActivity" || got.String("data.topicable.fallback") != "Read the note." ||
			got.Get("data.topicable.document.0.props.questions.0.options.1.correct") != true {
			t.Errorf("after update, authors see: %s", got.Body)
		}
		// The kept fallback is checked against the new hints.
		res = env.Do(apitest.Request{Method: "PATCH", Path: path, Token: env.As("tutor").Token, Body: map[string]any{"fallback": "Hint: count on your fingers twice."}})
		if res.Status != 422 || problems(res)["fallback"] == nil {
			t.Errorf("leaking fallback on update: %d %s", res.Status, res.Body)
		}
		res = env.Do(apitest.Request{Method: "PATCH", Path: path, Token: env.As("tutor").Token, Body: map[string]any{"document": []any{node("Callout", nil)}}})
		if res.Status != 422 || problems(res)["document[0].props"] == nil {
			t.Errorf("invalid document on update: %d %s", res.Status, res.Body)
		}
	})
}

// TestH5PFrameTenant: an H5PFrame names content of this tenant; content
// of another tenant is unknown here.
func TestH5PFrameTenant(t *testing.T) {
	pkg := fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		upload := func(host, token string) string {
			body, ct := h5pForm(t, pkg)
			res := env.Do(apitest.Request{Method: "POST", Path: "/h5p/contents/upload", Host: host, Token: token, Body: body, Type: ct})
			if res.Status != 201 {
				t.Fatalf("upload on %s: %d %s", host, res.Status, res.Body)
			}
			return res.String("data.contentId")
		}
		env.AddTenant("other.test")
		otherToken, _ := env.Login("other.test", "admin@other.test", "admin-password")
		foreign := upload("other.test", otherToken)
		mine := upload("", env.As("admin").Token)
		if foreign == mine {
			// Both tenants number their content from 1; upload again so
			// the foreign id is one this tenant does not have.
			foreign = upload("other.test", otherToken)
		}
		frame := func(id string) []any {
			return []any{node("H5PFrame", map[string]any{"content_id": id, "title": "True or false"})}
		}
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: env.As("tutor").Token, Body: w.body(frame(foreign), "Play it.")})
		if res.Status != 422 || !strings.Contains(fmt.Sprint(problems(res)["document[0].props.content_id"]), "no H5P content "+foreign) {
			t.Errorf("another tenant's content: %d %s", res.Status, res.Body)
		}
		env.Call(t, 201, "POST", "/api/admin/topics", env.As("tutor").Token, w.body(frame(mine), "Play it."))
	})
}

// TestLiaScriptLesson: a LiaScriptLesson names a LiaScript course of
// this tenant; learners get the link of its player, which plays the
// course and records nothing.
func TestLiaScriptLesson(t *testing.T) {
	const md = "# Soil\n\nIntro\n\n## Layers\n\n[[humus]]\n"
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newWorld(t, env)
		tutor := env.As("tutor")
		course := env.Call(t, 201, "POST", "/api/admin/liascript", tutor.Token, map[string]any{"markdown": md}).Number("data.id")
		env.AddTenant("other.test")
		otherToken, _ := env.Login("other.test", "admin@other.test", "admin-password")
		// Both tenants number their courses from 1: the other tenant's
		// second course is one this tenant does not have.
		var foreign float64
		for range 2 {
			res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/liascript", Host: "other.test", Token: otherToken, Body: map[string]any{"markdown": md}})
			foreign = res.Number("data.id")
		}
		lesson := func(id float64) []any {
			return []any{callout(), node("LiaScriptLesson", map[string]any{"course_id": id, "title": "Soil layers"})}
		}
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: tutor.Token, Body: w.body(lesson(foreign), "Read about soil.")})
		if res.Status != 422 || !strings.Contains(fmt.Sprint(problems(res)["document[1].props.course_id"]), "no LiaScript course "+num(foreign)) {
			t.Errorf("another tenant's course: %d %s", res.Status, res.Body)
		}
		topic := env.Call(t, 201, "POST", "/api/admin/topics", tutor.Token, w.body(lesson(course), "Read about soil.")).Number("data.id")

		program := env.Call(t, 200, "GET", "/api/courses/"+num(w.course)+"/program", w.learner.Token, nil)
		props := "data.lessons.0.topics.0.topicable.document.1.props."
		play := program.String(props + "play_url")
		if program.Number("data.lessons.0.topics.0.id") != topic || program.Number(props+"course_id") != course ||
			program.String(props+"title") != "Soil layers" || !strings.HasPrefix(play, "/api/liascript/play/") {
			t.Fatalf("learner's view: %s", program.Body)
		}
		page := env.Do(apitest.Request{Method: "GET", Path: play})
		if csp := page.Header.Get("Content-Security-Policy"); page.Status != 200 || !strings.HasPrefix(csp, "sandbox allow-scripts ") ||
			strings.Contains(csp, "allow-same-origin") || strings.Contains(csp, "report-uri") {
			t.Errorf("player: %d %v", page.Status, page.Header)
		}
		if r := env.Do(apitest.Request{Method: "GET", Path: play + "course.md"}); r.Status != 200 || string(r.Body) != md {
			t.Errorf("course.md: %d %q", r.Status, r.Body)
		}
		// Authors see the document as they wrote it.
		authored := env.Call(t, 200, "GET", "/api/admin/topics/"+num(topic), tutor.Token, nil)
		if authored.Number("data.topicable.document.1.props.course_id") != course || authored.Get("data.topicable.document.1.props.play_url") != nil {
			t.Errorf("authors' view: %s", authored.Body)
		}
	})
}

// problems are the 422 answer's messages by key; the keys hold dots, so
// they are not paths for Response.Get.
func problems(res *apitest.Response) map[string][]any {
	out := map[string][]any{}
	errs, _ := res.Get("errors").(map[string]any)
	for k, v := range errs {
		out[k], _ = v.([]any)
	}
	return out
}

func h5pForm(t *testing.T, pkg []byte) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	part, err := mw.CreateFormFile("h5p_file", "content.h5p")
	if err != nil {
		t.Fatal(err)
	}
	part.Write(pkg)
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}
