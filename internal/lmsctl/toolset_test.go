package lmsctl_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lms-platform/lms/internal/lmsctl"
)

// serverless connects the SDK's in-memory client to a server built for
// the policy with no API behind it: what it answers is decided before
// any request.
func serverless(t *testing.T, policy lmsctl.ToolPolicy) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := lmsctl.NewMCPServer(&lmsctl.Caller{}, policy, nil).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// offered lists the tools of a server built for the policy.
func offered(t *testing.T, policy lmsctl.ToolPolicy) map[string]*mcp.Tool {
	t.Helper()
	return listTools(t, serverless(t, policy))
}

// TestAddTopicArguments: add-topic refuses, before any request and in its
// own terms, arguments its kind does not take, conflicting ones, and
// local files (or texts given as @path) outside the upload directories.
func TestAddTopicArguments(t *testing.T) {
	cs := serverless(t, lmsctl.ToolPolicy{AllowWrite: true, UploadFrom: []string{t.TempDir()}})
	refused := func(args map[string]any, says string) {
		t.Helper()
		args["lesson"], args["title"] = 1, "T"
		out := call(t, cs, "add-topic", args, true)
		e := out["error"].(map[string]any)
		if e["code"] != "USAGE" || !strings.Contains(e["message"].(string), says) {
			t.Fatalf("%v: %v, want %q", args, e, says)
		}
	}
	refused(map[string]any{"kind": "richtext", "markdown": "a", "html": "<p>a</p>"}, "give exactly one of markdown and html")
	refused(map[string]any{"kind": "quiz", "html": "<p>a</p>"}, "kind quiz takes no html")
	refused(map[string]any{"kind": "richtext", "markdown": "@/etc/hostname"}, "a text starting with @ names a file")
	refused(map[string]any{"kind": "pdf", "file": "/etc/hostname"}, "not inside a directory lmsctl mcp may upload from")
	refused(map[string]any{"kind": "quiz", "questions": []any{map[string]any{"prompt": "?", "options": []any{}}}}, "questions: question 1")
	refused(map[string]any{"kind": "nothing"}, "kind must be one of")
	for name, tool := range offered(t, lmsctl.ToolPolicy{AllowWrite: true}) {
		raw, _ := json.Marshal(tool.InputSchema)
		if name == "add-topic" && (strings.Contains(string(raw), "--") || strings.Contains(string(raw), "@file")) {
			t.Fatalf("add-topic's schema speaks of create-topic's flags: %s", raw)
		}
	}
}

// portableSchema reports, as the MCP Inspector's strict check does, a
// type written as a list and a schema that constrains nothing.
func portableSchema(t *testing.T, tool, path string, s any) {
	t.Helper()
	node, ok := s.(map[string]any)
	if !ok {
		if _, isBool := s.(bool); isBool {
			t.Errorf("%s: %s is a bare boolean schema", tool, path)
		}
		return
	}
	if _, list := node["type"].([]any); list {
		t.Errorf("%s: %s has a type list", tool, path)
	}
	constrains := false
	for _, k := range []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "properties", "items"} {
		if _, ok := node[k]; ok {
			constrains = true
		}
	}
	if !constrains {
		t.Errorf("%s: %s accepts any value: %v", tool, path, node)
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for k, v := range props {
			portableSchema(t, tool, path+"."+k, v)
		}
	}
	if items, ok := node["items"]; ok {
		portableSchema(t, tool, path+"[]", items)
	}
	if extra, ok := node["additionalProperties"].(map[string]any); ok {
		portableSchema(t, tool, path+"{}", extra)
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		list, _ := node[k].([]any)
		for _, v := range list {
			portableSchema(t, tool, path+"|", v)
		}
	}
}

// TestToolsets: every toolset, with every gate open, offers no route of
// the learner's player, descriptions under 1,000 characters and typed,
// portable input schemas; the default offers the task tools and fewer
// than 40 tools, and all adds the flat operation tools.
func TestToolsets(t *testing.T) {
	player := []string{"post-scorm-tracks-sco-commit", "post-cmi5-fetch", "post-csp-report", "put-courses-progress-topic-id-ping",
		"post-h5p-finishedData", "get-h5p-contents-id-play", "post-liascript-progress-topic"}
	taskTools := []string{"create-course", "add-topic", "find-users", "assign-course", "publish-course", "delete-course"}
	for _, sets := range [][]string{nil, {"authoring"}, {"reporting"}, {"admin"}, {"all"}} {
		tools := offered(t, lmsctl.ToolPolicy{Toolsets: sets, AllowWrite: true, AllowDestructive: true, UploadFrom: []string{t.TempDir()}})
		for name, tool := range tools {
			if slices.Contains(player, name) {
				t.Errorf("%v offers the player's route %s", sets, name)
			}
			if len(tool.Description) >= 1000 {
				t.Errorf("%s: a description of %d characters", name, len(tool.Description))
			}
			raw, _ := json.Marshal(tool.InputSchema)
			var schema any
			_ = json.Unmarshal(raw, &schema)
			portableSchema(t, name, "inputSchema", schema)
		}
		switch {
		case sets == nil:
			if len(tools) >= 40 || tools["post-admin-topics"] != nil {
				t.Errorf("the default offers %d tools", len(tools))
			}
			for _, name := range taskTools {
				if tools[name] == nil {
					t.Errorf("the default lacks %s", name)
				}
			}
		case sets[0] == "all":
			if tools["post-admin-topics"] == nil || tools["add-topic"] == nil || tools["delete-admin-courses-id"] == nil {
				t.Errorf("all lacks the flat operation tools or the task tools")
			}
		case sets[0] == "reporting":
			if tools["add-topic"] != nil || tools["get-admin-courses-id-access"] == nil {
				t.Errorf("reporting: %d tools", len(tools))
			}
		}
	}
	// Without the gates, write and destructive task tools are absent.
	tools := offered(t, lmsctl.ToolPolicy{})
	if tools["add-topic"] != nil || tools["delete-course"] != nil || tools["find-users"] == nil {
		t.Error("the task tools ignore the write gates")
	}
	if tools := offered(t, lmsctl.ToolPolicy{Allow: []string{"add-topic"}}); tools["add-topic"] == nil || tools["create-course"] != nil {
		t.Error("--allow does not name task tools")
	}
}
