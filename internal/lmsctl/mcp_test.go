package lmsctl_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/kinds/layout"
	"github.com/lms-platform/lms/internal/lmsctl"
	"github.com/lms-platform/lms/internal/lmsctl/lmsctltest"
)

// connect starts lmsctl's MCP server for a scoped token of the tenant's
// admin and returns the SDK's in-memory client session to it.
func connect(t *testing.T, env *apitest.Env, policy lmsctl.ToolPolicy, now func() time.Time) *mcp.ClientSession {
	t.Helper()
	token := apitest.Must(env.ClientAs("admin").PostAuthTokens(t.Context(), client.CreateInputBody{Name: "agent",
		Scopes: []string{"courses:write", "h5p:write", "settings:write"}}))(t).Token
	return connectAt(t, env, env.Host, token, policy, now)
}

// connectAt starts lmsctl's MCP server for token at the tenant host.
func connectAt(t *testing.T, env *apitest.Env, host, token string, policy lmsctl.ToolPolicy, now func() time.Time) *mcp.ClientSession {
	t.Helper()
	caller := &lmsctl.Caller{Client: env.Client(host, token)}
	server := lmsctl.NewMCPServer(caller, policy, confirmations(t, token, now))
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// confirmations keeps the confirmation tokens in a profiles file of its
// own, with one profile holding token.
func confirmations(t *testing.T, token string, now func() time.Time) *lmsctl.Confirmations {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profiles.json")
	raw, _ := json.Marshal(map[string]any{"current": "agent", "profiles": map[string]any{"agent": map[string]any{
		"server": "http://127.0.0.1", "token": token}}})
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return &lmsctl.Confirmations{Path: path, Profile: "agent", Now: now}
}

func listTools(t *testing.T, cs *mcp.ClientSession) map[string]*mcp.Tool {
	t.Helper()
	out := map[string]*mcp.Tool{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// call calls a tool and returns its structured result; isError says
// what the result must say.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, isError bool) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: structured content %s: %v", name, raw, err)
	}
	if res.IsError != isError {
		t.Fatalf("%s: isError %v, want %v: %s", name, res.IsError, isError, raw)
	}
	var text map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &text); err != nil || !reflect.DeepEqual(text, out) {
		t.Fatalf("%s: text content %v differs from the structured %s", name, text, raw)
	}
	return out
}

