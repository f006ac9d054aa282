package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveForTest runs `lms serve` on a free port until the test ends and
// returns a function calling it with a host.
func serveForTest(t *testing.T) func(host, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	t.Setenv("LMS_API_ADDR", addr)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, &bytes.Buffer{}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	call := func(host, method, path, token, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		var out map[string]any
		json.Unmarshal(raw, &out)
		return res.StatusCode, out
	}
	deadline := time.Now().Add(10 * time.Second)
	for status, _ := call("localhost", "GET", "/api/healthcheck", "", ""); status != 200; status, _ = call("localhost", "GET", "/api/healthcheck", "", "") {
		if time.Now().After(deadline) {
			t.Fatal("serve did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return call
}

// The demo commands, with `lms demo reset` run beside a running server:
// the server's sessions end, though it has the tenant open.
func TestDemoCommands(t *testing.T) {
	setEnv(t)
	t.Setenv("LMS_PLATFORM_HOST", "localhost")
	t.Setenv("LMS_WEB_ADDR", "127.0.0.1:0")
	t.Setenv("LMS_CONTENT_ADDR", "127.0.0.1:0")
	t.Setenv("LMS_DEMO_CONTENT_DIR", "")
	t.Setenv("LMS_DEMO_FRONT_URL", "")
	t.Setenv("DEMO_MODE", "true")
	out, err := lms(t, "tenant", "add", "--host", "demo.test", "--demo", "--admin-password", "demo-admin-password")
	for _, want := range []string{"tenant 2 added for host demo.test", "demo tenant seeded: 4 course(s)",
		"demo front URL: http://demo.test:3000", "demo student: student@demo.local"} {
		if err != nil || !strings.Contains(out, want) {
			t.Fatalf("tenant add --demo: %v; %q lacks %q", err, out, want)
		}
	}
	if _, err := lms(t, "tenant", "add", "--host", "plain.test"); err != nil {
		t.Fatal(err)
	}

	call := serveForTest(t)
	status, body := call("demo.test", "POST", "/api/demo/login", "", `{"role":"student"}`)
	token, _ := body["data"].(map[string]any)["token"].(string)
	if status != 200 || token == "" {
		t.Fatalf("demo login: %d %v", status, body)
	}
	if status, _ := call("demo.test", "GET", "/api/profile/me", token, ""); status != 200 {
		t.Fatalf("profile before the reset: %d", status)
	}

	// Just seeded: without --force the reset refuses.
	if _, err := lms(t, "demo", "reset", "--host", "demo.test"); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("reset right after the seed: %v", err)
	}
	out, err = lms(t, "demo", "reset", "--host", "demo.test", "--force", "--wipe-files", "--recapture")
	if err != nil || !strings.Contains(out, "demo tenant demo.test reset:") || !strings.Contains(out, "new baseline") {
		t.Fatalf("demo reset: %v %q", err, out)
	}
	// The reset ran in another process and this test has no Redis, so the
	// server hears of it through no change feed: its cached principal of the
	// token lives out its 5 s, then the token fails (with Redis, or when the
	// server runs the reset itself, at once). Poll for that, bounded.
	for i := 0; ; i++ {
		status, _ := call("demo.test", "GET", "/api/profile/me", token, "")
		if status == 401 {
			break
		}
		if status != 200 || i == 100 {
			t.Fatalf("the server still takes a token issued before the reset: %d", status)
		}
		time.Sleep(100 * time.Millisecond)
	}
	status, body = call("demo.test", "GET", "/api/courses", "", "")
	if list, _ := body["data"].([]any); status != 200 || len(list) != 4 {
		t.Fatalf("catalogue after the reset: %d %v", status, body)
	}
	if status, _ := call("demo.test", "POST", "/api/auth/login", "", `{"email":"admin@demo.test","password":"demo-admin-password"}`); status != 200 {
		t.Fatalf("the tenant's admin lost its password: %d", status)
	}

	for _, bad := range [][]string{
		{"demo", "reset", "--host", "localhost", "--force"},
		{"demo", "reset", "--host", "plain.test", "--force"},
		{"demo", "reset", "--host", "nowhere.test", "--force"},
		{"demo", "reset", "--force"},
		{"demo", "frobnicate"},
	} {
		if _, err := lms(t, bad...); err == nil {
			t.Errorf("lms %v must fail", bad)
		}
	}
	if _, err := lms(t, "demo", "reset", "--host", "localhost", "--force"); err == nil || !strings.Contains(err.Error(), "platform tenant") {
		t.Errorf("platform tenant: %v", err)
	}
	t.Setenv("DEMO_MODE", "")
	if _, err := lms(t, "demo", "reset", "--host", "demo.test", "--force"); err == nil || !strings.Contains(err.Error(), "DEMO_MODE") {
		t.Errorf("reset with demo mode off: %v", err)
	}
}
