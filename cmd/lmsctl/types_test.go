package main_test

import (
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/lmsctl/lmsctltest"
)

// typed is a topic the script made: its title and the kind the server
// must have given it.
type typed struct{ title, kind string }

// createEveryType creates, in the lesson, one topic of every type
// `lmsctl create-topic` knows (one of each kind the server registers),
// each checked in lmsctl's output, and returns them.
func createEveryType(t *testing.T, c *cli, lesson string) []typed {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, content []byte) string { return lmsctltest.WriteFile(t, dir, name, content) }
	files := lmsctltest.Files(t, dir)

	// The videos of the platform are on and transcoded at one bitrate;
	// the LTI tool is registered: both through lmsctl.
	c.ok("", "post-admin-config", "--body", "@"+write("video.json", []byte(lmsctltest.VideoConfig)))
	tool := c.ok("", "post-admin-lti-tools", "--body", "@"+write("tool.json", []byte(lmsctltest.LTITool)))
	toolID := id(tool, "id")
	if toolID == "" || get(tool, "name") != "Lab tool" || get(tool, "client_id") == nil {
		t.Fatalf("LTI tool: %v", tool)
	}

	steps := []struct {
		kind, title string
		args        []string
		// check looks at the topic's content beyond its kind and title.
		check func(topicable any) bool
	}{
		{"richtext", "Welcome", []string{"--markdown", "@" + write("welcome.md", []byte("# Welcome\n\nRead **this** first.\n"))},
			// The client converted the Markdown; the server stored that HTML.
			func(v any) bool {
				html, _ := get(v, "html").(string)
				return strings.Contains(html, "<h1") && strings.Contains(html, "<strong>this</strong>")
			}},
		{"pdf", "Notes", []string{"--file", files["notes.pdf"]},
			func(v any) bool { return get(v, "url") != nil }},
		{"image", "Map", []string{"--file", files["map.png"]},
			func(v any) bool { return get(v, "url") != nil }},
		{"audio", "Talk", []string{"--file", files["talk.mp3"]},
			func(v any) bool { return get(v, "url") != nil }},
		// Awaited: lmsctl prints the topic once it is transcoded.
		{"video", "Clip", []string{"--file", files["clip.mp4"], "--await"},
			func(v any) bool { return get(v, "processing") == "ready" && get(v, "hls_url") != nil }},
		{"oembed", "Embedded talk", []string{"--url", lmsctltest.OEmbedPage(t)},
			func(v any) bool { return get(v, "title") == "A talk" && get(v, "provider_name") == "Talks" }},
		{"project", "Essay", []string{"--instructions", "Write **500** words.", "--accept", "pdf,txt", "--max-size", "1024"}, nil},
		{"layout", "Structured", []string{"--document", `[{"component":"Callout","props":{"tone":"info","title":"Note","body":"Read on."}}]`,
			"--fallback", "Read on."}, nil},
		{"quiz", "Check", []string{"--max-attempts", "2", "--review", "after_answer",
			"--questions", `[{"prompt":"2 + 2?","options":[{"text":"3","correct":false},{"text":"4","correct":true}]}]`},
			func(v any) bool { return get(v, "review") == "after_answer" }},
		{"h5p", "True or false", []string{"--package", fixtures.Path(t, "h5p/hub/H5P.TrueFalse.h5p")},
			func(v any) bool { s, _ := get(v, "content_id").(string); return s != "" }},
		// The golf course of one SCO and the CATAPULT package of one AU
		// need no choice.
		{"scorm", "Golf", []string{"--package", fixtures.Path(t, "scorm/RuntimeBasicCalls_SCORM12.zip")}, nil},
		{"cmi5", "Quartz", []string{"--package", fixtures.Path(t, "cmi5/single_au_basic_responsive.zip")}, nil},
		{"interactive", "Pendulum", []string{"--file", files["pendulum.zip"], "--end-step", "done", "--text", "Swing it."}, nil},
		{"liascript", "Workshop", []string{"--file", fixtures.Path(t, "liascript/workshop.md"), "--completion", "sections"}, nil},
		{"lti", "Lab", []string{"--tool", toolID, "--custom", `{"unit":"3"}`}, nil},
	}
	var made []typed
	for _, s := range steps {
		args := append([]string{"create-topic", s.kind, "--lesson", lesson, "--title", s.title}, s.args...)
		topic := c.ok("", args...)
		if get(topic, "kind") != s.kind || get(topic, "title") != s.title || id(topic, "id") == "" ||
			(s.check != nil && !s.check(get(topic, "topicable"))) {
			t.Fatalf("lmsctl %v: %v", args, topic)
		}
		made = append(made, typed{s.title, s.kind})
	}
	// One of each kind the server registers was made, and lmsctl offers
	// a type for each of them.
	kinds := map[string]bool{}
	for _, k := range c.ok("", "get-admin-topics-types").([]any) {
		kinds[get(k, "kind").(string)] = true
	}
	registered := len(kinds)
	for _, m := range made {
		delete(kinds, m.kind)
	}
	if len(kinds) > 0 || registered != len(made) {
		t.Fatalf("%d kinds registered, %d topics made; none of: %v", registered, len(made), kinds)
	}
	r := c.run("", "create-topic", "--help")
	if r.code != 0 || strings.Count(string(r.stdout), "\n  ") != len(made) {
		t.Fatalf("create-topic --help: exit %d, not %d types:\n%s", r.code, len(made), r.stdout)
	}
	return made
}

// programLesson is the lesson of a course program (admin's or learner's)
// with the title, or nil.
func programLesson(program any, title string) any {
	lessons, _ := get(program, "lessons").([]any)
	for _, l := range lessons {
		if get(l, "title") == title {
			return l
		}
	}
	return nil
}
