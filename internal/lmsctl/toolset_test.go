package lmsctl_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lms-platform/lms/internal/lmsctl"
)

// offered lists the tools of a server built for the policy, through the
// SDK's in-memory client.
func offered(t *testing.T, policy lmsctl.ToolPolicy) map[string]*mcp.Tool {
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
	defer func() { cs.Close(); ss.Wait() }()
	return listTools(t, cs)
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
