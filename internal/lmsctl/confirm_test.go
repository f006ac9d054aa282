package lmsctl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/ops"
)

// profiles writes a profiles file with two users' profiles and returns
// its path.
func profiles(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profiles.json")
	cfg := config{Current: "ada", Profiles: map[string]Profile{
		"ada": {Server: "http://lms.test", Token: "lms_pat_ada"},
		"bob": {Server: "http://lms.test", Token: "lms_pat_bob"},
	}}
	if err := cfg.save(path); err != nil {
		t.Fatal(err)
	}
	return path
}

// tampered changes the last character of a token, always to another one.
func tampered(token string) string {
	last := "0"
	if strings.HasSuffix(token, last) {
		last = "1"
	}
	return token[:len(token)-1] + last
}

func refusedWith(t *testing.T, err error, says string) {
	t.Helper()
	f, ok := err.(*Failure)
	if !ok || f.Code != "CONFIRMATION_INVALID" || !strings.Contains(f.Message, says) {
		t.Fatalf("want CONFIRMATION_INVALID saying %q, got %v", says, err)
	}
}

// TestConfirmationAcrossProcesses: a token issued by one server is
// redeemed by another reading the same profile (a client that starts a
// process per call), once, for the tool, arguments and user it names,
// before it expires.
func TestConfirmationAcrossProcesses(t *testing.T) {
	path := profiles(t)
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	first := &Confirmations{Path: path, Profile: "ada", Now: clock}
	args := `{"course":7}`
	token, expires, err := first.issue("delete-course", args)
	if err != nil || !expires.Equal(now.Add(ConfirmFor)) {
		t.Fatalf("issue: %v %v", expires, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profiles file: %v %v", st.Mode(), err)
	}
	raw, _ := os.ReadFile(path)
	if !strings.Contains(string(raw), `"key"`) || strings.Contains(string(raw), token) {
		t.Fatalf("the profile keeps the key, never the token: %s", raw)
	}

	second := &Confirmations{Path: path, Profile: "ada", Now: clock}
	refusedWith(t, second.redeem("delete-course", `{"course":8}`, token), "exactly these arguments")
	refusedWith(t, second.redeem("delete-admin-courses-id", args, token), "exactly these arguments")
	refusedWith(t, (&Confirmations{Path: path, Profile: "bob", Now: clock}).redeem("delete-course", args, token), "")
	refusedWith(t, second.redeem("delete-course", args, tampered(token)), "exactly these arguments")
	refusedWith(t, second.redeem("delete-course", args, "nonsense"), "malformed")
	if err := second.redeem("delete-course", args, token); err != nil {
		t.Fatalf("redeem in a second process: %v", err)
	}
	refusedWith(t, (&Confirmations{Path: path, Profile: "ada", Now: clock}).redeem("delete-course", args, token), "used already")

	// Expiry, and the spent ids are forgotten once they expire.
	late, _, err := first.issue("delete-course", args)
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(ConfirmFor)
	refusedWith(t, second.redeem("delete-course", args, late), "expired")
	fresh, _, _ := first.issue("delete-course", args)
	if err := second.redeem("delete-course", args, fresh); err != nil {
		t.Fatal(err)
	}
	var cfg config
	raw, _ = os.ReadFile(path)
	if err := json.Unmarshal(raw, &cfg); err != nil || len(cfg.Profiles["ada"].Confirm.Used) != 1 {
		t.Fatalf("used ids: %s", raw)
	}

	// The same profile name logged in again as another user: its token
	// and key change, so no earlier token acts.
	again, _, _ := first.issue("delete-course", args)
	cfg.Profiles["ada"] = Profile{Server: "http://lms.test", Token: "lms_pat_carol", Confirm: cfg.Profiles["ada"].Confirm}
	if err := cfg.save(path); err != nil {
		t.Fatal(err)
	}
	refusedWith(t, second.redeem("delete-course", args, again), "this profile's user")
}

// TestToolListsName: every operation the toolsets and the player's list
// name is in the registry, so a renamed operation cannot silently drop
// out of a toolset or become a tool.
func TestToolListsName(t *testing.T) {
	names := slices.Clone(playerRoutes)
	for _, reads := range toolsetReads {
		names = append(names, reads...)
	}
	for _, n := range names {
		if _, ok := ops.Find(n); !ok {
			t.Errorf("%s is not in the registry", n)
		}
	}
	for _, tk := range tasks {
		if _, ok := ops.Find(tk.name); ok {
			t.Errorf("the task %s has an operation's name", tk.name)
		}
	}
}
