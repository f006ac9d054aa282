package layout_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/layout"
)

// world is a published course authored by the tutor with one lesson, and
// a learner assigned to it.
type world struct {
	env     *apitest.Env
	course  int64
	lesson  int64
	learner *apitest.User
}

func newWorld(t *testing.T, env *apitest.Env) *world {
	t.Helper()
	ctx, tutor := t.Context(), env.ClientAs("tutor")
	course := apitest.Must(tutor.PostAdminCourses(ctx, client.CourseBody{Title: "Layouts", Status: client.Ptr("published")}))(t).ID
	lesson := apitest.Must(tutor.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Lesson"}))(t).ID
	learner := env.NewUser("student")
	apitest.Must(env.ClientAs("admin").PostAdminCoursesIDAccess(ctx, course,
		client.AssignInputBody{Users: []client.GrantBody{{ID: learner.ID}}}))(t)
	return &world{env: env, course: course, lesson: lesson, learner: learner}
}

func num(n int64) string { return strconv.FormatInt(n, 10) }

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

// topic is the typed create body of a layout topic of the lesson; the
// nodes of doc must be well-formed (w.body sends any JSON).
func (w *world) topic(t *testing.T, doc []any, fallback string) client.PostAdminTopicsBody {
	return client.PostAdminTopicsBody{Lesson: w.lesson, Title: "Layout", Topicable: layout.Class, Fallback: &fallback,
		Document: convert[[]client.PostAdminTopicsBodyDocumentItem](t, doc)}
}

// convert passes v through JSON into T: the nodes, written as maps, into
// the client's document items.
func convert[T any](t *testing.T, v any) T {
	t.Helper()
	var out T
	raw, err := json.Marshal(v)
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// refusal checks a call's outcome: no error when status is 2xx, else a
// refusal with status.
func refusal(t *testing.T, what string, err error, status int) {
	t.Helper()
	if status/100 == 2 {
		if err != nil {
			t.Errorf("%s: %v, want %d", what, err, status)
		}
	} else if got := client.StatusOf(err); got != status {
		t.Errorf("%s: %v, want %d", what, err, status)
	}
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
		// The documents go as JSON, some of them malformed (a node that is
		// no object, members the schema does not know), so raw.
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
		_, err := env.ClientAs("tutor").PostAdminTopics(t.Context(), w.topic(t, doc, ""))
		e := apitest.Refused(t, err, 422)
		errs := e.Errors
		for _, key := range []string{"document[1].props.steps", "document[2].props.tone", "document[2].props", "document[3].component", "fallback"} {
			if _, ok := errs[key]; !ok {
				t.Errorf("no error for %s: %v", key, e)
			}
		}
		if s := fmt.Sprint(errs["document[1].props.steps"]); !strings.Contains(s, `Node 1 (id "intro") Steps:`) {
			t.Errorf("message does not name the node: %s", s)
		}
		if _, ok := errs["document[0]"]; ok {
			t.Errorf("the valid node has an error: %v", e)
		}
	})
}

// TestAuthoringPermissions: the course's authors and admins create and
// update layout topics; other tutors, learners and anonymous callers do
// not. An update checks what it changes and keeps the rest.
func TestAuthoringPermissions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		doc := []any{callout()}
		other := env.NewUser("tutor")
		tutor := env.ClientAs("tutor")
		for _, c := range []struct {
			who    string
			as     *client.Client
			status int
		}{{"anonymous", env.ClientAs("anonymous"), 401}, {"learner", env.UserClient(w.learner), 403}, {"student", env.ClientAs("student"), 403},
			{"other tutor", env.UserClient(other), 403}, {"author", tutor, 201}, {"admin", env.ClientAs("admin"), 201}} {
			_, err := c.as.PostAdminTopics(ctx, w.topic(t, doc, "Read the note."))
			refusal(t, "create as "+c.who, err, c.status)
		}
		res := apitest.Must(tutor.PostAdminTopics(ctx, w.topic(t, doc, "Read the note.")))(t)
		if res.Kind != "layout" || apitest.LookupString(res.Topicable, "document.0.component") != "Callout" ||
			apitest.LookupString(res.Topicable, "fallback_html") != "<p>Read the note.</p>\n" {
			t.Fatalf("created: %+v", res)
		}
		topic := res.ID
		update := client.PatchAdminTopicsIDBody{Document: convert[[]client.PatchAdminTopicsIDBodyDocumentItem](t, []any{practice()})}
		for _, c := range []struct {
			who    string
			as     *client.Client
			status int
		}{{"anonymous", env.ClientAs("anonymous"), 401}, {"learner", env.UserClient(w.learner), 403}, {"other tutor", env.UserClient(other), 403},
			{"author", tutor, 200}, {"admin", env.ClientAs("admin"), 200}} {
			_, err := c.as.PatchAdminTopicsID(ctx, topic, update)
			refusal(t, "update as "+c.who, err, c.status)
		}
		got := apitest.Must(tutor.GetAdminTopicsID(ctx, topic))(t).Topicable
		if apitest.LookupString(got, "document.0.component") != "PracticeActivity" || apitest.LookupString(got, "fallback") != "Read the note." ||
			apitest.Lookup(got, "document.0.props.questions.0.options.1.correct") != true {
			t.Errorf("after update, authors see: %v", got)
		}
		// The kept fallback is checked against the new hints.
		_, err := tutor.PatchAdminTopicsID(ctx, topic, client.PatchAdminTopicsIDBody{Fallback: client.Ptr("Hint: count on your fingers twice.")})
		if e := apitest.Refused(t, err, 422); e.Errors["fallback"] == nil {
			t.Errorf("leaking fallback on update: %v", e)
		}
		_, err = tutor.PatchAdminTopicsID(ctx, topic, client.PatchAdminTopicsIDBody{
			Document: convert[[]client.PatchAdminTopicsIDBodyDocumentItem](t, []any{node("Callout", nil)})})
		if e := apitest.Refused(t, err, 422); e.Errors["document[0].props"] == nil {
			t.Errorf("invalid document on update: %v", e)
		}
	})
}

