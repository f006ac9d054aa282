package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/media"
)

// scriptEnv is the harness of the course script on one backend: a server
// whose outbound fetches may reach this machine (the test's oEmbed
// provider listens on it) and whose job queue runs (videos are
// transcoded while lmsctl awaits them).
func scriptEnv(t *testing.T, backend string) *apitest.Env {
	env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); env.Server.Queue.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return env
}

// needFFmpeg: the script awaits a real transcoding. CI installs ffmpeg;
// elsewhere a machine without it skips the script.
func needFFmpeg(t *testing.T) {
	if err := media.FindFFmpeg().Missing(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// oEmbedSite serves a page whose head names its oEmbed description, as a
// provider's pages do, and that description.
func oEmbedSite(t *testing.T) string {
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/talk":
			fmt.Fprintf(w, `<!doctype html><html><head><title>Talk</title>`+
				`<link rel="alternate" type="application/json+oembed" href="%s/oembed?format=json"></head><body></body></html>`, site.URL)
		case "/oembed":
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"type": "video", "version": "1.0", "title": "A talk",
				"provider_name": "Talks", "width": 640, "height": 360,
				"html": `<iframe src="` + site.URL + `/embed/talk" width="640" height="360"></iframe>`})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	return site.URL + "/talk"
}

// typed is a topic the script made: its title and the kind the server
// must have given it.
type typed struct{ title, kind string }

// createEveryType creates, in the lesson, one topic of every type
// `lmsctl create-topic` knows (one of each kind the server registers),
// each checked in lmsctl's output, and returns them.
func createEveryType(t *testing.T, c *cli, lesson string) []typed {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, content []byte) string { return writeFile(t, dir, name, content) }
	clip := filepath.Join(dir, "clip.mp4")
	if out, err := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-y", "-f", "lavfi", "-i", "testsrc2=size=160x90:rate=25:duration=1",
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", clip).CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, out)
	}
	app := write("pendulum.zip", interactivetest.Zip(t, map[string]string{
		"lms-interactive.json": interactivetest.Manifest, "index.html": interactivetest.Page}))

	// The videos of the platform are on and transcoded at one bitrate;
	// the LTI tool is registered: both through lmsctl.
	c.ok("", "post-admin-config", "--body", "@"+write("video.json",
		[]byte(`{"config":[{"key":"lms_video.enable","value":true},{"key":"lms_video.bitrates","value":[300]}]}`)))
	tool := c.ok("", "post-admin-lti-tools", "--body", "@"+write("tool.json", []byte(`{"name":"Lab tool",`+
		`"login_url":"https://tool.example/login","target_link_uri":"https://tool.example/launch",`+
		`"redirect_uris":["https://tool.example/launch"],"jwks_url":"https://tool.example/jwks"}`)))
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
		{"pdf", "Notes", []string{"--file", write("notes.pdf", []byte("%PDF-1.4\n%%EOF\n"))},
			func(v any) bool { return get(v, "url") != nil }},
		{"image", "Map", []string{"--file", write("map.png", apitest.PNG(t))},
			func(v any) bool { return get(v, "url") != nil }},
		{"audio", "Talk", []string{"--file", write("talk.mp3", append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), make([]byte, 64)...))},
			func(v any) bool { return get(v, "url") != nil }},
		// Awaited: lmsctl prints the topic once it is transcoded.
		{"video", "Clip", []string{"--file", clip, "--await"},
			func(v any) bool { return get(v, "processing") == "ready" && get(v, "hls_url") != nil }},
		{"oembed", "Embedded talk", []string{"--url", oEmbedSite(t)},
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
		{"interactive", "Pendulum", []string{"--file", app, "--end-step", "done", "--text", "Swing it."}, nil},
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

// writeFile writes a file of the test into dir and returns its path.
func writeFile(t *testing.T, dir, name string, content []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, content, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
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