func TestMCPToolGates(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})

	// Read tools only, by default.
	cs := connect(t, env, lmsctl.ToolPolicy{}, nil)
	tools := listTools(t, cs)
	read := tools["get-admin-courses"]
	if read == nil || !read.Annotations.ReadOnlyHint || *read.Annotations.DestructiveHint || !read.Annotations.IdempotentHint {
		t.Fatalf("get-admin-courses: %+v", read)
	}
	if !strings.Contains(read.Description, "untrusted data") || !strings.Contains(read.Description, "courses:read") {
		t.Fatalf("description: %s", read.Description)
	}
	for name, tool := range tools {
		if !tool.Annotations.ReadOnlyHint {
			t.Fatalf("%s is offered without --allow-write", name)
		}
	}
	for _, name := range []string{"post-admin-courses", "delete-admin-courses-id"} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"body": map[string]any{"title": "x"}}}); err == nil {
			t.Fatalf("%s was called without being allowed", name)
		}
	}

	// An allow-list turns on the write tools it names, nothing else.
	tools = listTools(t, connect(t, env, lmsctl.ToolPolicy{Toolsets: all, Allow: []string{"post-admin-courses"}}, nil))
	w := tools["post-admin-courses"]
	if w == nil || w.Annotations.ReadOnlyHint || *w.Annotations.DestructiveHint || w.Annotations.IdempotentHint {
		t.Fatalf("post-admin-courses: %+v", w)
	}
	if tools["post-admin-lessons"] != nil || tools["delete-admin-courses-id"] != nil {
		t.Fatal("the allow-list turned on more than it names")
	}

	// --allow-write: every write tool, still no destructive one.
	tools = listTools(t, connect(t, env, lmsctl.ToolPolicy{Toolsets: all, AllowWrite: true}, nil))
	if tools["put-admin-lessons-id"] == nil || !tools["put-admin-lessons-id"].Annotations.IdempotentHint || tools["delete-admin-courses-id"] != nil {
		t.Fatal("--allow-write tools")
	}
	// Authoring a layout right the first time: every tool that creates or
	// updates a topic says the rules, with the components the server
	// approves.
	if d := tools["post-admin-topics"].Description; !strings.Contains(d, "add-topic") {
		t.Fatalf("topic creation tool without the types' fields: %s", d)
	}
	for _, name := range []string{"post-admin-topics", "post-admin-topics-id", "put-admin-topics-id", "patch-admin-topics-id"} {
		d := tools[name].Description
		for _, rule := range []string{"Practice goes only in a PracticeActivity", "leave out hints and worked solutions",
			"get-admin-layout-components"} {
			if !strings.Contains(d, rule) {
				t.Errorf("%s does not say %q: %s", name, rule, d)
			}
		}
		for _, c := range layout.Components {
			if !strings.Contains(d, c.Name) {
				t.Errorf("%s does not name the approved component %s: %s", name, c.Name, d)
			}
		}
	}
	if d := tools["post-admin-courses"].Description; strings.Contains(d, "PracticeActivity") {
		t.Errorf("a tool that takes no layout has its rules: %s", d)
	}
	// Uploads read local files: no tool without a directory allowed, and
	// no topic of a local file either.
	if tools["post-admin-topics-topic-id-resources"] != nil || tools["post-admin-users-id-avatar"] != nil || tools["post-admin-scorm-upload"] != nil {
		t.Fatal("an upload is offered as a tool")
	}
	cs = connect(t, env, lmsctl.ToolPolicy{Toolsets: all, AllowWrite: true}, nil)
	refused := call(t, cs, "post-admin-topics", map[string]any{"body": map[string]any{"lesson": 1, "title": "Notes",
		"topicable": `Lms\TopicTypes\Models\TopicContent\PDF`, "file": "/etc/hostname"}}, true)
	if refused["error"].(map[string]any)["code"] != "USAGE" {
		t.Fatalf("a topic of a local file without --upload-from: %v", refused)
	}
	// With a directory, the uploads are tools whose file fields take paths.
	dir := t.TempDir()
	up := listTools(t, connect(t, env, lmsctl.ToolPolicy{Toolsets: all, AllowWrite: true, UploadFrom: []string{dir}}, nil))["post-admin-scorm-upload"]
	if up == nil || up.Annotations.ReadOnlyHint || !strings.Contains(up.Description, dir) {
		t.Fatalf("post-admin-scorm-upload with --upload-from: %+v", up)
	}
	schema, _ := json.Marshal(up.InputSchema)
	if !strings.Contains(string(schema), `"form"`) || !strings.Contains(string(schema), "absolute path") || strings.Contains(string(schema), "binary") {
		t.Fatalf("upload input schema: %s", schema)
	}
	tools = listTools(t, connect(t, env, lmsctl.ToolPolicy{Toolsets: all, AllowDestructive: true}, nil))
	del := tools["delete-admin-courses-id"]
	if del == nil || !*del.Annotations.DestructiveHint || del.Annotations.ReadOnlyHint || !del.Annotations.IdempotentHint ||
		!strings.Contains(del.Description, "confirmationToken") {
		t.Fatalf("delete-admin-courses-id: %+v", del)
	}
	schema, _ = json.Marshal(del.InputSchema)
	if !strings.Contains(string(schema), `"confirm"`) || !strings.Contains(string(schema), `"id"`) {
		t.Fatalf("input schema: %s", schema)
	}
}

// TestMCPAuthoringAndConfirmation: an agent authors the course of the
// command-line script (a lesson with one topic of every type, uploads
// read from the directories allowed), assigns a learner and deletes the
// course through the confirmation round.
func TestMCPAuthoringAndConfirmation(t *testing.T) {
	lmsctltest.NeedFFmpeg(t)
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) { mcpAuthoring(t, lmsctltest.Server(t, backend)) })
	}
}

