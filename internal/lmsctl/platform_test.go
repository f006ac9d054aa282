package lmsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lmsctl"
)

const platformHost = "platform.test"

// TestPlatformAPIFromLmsctl: the platform API is never in `lmsctl
// login`'s default scopes nor in the default MCP toolsets; asked for by
// name, it is a command per operation and, in the toolset all, MCP tools
// whose tenant deletion is destructive: the agent's confirmation round
// comes on top of the API's own confirmation token.
func TestPlatformAPIFromLmsctl(t *testing.T) {
	apitest.Each(t, platformAPIFromLmsctl)
}

func platformAPIFromLmsctl(t *testing.T, env *apitest.Env) {
	ctx := t.Context()
	rootToken, _ := env.Login(platformHost, "root@platform.test", "platform-password")
	root := env.Client(platformHost, rootToken)

	// The default login asks for every scope but the platform's.
	var out, errOut bytes.Buffer
	e := newSession(t, false).env("", &out, &errOut, "login", "--server", env.HTTP.URL, "--host", platformHost)
	e.Sleep = func(context.Context, time.Duration) error {
		m := userCode.FindStringSubmatch(errOut.String())
		if m == nil {
			t.Fatalf("no user code printed: %s", errOut.String())
		}
		_, err := root.PostAuthDeviceRequestsIDApprove(ctx, m[1], client.DeviceApproveInputBody{})
		return err
	}
	if code := lmsctl.Main(ctx, e); code != 0 {
		t.Fatalf("login: exit %d: %s", code, errOut.String())
	}
	var login struct {
		Token struct{ Scopes []string } `json:"token"`
	}
	if err := json.Unmarshal(out.Bytes(), &login); err != nil || len(login.Token.Scopes) < 5 {
		t.Fatalf("login output: %s", out.String())
	}
	for _, s := range login.Token.Scopes {
		if strings.HasPrefix(s, "platform:") {
			t.Errorf("the default login asked for %s", s)
		}
	}
	for _, sets := range [][]string{nil, {"admin"}} {
		tools := offered(t, lmsctl.ToolPolicy{Toolsets: sets, AllowWrite: true, AllowDestructive: true})
		for name := range tools {
			if strings.Contains(name, "platform-tenants") {
				t.Errorf("toolsets %v offer %s", sets, name)
			}
		}
	}

	// Asked for by name: the commands.
	token := apitest.Must(root.PostAuthTokens(ctx, client.CreateInputBody{Name: "operator", Scopes: []string{"platform:write"}}))(t).Token
	s := newSession(t, false)
	s.loginAt(env.HTTP.URL, platformHost, token)
	code, stdout, stderr := s.run("", "post-platform-tenants", "--body", `{"host":"agent.test","admin_password":"agent-password"}`)
	var made struct {
		Tenant struct {
			ID    int64  `json:"id"`
			Host  string `json:"host"`
			Users int64  `json:"users"`
		} `json:"tenant"`
	}
	if err := json.Unmarshal([]byte(stdout), &made); code != 0 || err != nil || made.Tenant.Host != "agent.test" || made.Tenant.Users != 1 {
		t.Fatalf("post-platform-tenants: exit %d: %s %s", code, stdout, stderr)
	}
	id := made.Tenant.ID
	if code, stdout, stderr := s.run("", "get-platform-tenants", "--json"); code != 0 || !strings.Contains(stdout, `"agent.test"`) {
		t.Fatalf("get-platform-tenants: exit %d: %s %s", code, stdout, stderr)
	}

	// The MCP tools: the deletion needs the API's token and the agent's
	// confirmation.
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	cs := connectAt(t, env, platformHost, token, lmsctl.ToolPolicy{Toolsets: all, AllowWrite: true, AllowDestructive: true},
		func() time.Time { return now })
	tools := listTools(t, cs)
	del, list := tools["delete-platform-tenants-id"], tools["get-platform-tenants"]
	if del == nil || !*del.Annotations.DestructiveHint || del.Annotations.ReadOnlyHint ||
		list == nil || !list.Annotations.ReadOnlyHint || !strings.Contains(list.Description, "platform:read") {
		t.Fatalf("platform tools: delete %+v, list %+v", del, list)
	}
	step := call(t, cs, "post-platform-tenants-id-deletion", map[string]any{"id": id}, false)
	apiToken, _ := step["data"].(map[string]any)["confirmation_token"].(string)
	args := map[string]any{"id": id, "confirmation": apiToken}
	first := call(t, cs, "delete-platform-tenants-id", args, false)
	agentToken, _ := first["confirmationToken"].(string)
	shown, _ := json.Marshal(first["wouldDestroy"])
	if first["confirmationRequired"] != true || agentToken == "" || !strings.Contains(string(shown), `"agent.test"`) {
		t.Fatalf("first call: %v", first)
	}
	call(t, cs, "get-platform-tenants-id", map[string]any{"id": id}, false)
	args["confirm"] = agentToken
	call(t, cs, "delete-platform-tenants-id", args, false)
	gone := call(t, cs, "get-platform-tenants-id", map[string]any{"id": id}, true)
	if gone["error"].(map[string]any)["code"] != "NOT_FOUND" {
		t.Fatalf("after the deletion: %v", gone)
	}
}
