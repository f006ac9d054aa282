package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/lmsctl/lmsctltest"
)

// TestLoginSwitch: a login that changes the current profile says so on
// standard error; --no-switch keeps the current one.
func TestLoginSwitch(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.ClientAs("admin")
	c := newCLI(t)
	login := func(profile string, extra ...string) result {
		t.Helper()
		args := append([]string{"login", "--token", "--profile", profile, "--server", env.HTTP.URL, "--host", env.Host}, extra...)
		r := c.run(scopedToken(t, admin, profile, "courses:read"), args...)
		if r.code != 0 {
			t.Fatalf("login %s: %d %s", profile, r.code, r.stderr)
		}
		return r
	}
	current := func() string {
		t.Helper()
		raw, _ := os.ReadFile(filepath.Join(c.dir, "profiles.json"))
		var cfg struct{ Current string }
		_ = json.Unmarshal(raw, &cfg)
		return cfg.Current
	}
	if r := login("first"); len(r.stderr) != 0 || current() != "first" {
		t.Fatalf("first login: %s, current %s", r.stderr, current())
	}
	if r := login("first"); len(r.stderr) != 0 {
		t.Fatalf("logging in again to the current profile: %s", r.stderr)
	}
	if r := login("second"); !strings.Contains(string(r.stderr), "the current profile is now second (was first)") || current() != "second" {
		t.Fatalf("switch: %s, current %s", r.stderr, current())
	}
	if r := login("third", "--no-switch"); !strings.Contains(string(r.stderr), "the current profile stays second") || current() != "second" {
		t.Fatalf("--no-switch: %s, current %s", r.stderr, current())
	}
	if get(c.ok("", "whoami", "--profile", "third"), "profile") != "third" {
		t.Fatal("the profile kept aside is not usable with --profile")
	}
}

