package lmsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lmsctl"
)

var userCode = regexp.MustCompile(`enter the code ([A-Z]{4}-[A-Z]{4})`)

// deviceLogin runs `lmsctl login` in process against the harness; each
// wait between polls goes to onSleep (with the user code lmsctl printed)
// instead of passing, so the server's clock alone decides what the polls
// see.
func deviceLogin(t *testing.T, env *apitest.Env, onSleep func(n int, d time.Duration, code string)) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	n := 0
	e := newSession(t, false).env("", &out, &errOut, "login", "--server", env.HTTP.URL, "--host", env.Host, "--scopes", "courses:read")
	e.Sleep = func(_ context.Context, d time.Duration) error {
		n++
		m := userCode.FindStringSubmatch(errOut.String())
		if m == nil {
			t.Fatalf("no user code printed before polling: %s", errOut.String())
		}
		onSleep(n, d, m[1])
		return nil
	}
	code := lmsctl.Main(context.Background(), e)
	return code, out.String(), errOut.String()
}

func TestDevicePollingFollowsTheServer(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.ClientAs("admin")
	var waits []time.Duration
	code, out, errOut := deviceLogin(t, env, func(n int, d time.Duration, user string) {
		waits = append(waits, d)
		switch n {
		case 1: // first poll: pending
			env.Clock.Advance(d)
		case 2: // the clock stands still: polling too fast, slow_down
		case 3:
			apitest.Must(admin.PostAuthDeviceRequestsIDApprove(t.Context(), user, client.DeviceApproveInputBody{}))(t)
			env.Clock.Advance(d)
		}
	})
	if code != 0 {
		t.Fatalf("login: exit %d: %s", code, errOut)
	}
	// 5 s as the server says, again after a pending answer, 10 s after slow_down.
	if len(waits) != 3 || waits[0] != 5*time.Second || waits[1] != 5*time.Second || waits[2] != 10*time.Second {
		t.Fatalf("waits between polls: %v", waits)
	}
	var login map[string]any
	if err := json.Unmarshal([]byte(out), &login); err != nil || login["token"].(map[string]any)["scopes"].([]any)[0] != "courses:read" {
		t.Fatalf("login output: %s", out)
	}
	if strings.Contains(out+errOut, "lms_pat_") {
		t.Fatal("the token was printed")
	}

	// Nobody approves: the codes expire and the login ends with exit 4.
	code, _, errOut = deviceLogin(t, env, func(_ int, _ time.Duration, _ string) { env.Clock.Advance(11 * time.Minute) })
	if code != lmsctl.ExitAuth || lastFailure(t, errOut).Code != "EXPIRED" {
		t.Fatalf("expired login: exit %d: %s", code, errOut)
	}
}

// TestLogout: logging out revokes the token when its scopes allow, and
// forgets the profile either way.
func TestLogout(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.ClientAs("admin")
	for _, tc := range []struct {
		scopes  []string
		revoked bool
	}{{[]string{"courses:read", "tokens:write"}, true}, {[]string{"courses:read"}, false}} {
		token := apitest.Must(admin.PostAuthTokens(t.Context(), client.CreateInputBody{Name: "cli", Scopes: tc.scopes}))(t).Token
		s := newSession(t, false)
		s.login(env, token)
		code, out, errOut := s.run("", "logout")
		var res struct {
			Revoked bool   `json:"revoked"`
			Note    string `json:"note"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil || res.Revoked != tc.revoked || (res.Note == "") == !tc.revoked {
			t.Fatalf("logout with %v: %d %s %s", tc.scopes, code, out, errOut)
		}
		if code, _, _ := s.run("", "whoami"); code != lmsctl.ExitAuth {
			t.Fatalf("whoami after logout: exit %d", code)
		}
		_, err := env.Client("", token).GetAuthTokensCurrent(t.Context())
		if tc.revoked {
			apitest.Refused(t, err, 401)
		} else {
			apitest.OK(t, err)
		}
	}
}
