package web

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/layout"
)

// TestLayoutFallback: a document the page cannot render, wholly or in
// part, is shown as its fallback; a renderable one is not.
func TestLayoutFallback(t *testing.T) {
	fallback := `"fallback":"# Planets","fallback_html":"<h1>Planets</h1>"`
	for name, c := range map[string]struct {
		doc      string
		fallback bool
	}{
		"renderable":          {`[{"component":"Callout","props":{"tone":"info","body":"Hi"}}]`, false},
		"unknown component":   {`[{"component":"Callout","props":{"tone":"info","body":"Hi"}},{"component":"Carousel","props":{}}]`, true},
		"LiaScript":           {`[{"component":"LiaScriptLesson","props":{"course_id":3,"title":"T","play_url":"/api/liascript/play/3-9-ab/"}}]`, false},
		"LiaScript no link":   {`[{"component":"LiaScriptLesson","props":{"course_id":3,"title":"T"}}]`, true},
		"LiaScript elsewhere": {`[{"component":"LiaScriptLesson","props":{"course_id":3,"title":"T","play_url":"https://evil.example/"}}]`, true},
		"props not object":    {`[{"component":"Callout","props":"Hi"}]`, true},
		"bad H5P id":          {`[{"component":"H5PFrame","props":{"content_id":"../x","title":"T"}}]`, true},
		"empty":               {`[]`, true},
		"not a list":          {`{"a":1}`, true},
	} {
		d := &topicData{Topic: &topic{ID: 4, Kind: "layout", Topicable: json.RawMessage(`{"document":` + c.doc + `,` + fallback + `}`)}}
		(&Handler{}).fillContent(d)
		if shown := d.Layout == nil && strings.Contains(string(d.HTML), "<h1>Planets</h1>"); shown != c.fallback {
			t.Errorf("%s: fallback shown %v, want %v", name, shown, c.fallback)
		}
		if d.Mode != "open" || !d.Manual {
			t.Errorf("%s: a layout without practice completes when viewed: mode %q manual %v", name, d.Mode, d.Manual)
		}
	}
}

// TestGIFTPracticePage: the topic page renders GIFT practice questions
// with labelled controls of their type and nothing of their answers, and
// the check the page posts goes through /bff.
func TestGIFTPracticePage(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "GIFT practice")
		questions := []any{
			map[string]any{"gift": "Capital of France? {=Paris #Right, the Seine city. ~Lyon ####Paris since Clovis.}"},
			map[string]any{"gift": "Primes? {~%50%Two ~%50%Three ~%-100%Four}"},
			map[string]any{"gift": "The sun is a star. {T#Look again at the sky.#Yes, a yellow dwarf.}"},
			map[string]any{"gift": "Largest planet? {=Jupiter =%50%Saturn}"},
			map[string]any{"gift": "Pi to two decimals? {#3.14:0.005}"},
			map[string]any{"gift": "Match the sounds. {=cat -> meow =dog -> woof}"},
		}
		topic := apitest.Must(s.env.Client("", admin).PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: c.lesson,
			Title: "Facts", Topicable: layout.Class, Fallback: client.Ptr("Practise some facts."),
			Document: []client.PostAdminTopicsBodyDocumentItem{{Component: "PracticeActivity",
				Props: map[string]any{"questions": questions}}}}))(t).ID
		u := s.env.NewUser("student")
		path := "/learn/" + id(c.course) + "/" + id(int64(topic))
		page := s.must(req{path: path, token: u.Token}, http.StatusOK).text()
		for _, want := range []string{
			`data-kind="multichoice"`, `type="radio" id="node-0-0-1" name="node-0-0" value="1"> <span>Lyon</span>`,
			`<legend>Primes? <span class="muted">(choose all that apply)</span></legend>`, `type="checkbox" id="node-0-1-2"`,
			`data-kind="truefalse"`, `value="true"> <span>True</span>`,
			`data-kind="shortanswer"`, `<label for="node-0-3-0">Your answer</label>`,
			`data-kind="numerical"`, `inputmode="decimal"`,
			`data-kind="matching"`, `<label for="node-0-5-0">cat</label>`, `<option>meow</option><option>woof</option>`,
		} {
			if !strings.Contains(page, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		for _, secret := range []string{"Seine", "Clovis", "yellow dwarf", "Look again", "%50%", "3.14", "Jupiter", "Saturn"} {
			if strings.Contains(page, secret) {
				t.Errorf("the page holds %q", secret)
			}
		}
		check := s.must(req{method: "POST", path: "/bff/api/topics/" + id(int64(topic)) + "/practice/check", token: u.Token,
			json: map[string]any{"node": 0, "question": 5, "answer": map[string]any{"matches": []string{"meow", "woof"}}}}, http.StatusOK)
		if check.get("data.correct") != true || check.get("data.right_answer.matches.1") != "woof" {
			t.Errorf("check through /bff: %s", check.body)
		}
	})
}

// TestLayoutLiaScriptPage checks that a layout's LiaScriptLesson frames
// its course's player in the sandbox of a LiaScript topic's player, and
// that the player passes through the frontend.
func TestLayoutLiaScriptPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "Layout course")
		md := "# Soil\n\nIntro\n\n## Layers\n\n[[humus]]\n"
		ctx, adminClient := t.Context(), s.env.Client("", admin)
		course := apitest.Must(adminClient.PostAdminLiascript(ctx, client.PostAdminLiascriptBody{Markdown: md}))(t).ID
		doc := []client.PostAdminTopicsBodyDocumentItem{
			{Component: "Callout", Props: map[string]any{"tone": "info", "body": "Read the course below."}},
			{Component: "LiaScriptLesson", ID: client.Ptr("soil"), Props: map[string]any{"course_id": course, "title": "Soil layers"}},
		}
		topic := apitest.Must(adminClient.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: c.lesson, Title: "Soil",
			Topicable: layout.Class, Document: doc, Fallback: client.Ptr("Read about soil.")}))(t).ID

		r := s.must(req{path: "/learn/" + id(c.course) + "/" + id(int64(topic)), token: admin}, http.StatusOK)
		frame := regexp.MustCompile(`<div class="lia-box" id="soil"><iframe class="lia-frame layout-lia" sandbox="([^"]*)" src="([^"]+)" title="Workbook: Soil layers"`).
			FindStringSubmatch(r.text())
		if frame == nil || frame[1] != "allow-scripts allow-popups allow-forms allow-modals allow-downloads" ||
			strings.Contains(r.text(), `id="layout-fallback"`) || strings.Contains(r.text(), `id="lia-frame"`) {
			t.Fatalf("layout page: %s", r.body)
		}
		play := s.contentPath(html.UnescapeString(frame[2]))
		page := s.must(req{path: play, content: true}, http.StatusOK)
		if csp := page.header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "sandbox allow-scripts") || strings.Contains(csp, "report-uri") {
			t.Errorf("player through the frontend: %v", page.header)
		}
		if course := s.must(req{path: play + "course.md", content: true}, http.StatusOK); course.text() != md {
			t.Errorf("course.md through the frontend: %q", course.body)
		}
	})
}