// TestAgentToolbox: an agent builds a course through the task tools
// alone, with the official MCP client SDK (one server for the session):
// a lesson with a topic of every kind — rich text from Markdown, a GIFT
// quiz from {prompt, options}, a SCORM package read in place from the
// fixtures (whose SCO choice comes back as a question), an H5P package,
// then PDF, image, audio, video, oEmbed, project, layout, cmi5,
// interactive app, LiaScript and LTI; it finds a learner, assigns and
// publishes. Then the MCP Inspector's CLI, one process per call, reads
// the class progress once the learner has read the rich text, checks
// every toolset's schemas strictly and deletes the course with a
// confirmation across two processes.
func TestAgentToolbox(t *testing.T) {
	sdk := filepath.Join(fixtures.RepoRoot(), "internal", "lmsctl", "testdata", "mcpclient")
	inspector := filepath.Join(fixtures.RepoRoot(), "node_modules", ".bin", "mcp-inspector")
	for _, need := range []string{filepath.Join(sdk, "node_modules", "@modelcontextprotocol", "sdk"), inspector} {
		if _, err := os.Stat(need); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("CI=true but %s is not installed (make test installs it): %v", need, err)
			}
			t.Skipf("%s is not installed: run make test", need)
		}
	}
	scorm := fixtures.Path(t, "scorm/multi-sco-scorm12.zip")
	h5p := fixtures.Path(t, "h5p/hub/H5P.TrueFalse.h5p")
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			env := lmsctltest.Server(t, backend)
			admin := env.ClientAs("admin")
			learner := env.NewUser("student")
			c := newCLI(t)
			c.ok(scopedToken(t, admin, "agent", "courses:write", "h5p:write", "users:read", "reports:read"),
				"login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
			// The platform's set-up is the admin's, not the agent's: videos
			// on, one LTI tool registered.
			dir := t.TempDir()
			files := lmsctltest.Files(t, dir)
			c.ok(scopedToken(t, admin, "setup", "settings:write"), "login", "--token", "--profile", "setup", "--no-switch",
				"--server", env.HTTP.URL, "--host", env.Host)
			c.ok("", "post-admin-config", "--profile", "setup", "--body", "@"+lmsctltest.WriteFile(t, dir, "video.json", []byte(lmsctltest.VideoConfig)))
			tool, _ := strconv.Atoi(id(c.ok("", "post-admin-lti-tools", "--profile", "setup", "--body",
				"@"+lmsctltest.WriteFile(t, dir, "tool.json", []byte(lmsctltest.LTITool))), "id"))
			lesson := "$0.lessons.0.id"
			topic := func(kind, title string, args map[string]any) map[string]any {
				args["lesson"], args["kind"], args["title"] = lesson, kind, title
				return map[string]any{"tool": "add-topic", "args": args}
			}
			cmi5 := fixtures.Path(t, "cmi5/single_au_basic_responsive.zip")
			lia := fixtures.Path(t, "liascript/workshop.md")
			// The kinds beside the four the session starts with.
			more := []map[string]any{
				topic("pdf", "Notes", map[string]any{"file": files["notes.pdf"]}),
				topic("image", "Map", map[string]any{"file": files["map.png"]}),
				topic("audio", "Talk", map[string]any{"file": files["talk.mp3"]}),
				topic("video", "Clip", map[string]any{"file": files["clip.mp4"]}),
				topic("oembed", "Embedded talk", map[string]any{"url": lmsctltest.OEmbedPage(t)}),
				topic("project", "Essay", map[string]any{"instructions": "Write **500** words.", "accept": "pdf,txt", "maxSize": 1024}),
				topic("layout", "Structured", map[string]any{"fallback": "Read on.", "document": []any{map[string]any{"component": "Callout",
					"props": map[string]any{"tone": "info", "title": "Note", "body": "Read on."}}}}),
				topic("cmi5", "Quartz", map[string]any{"package": cmi5}),
				topic("interactive", "Pendulum", map[string]any{"file": files["pendulum.zip"], "endStep": "done", "text": "Swing it."}),
				topic("liascript", "Workshop", map[string]any{"file": lia, "completion": "sections"}),
				topic("lti", "Lab", map[string]any{"tool": tool, "custom": map[string]any{"unit": "3"}}),
			}
			server := []string{binary, "mcp", "--allow-write", "--allow-destructive",
				"--upload-from", strings.Join([]string{filepath.Dir(scorm), filepath.Dir(h5p), dir, filepath.Dir(cmi5), filepath.Dir(lia)}, ",")}
			// A short course of one reading, which the learner finishes.
			short := len(more)
			more = append(more,
				map[string]any{"tool": "create-course", "args": map[string]any{"title": "Short course",
					"lessons": []any{map[string]any{"title": "Only"}}}},
				map[string]any{"tool": "add-topic", "args": map[string]any{"lesson": fmt.Sprintf("$%d.lessons.0.id", 9+short),
					"title": "Read me", "kind": "richtext", "markdown": "Done soon."}},
				map[string]any{"tool": "assign-course", "args": map[string]any{"course": fmt.Sprintf("$%d.course.id", 9+short),
					"users": []any{"$6.users.0.id"}}},
				map[string]any{"tool": "publish-course", "args": map[string]any{"course": fmt.Sprintf("$%d.course.id", 9+short)}})
			res := agentSDK(t, c, sdk, server, scorm, h5p, learner.Email, learner.ID, more)
			course := int64(res(0, "course.id").(float64))
			shortCourse := int64(res(9+short, "course.id").(float64))
			// The learner reads the first course's rich text and finishes
			// the short course: the class progress shows both.
			lc := env.UserClient(learner)
			apitest.Must(lc.PatchCoursesProgressID(t.Context(), course,
				client.WriteInputBody{Progress: []client.ProgressWrite{{TopicID: int64(res(1, "topic.id").(float64)), Status: 1}}}))(t)
			apitest.Must(lc.PatchCoursesProgressID(t.Context(), shortCourse,
				client.WriteInputBody{Progress: []client.ProgressWrite{{TopicID: int64(res(10+short, "topic.id").(float64)), Status: 1}}}))(t)

			program := apitest.Must(admin.GetAdminCoursesIDProgram(t.Context(), course))(t)
			raw, _ := json.Marshal(program)
			for _, title := range []string{"Welcome", "Check", "Golf", "True or false", "Notes", "Map", "Talk", "Clip", "Embedded talk",
				"Essay", "Structured", "Quartz", "Pendulum", "Workshop", "Lab"} {
				if !strings.Contains(string(raw), fmt.Sprintf("%q", title)) {
					t.Fatalf("program lacks %s: %s", title, raw)
				}
			}
			agentInspector(t, c, inspector, server[1:], course, shortCourse, learner.ID)
		})
	}
}

