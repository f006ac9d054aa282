package lmsctl_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/lmsctl/lmsctltest"
)

const topicContent = `Lms\TopicTypes\Models\TopicContent\`

// authorEveryType creates in the lesson, through the MCP tools as an agent
// would, one topic of every kind the server registers: the course of the
// command-line script. Local files are read from dir, which the server
// was allowed to upload from, and from the fixtures' folders. It returns
// the topics' titles in the order made.
func authorEveryType(t *testing.T, cs *mcp.ClientSession, lesson float64, dir string) []string {
	t.Helper()
	files := lmsctltest.Files(t, dir)
	data := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		out, _ := call(t, cs, tool, args, false)["data"].(map[string]any)
		if out == nil {
			t.Fatalf("%s answered no object", tool)
		}
		return out
	}
	decode := func(s string) map[string]any {
		var v map[string]any
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		return v
	}

	// A file outside the directories allowed is never read, even through
	// a link inside one of them; a relative path neither.
	outside := lmsctltest.WriteFile(t, t.TempDir(), "secret.zip", []byte("PK secret"))
	link := filepath.Join(dir, "escape.zip")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{outside, link, "notes.pdf"} {
		out := call(t, cs, "post-admin-scorm-upload", map[string]any{"form": map[string]any{"package": path}}, true)
		if out["error"].(map[string]any)["code"] != "USAGE" {
			t.Fatalf("upload of %s: %v", path, out)
		}
	}
	out := call(t, cs, "post-admin-topics", map[string]any{"body": map[string]any{"lesson": lesson, "title": "Stolen",
		"topicable": topicContent + "PDF", "file": outside}}, true)
	if out["error"].(map[string]any)["code"] != "USAGE" {
		t.Fatalf("topic of a file outside: %v", out)
	}

	// What some topics name is made first: the settings that turn videos
	// on, the LTI tool, the uploaded packages and the LiaScript course.
	call(t, cs, "post-admin-config", map[string]any{"body": decode(lmsctltest.VideoConfig)}, false)
	tool := data("post-admin-lti-tools", map[string]any{"body": decode(lmsctltest.LTITool)})
	h5p := data("post-h5p-contents-upload", map[string]any{"form": map[string]any{"h5p_file": fixtures.Path(t, "h5p/hub/H5P.TrueFalse.h5p")}})
	scorm := data("post-admin-scorm-upload", map[string]any{"form": map[string]any{"package": fixtures.Path(t, "scorm/RuntimeBasicCalls_SCORM12.zip")}})
	cmi5 := data("post-admin-cmi5", map[string]any{"form": map[string]any{"package": fixtures.Path(t, "cmi5/single_au_basic_responsive.zip")}})
	app := data("post-admin-interactive", map[string]any{"form": map[string]any{"file": files["pendulum.zip"]}})
	workshop, err := os.ReadFile(fixtures.Path(t, "liascript/workshop.md"))
	if err != nil {
		t.Fatal(err)
	}
	lia := data("post-admin-liascript", map[string]any{"body": map[string]any{"markdown": string(workshop)}})
	if h5p["contentId"] == nil || scorm["id"] == nil || cmi5["id"] == nil || app["id"] == nil || lia["id"] == nil || tool["id"] == nil {
		t.Fatalf("uploads: %v %v %v %v %v %v", h5p, scorm, cmi5, app, lia, tool)
	}

	topics := []struct {
		kind, title string
		body        map[string]any
	}{
		{"richtext", "Welcome", map[string]any{"topicable": topicContent + "RichText", "html": "<h1>Welcome</h1><p>Read <strong>this</strong> first.</p>"}},
		{"pdf", "Notes", map[string]any{"topicable": topicContent + "PDF", "file": files["notes.pdf"]}},
		{"image", "Map", map[string]any{"topicable": topicContent + "Image", "file": files["map.png"]}},
		{"audio", "Talk", map[string]any{"topicable": topicContent + "Audio", "file": files["talk.mp3"]}},
		{"video", "Clip", map[string]any{"topicable": topicContent + "Video", "file": files["clip.mp4"]}},
		{"oembed", "Embedded talk", map[string]any{"topicable": topicContent + "OEmbed", "url": lmsctltest.OEmbedPage(t)}},
		{"project", "Essay", map[string]any{"topicable": `Lms\TopicTypeProject\Models\Project`, "instructions": "Write **500** words.",
			"accept": "pdf,txt", "max_size": 1024}},
		{"layout", "Structured", map[string]any{"topicable": topicContent + "Layout", "fallback": "Read on.",
			"document": []any{map[string]any{"component": "Callout", "props": map[string]any{"tone": "info", "title": "Note", "body": "Read on."}}}}},
		{"quiz", "Check", map[string]any{"topicable": `Lms\TopicTypeGift\Models\GiftQuiz`, "maxAttempts": 2, "review": "after_answer",
			"questions": []any{map[string]any{"prompt": "2 + 2?", "options": []any{
				map[string]any{"text": "3", "correct": false}, map[string]any{"text": "4", "correct": true}}}}}},
		{"h5p", "True or false", map[string]any{"topicable": topicContent + "H5P", "content_id": h5p["contentId"]}},
		{"scorm", "Golf", map[string]any{"topicable": topicContent + "ScormSco", "package": scorm["id"]}},
		{"cmi5", "Quartz", map[string]any{"topicable": topicContent + "Cmi5Au", "package": cmi5["id"]}},
		{"interactive", "Pendulum", map[string]any{"topicable": topicContent + "Interactive", "package": app["id"], "endStep": "done",
			"text": "Swing it."}},
		{"liascript", "Workshop", map[string]any{"topicable": `Lms\TopicTypeLiaScript\Models\LiaScript`, "course": lia["id"],
			"liascriptCompletion": "sections"}},
		{"lti", "Lab", map[string]any{"topicable": topicContent + "LTI", "tool": tool["id"], "custom": map[string]any{"unit": "3"}}},
	}
	kinds := map[string]bool{}
	for _, k := range call(t, cs, "get-admin-topics-types", nil, false)["data"].([]any) {
		kinds[k.(map[string]any)["kind"].(string)] = true
	}
	if len(kinds) != len(topics) {
		t.Fatalf("the server registers %d kinds, the agent makes %d: %v", len(kinds), len(topics), kinds)
	}
	var titles []string
	for _, tc := range topics {
		tc.body["lesson"], tc.body["title"] = lesson, tc.title
		topic := data("post-admin-topics", map[string]any{"body": tc.body})
		if topic["kind"] != tc.kind || topic["title"] != tc.title || !kinds[tc.kind] {
			t.Fatalf("%s topic: %v", tc.kind, topic)
		}
		delete(kinds, tc.kind)
		titles = append(titles, tc.title)
		if tc.kind == "video" {
			// The agent follows the transcoding as the tool describes:
			// without an ETag, wait holds the call until it is done.
			op := data("get-admin-operations-operation", map[string]any{"operation": fmt.Sprintf("video:%v", topic["id"]), "wait": 60})
			if op["done"] != true || op["state"] != "ready" {
				t.Fatalf("video operation: %v", op)
			}
		}
	}
	return titles
}