// TestH5PFrameTenant: an H5PFrame names content of this tenant; content
// of another tenant is unknown here.
func TestH5PFrameTenant(t *testing.T) {
	pkg := fixtures.Read(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		upload := func(host, token string) string {
			return apitest.Must(env.Client(host, token).PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
				H5PFile: &client.File{Name: "content.h5p", Content: bytes.NewReader(pkg)}}))(t).ContentID
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
		tutor := env.ClientAs("tutor")
		_, err := tutor.PostAdminTopics(ctx, w.topic(t, frame(foreign), "Play it."))
		if e := apitest.Refused(t, err, 422); !strings.Contains(fmt.Sprint(e.Errors["document[0].props.content_id"]), "no H5P content "+foreign) {
			t.Errorf("another tenant's content: %v", e)
		}
		apitest.Must(tutor.PostAdminTopics(ctx, w.topic(t, frame(mine), "Play it.")))(t)
	})
}

// TestLiaScriptLesson: a LiaScriptLesson names a LiaScript course of
// this tenant; learners get the link of its player, which plays the
// course and records nothing.
func TestLiaScriptLesson(t *testing.T) {
	const md = "# Soil\n\nIntro\n\n## Layers\n\n[[humus]]\n"
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, w := t.Context(), newWorld(t, env)
		tutor := env.ClientAs("tutor")
		course := apitest.Must(tutor.PostAdminLiascript(ctx, client.PostAdminLiascriptBody{Markdown: md}))(t).ID
		env.AddTenant("other.test")
		otherToken, _ := env.Login("other.test", "admin@other.test", "admin-password")
		// Both tenants number their courses from 1: the other tenant's
		// second course is one this tenant does not have.
		var foreign int64
		for range 2 {
			foreign = apitest.Must(env.Client("other.test", otherToken).PostAdminLiascript(ctx,
				client.PostAdminLiascriptBody{Markdown: md}))(t).ID
		}
		lesson := func(id int64) []any {
			return []any{callout(), node("LiaScriptLesson", map[string]any{"course_id": id, "title": "Soil layers"})}
		}
		_, err := tutor.PostAdminTopics(ctx, w.topic(t, lesson(foreign), "Read about soil."))
		if e := apitest.Refused(t, err, 422); !strings.Contains(fmt.Sprint(e.Errors["document[1].props.course_id"]), "no LiaScript course "+num(foreign)) {
			t.Errorf("another tenant's course: %v", e)
		}
		topic := apitest.Must(tutor.PostAdminTopics(ctx, w.topic(t, lesson(course), "Read about soil.")))(t).ID

		program := apitest.Must(env.UserClient(w.learner).GetCoursesIDProgram(ctx, w.course))(t)
		if len(program.Lessons) == 0 || len(program.Lessons[0].Topics) == 0 {
			t.Fatalf("learner's view: %+v", program)
		}
		first := program.Lessons[0].Topics[0]
		props := func(key string) any { return apitest.Lookup(first.Topicable, "document.1.props."+key) }
		play, _ := props("play_url").(string)
		if first.ID != topic || props("course_id") != float64(course) || props("title") != "Soil layers" ||
			!strings.HasPrefix(play, "/api/liascript/play/") {
			t.Fatalf("learner's view: %+v", first)
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
		authored := apitest.Must(tutor.GetAdminTopicsID(ctx, topic))(t).Topicable
		if apitest.Lookup(authored, "document.1.props.course_id") != float64(course) || apitest.Lookup(authored, "document.1.props.play_url") != nil {
			t.Errorf("authors' view: %v", authored)
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