// agentSDK makes the calls of one MCP session and answers the reader of
// their results (call i's structured content at a dotted path).
func agentSDK(t *testing.T, c *cli, sdk string, server []string, scorm, h5p, email string, learner int64,
	more []map[string]any) func(i int, path string) any {
	t.Helper()
	calls := []map[string]any{
		{"tool": "create-course", "args": map[string]any{"title": "Agent-built course", "summary": "Made through MCP",
			"lessons": []any{map[string]any{"title": "Basics"}}}},
		{"tool": "add-topic", "args": map[string]any{"lesson": "$0.lessons.0.id", "title": "Welcome", "kind": "richtext",
			"markdown": "# Welcome\n\nRead **this** first."}},
		{"tool": "add-topic", "args": map[string]any{"lesson": "$0.lessons.0.id", "title": "Check", "kind": "quiz",
			"maxAttempts": 2, "questions": []any{map[string]any{"prompt": "2 + 2?", "options": []any{
				map[string]any{"text": "3", "correct": false}, map[string]any{"text": "4", "correct": true}}}}}},
		{"tool": "add-topic", "args": map[string]any{"lesson": "$0.lessons.0.id", "title": "Golf", "kind": "scorm", "package": scorm}},
		{"tool": "add-topic", "args": map[string]any{"lesson": "$0.lessons.0.id", "title": "Golf", "kind": "scorm",
			"package": "$3.package", "sco": "$3.choices.0.id"}},
		{"tool": "add-topic", "args": map[string]any{"lesson": "$0.lessons.0.id", "title": "True or false", "kind": "h5p", "package": h5p}},
		{"tool": "find-users", "args": map[string]any{"query": email}},
		{"tool": "assign-course", "args": map[string]any{"course": "$0.course.id", "users": []any{"$6.users.0.id"}}},
		{"tool": "publish-course", "args": map[string]any{"course": "$0.course.id"}},
	}
	calls = append(calls, more...)
	// A file outside the directories allowed is refused.
	calls = append(calls, map[string]any{"tool": "add-topic", "args": map[string]any{"lesson": "$0.lessons.0.id", "title": "Stolen",
		"kind": "pdf", "file": "/etc/hostname"}})
	stdin, _ := json.Marshal(calls)
	cmd := exec.Command("node", append([]string{filepath.Join(sdk, "drive.mjs")}, server...)...)
	cmd.Env = append(os.Environ(), "LMSCTL_CONFIG_DIR="+c.dir)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("drive.mjs: %v\n%s\n%s", err, out.Bytes(), errOut.Bytes())
	}
	var got struct {
		Tools   []string
		Results []struct {
			IsError           bool
			StructuredContent map[string]any
		}
	}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("drive.mjs: %v\n%s", err, out.Bytes())
	}
	if len(got.Tools) >= 40 {
		t.Fatalf("the default toolsets offer %d tools: %v", len(got.Tools), got.Tools)
	}
	for i, r := range got.Results {
		if r.IsError != (i == len(got.Results)-1) {
			t.Fatalf("call %d (%s): %v", i, calls[i]["tool"], r.StructuredContent)
		}
		if _, ok := r.StructuredContent["nextSteps"]; !ok && !r.IsError {
			t.Fatalf("call %d (%s) names no next step: %v", i, calls[i]["tool"], r.StructuredContent)
		}
	}
	res := func(i int, path string) any { return get(got.Results[i].StructuredContent, path) }
	if res(3, "needsChoice") != true || res(3, "package") == nil || res(3, "choices.1.id") == nil {
		t.Fatalf("a package of several SCOs: %v", got.Results[3].StructuredContent)
	}
	for i, kind := range map[int]string{1: "richtext", 2: "quiz", 4: "scorm", 5: "h5p"} {
		if res(i, "topic.kind") != kind {
			t.Fatalf("add-topic %s: %v", kind, got.Results[i].StructuredContent)
		}
	}
	if res(6, "users.0.id") != float64(learner) || res(7, "assigned.users") != float64(1) || res(8, "course.status") != "published" {
		t.Fatalf("find, assign, publish: %v %v %v", res(6, ""), res(7, ""), res(8, ""))
	}
	for i := range more {
		if kind := more[i]["args"].(map[string]any)["kind"]; kind != nil && res(9+i, "topic.kind") != kind {
			t.Fatalf("add-topic %s: %v", kind, got.Results[9+i].StructuredContent)
		}
	}
	if last := len(got.Results) - 1; res(last, "error.code") != "USAGE" {
		t.Fatalf("a file outside the upload directories: %v", got.Results[last].StructuredContent)
	}
	return res
}