func mcpAuthoring(t *testing.T, env *apitest.Env) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	files := t.TempDir()
	uploads := []string{files}
	for _, f := range []string{"h5p/hub/H5P.TrueFalse.h5p", "scorm/RuntimeBasicCalls_SCORM12.zip", "cmi5/single_au_basic_responsive.zip"} {
		uploads = append(uploads, filepath.Dir(fixtures.Path(t, f)))
	}
	cs := connect(t, env, lmsctl.ToolPolicy{Toolsets: all, AllowWrite: true, AllowDestructive: true, UploadFrom: uploads}, func() time.Time { return now })

	created := call(t, cs, "post-admin-courses", map[string]any{"body": map[string]any{"title": "Agent course", "status": "published"}}, false)
	courseID := created["data"].(map[string]any)["id"].(float64)
	lesson := call(t, cs, "post-admin-lessons", map[string]any{"body": map[string]any{"course_id": courseID, "title": "Agent lesson"}}, false)
	lessonID := lesson["data"].(map[string]any)["id"].(float64)
	titles := authorEveryType(t, cs, lessonID, files)
	program := call(t, cs, "get-admin-courses-course-program", map[string]any{"course": courseID}, false)
	var lessons struct {
		Data struct {
			Lessons []struct {
				Title  string `json:"title"`
				Topics []struct {
					Title string `json:"title"`
				} `json:"topics"`
			} `json:"lessons"`
		} `json:"data"`
	}
	raw, _ := json.Marshal(program)
	if err := json.Unmarshal(raw, &lessons); err != nil || len(lessons.Data.Lessons) != 1 ||
		lessons.Data.Lessons[0].Title != "Agent lesson" || len(lessons.Data.Lessons[0].Topics) != len(titles) {
		t.Fatalf("program: %s", raw)
	}
	for i, topic := range lessons.Data.Lessons[0].Topics {
		if topic.Title != titles[i] {
			t.Fatalf("program: topic %d is %q, want %q", i, topic.Title, titles[i])
		}
	}
	page := call(t, cs, "get-admin-courses", map[string]any{"title": "Agent"}, false)
	if page["meta"].(map[string]any)["total"] != float64(1) {
		t.Fatalf("list: %v", page)
	}

	// Bad arguments fail before any request.
	bad := call(t, cs, "get-admin-courses-id", map[string]any{"id": courseID, "extra": 1}, true)
	if bad["error"].(map[string]any)["code"] != "USAGE" {
		t.Fatalf("unknown argument: %v", bad)
	}
	call(t, cs, "post-admin-lessons", map[string]any{"body": map[string]any{"title": "No course"}}, true)

	// A destructive call whose path has no read shows its parent's:
	// taking a learner off the course shows the course's assignments.
	learner := env.NewUser("student")
	call(t, cs, "post-admin-courses-id-access", map[string]any{"id": courseID, "body": map[string]any{"users": []any{map[string]any{"id": learner.ID}}}}, false)
	remove := call(t, cs, "post-admin-courses-id-access-remove", map[string]any{"id": courseID, "body": map[string]any{"users": []any{learner.ID}}}, false)
	shown, _ := json.Marshal(remove["wouldDestroy"])
	if remove["confirmationRequired"] != true || !strings.Contains(string(shown), fmt.Sprintf(`"id":%d`, learner.ID)) {
		t.Fatalf("access-remove preview: %s", shown)
	}

	// First call: nothing happens; the answer shows the course and a token.
	args := map[string]any{"id": courseID}
	first := call(t, cs, "delete-admin-courses-id", args, false)
	token, _ := first["confirmationToken"].(string)
	target := first["wouldDestroy"].(map[string]any)
	if first["confirmationRequired"] != true || token == "" || target["current"].(map[string]any)["title"] != "Agent course" ||
		first["expiresAt"] != "2026-11-27T12:02:00Z" {
		t.Fatalf("first call: %v", first)
	}
	call(t, cs, "get-admin-courses-id", args, false)

	refused := func(args map[string]any) {
		t.Helper()
		out := call(t, cs, "delete-admin-courses-id", args, true)
		if out["error"].(map[string]any)["code"] != "CONFIRMATION_INVALID" {
			t.Fatalf("refusal: %v", out)
		}
		call(t, cs, "get-admin-courses-id", map[string]any{"id": courseID}, false)
	}
	// Bound to the arguments, the tool, and its two minutes.
	refused(map[string]any{"id": courseID + 1000, "confirm": token})
	refused(map[string]any{"id": courseID, "confirm": token + "0"})
	now = now.Add(ConfirmWindow + time.Second)
	refused(map[string]any{"id": courseID, "confirm": token})

	token = call(t, cs, "delete-admin-courses-id", args, false)["confirmationToken"].(string)
	done := call(t, cs, "delete-admin-courses-id", map[string]any{"id": courseID, "confirm": token}, false)
	if _, ok := done["data"]; !ok {
		t.Fatalf("confirmed call: %v", done)
	}
	gone := call(t, cs, "get-admin-courses-id", args, true)
	if gone["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("after delete: %v", gone)
	}
	// A token acts once.
	out := call(t, cs, "delete-admin-courses-id", map[string]any{"id": courseID, "confirm": token}, true)
	if out["error"].(map[string]any)["code"] != "CONFIRMATION_INVALID" {
		t.Fatalf("reused token: %v", out)
	}
}

const ConfirmWindow = lmsctl.ConfirmFor

// all offers every operation as a tool of its own.
var all = []string{"all"}