func agentInspector(t *testing.T, c *cli, inspector string, server []string, course, shortCourse, learner int64) {
	t.Helper()
	inspect := func(args ...string) (map[string]any, string) {
		t.Helper()
		base := append([]string{"--cli", "-e", "LMSCTL_CONFIG_DIR=" + c.dir, "-e", runMain + "=1", binary}, server...)
		cmd := exec.Command(inspector, append(base, args...)...)
		cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		_ = cmd.Run() // a tool's isError is an exit code of its own; the answer says it
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("inspector %v: %v\n%s\n%s", args, err, out.Bytes(), errOut.Bytes())
		}
		return v, errOut.String()
	}
	for _, set := range []string{"authoring,reporting", "admin", "all"} {
		listed, stderr := inspect("--toolset", set, "--method", "tools/list", "--strict")
		if strings.TrimSpace(stderr) != "" {
			t.Fatalf("--toolset %s: the strict check found: %s", set, stderr)
		}
		for _, tool := range get(listed, "tools").([]any) {
			if d := get(tool, "description").(string); len(d) >= 1000 {
				t.Fatalf("%s: a description of %d characters", get(tool, "name"), len(d))
			}
		}
	}
	id := fmt.Sprint(course)
	class, _ := inspect("--method", "tools/call", "--tool-name", "class-progress", "--tool-arg", "course="+id)
	if get(class, "structuredContent.learners.0.user_id") != float64(learner) ||
		get(class, "structuredContent.learners.0.status") != "started" || get(class, "structuredContent.meta.total") != float64(1) {
		t.Fatalf("class progress after one topic read: %v", class)
	}
	class, _ = inspect("--method", "tools/call", "--tool-name", "class-progress", "--tool-arg", fmt.Sprintf("course=%d", shortCourse))
	if get(class, "structuredContent.learners.0.status") != "finished" || get(class, "structuredContent.learners.0.percent") != float64(100) ||
		get(class, "structuredContent.summary.finished") != float64(1) {
		t.Fatalf("class progress after the learner finished: %v", class)
	}
	first, _ := inspect("--method", "tools/call", "--tool-name", "delete-course", "--tool-arg", "course="+id)
	token, _ := get(first, "structuredContent.confirmationToken").(string)
	if token == "" || get(first, "structuredContent.wouldDestroy.current.course.title") != "Agent-built course" {
		t.Fatalf("first call: %v", first)
	}
	// A token for other arguments does not act; the right one does, once,
	// each in a process of its own.
	other, _ := inspect("--method", "tools/call", "--tool-name", "delete-course", "--tool-arg", fmt.Sprintf("course=%d", course+1), "confirm="+token)
	if get(other, "structuredContent.error.code") != "CONFIRMATION_INVALID" {
		t.Fatalf("other arguments: %v", other)
	}
	done, _ := inspect("--method", "tools/call", "--tool-name", "delete-course", "--tool-arg", "course="+id, "confirm="+token)
	if get(done, "structuredContent.deleted.course") != float64(course) {
		t.Fatalf("confirmed in a second process: %v", done)
	}
	again, _ := inspect("--method", "tools/call", "--tool-name", "delete-course", "--tool-arg", "course="+id, "confirm="+token)
	if get(again, "structuredContent.error.code") != "CONFIRMATION_INVALID" {
		t.Fatalf("a used token: %v", again)
	}
	gone, _ := inspect("--method", "tools/call", "--tool-name", "get-admin-courses-id", "--toolset", "all", "--tool-arg", "id="+id)
	if get(gone, "structuredContent.error.code") != "NOT_FOUND" {
		t.Fatalf("after the delete: %v", gone)
	}
}
