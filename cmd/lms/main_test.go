package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func setEnv(t *testing.T) string {
	dir := t.TempDir()
	t.Setenv("LMS_DATA_DIR", dir)
	t.Setenv("LMS_PASSWORD_COST", "test")
	t.Setenv("LMS_LOG_LEVEL", "error")
	t.Setenv("LMS_ADMIN_PASSWORD", "platform-password")
	t.Setenv("LMS_DATABASE_URL", "")
	t.Setenv("LMS_REDIS_URL", "")
	t.Setenv("LMS_BLOB_URL", "")
	t.Setenv("LMS_WEB_ADDR", "127.0.0.1:0")
	t.Setenv("LMS_CONTENT_ADDR", "127.0.0.1:0")
	return dir
}

func lms(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, &out)
	return out.String(), err
}

func TestOperatorCommands(t *testing.T) {
	setEnv(t)
	out, err := lms(t, "tenant", "add", "--host", "Acme.test", "--admin-email", "boss@acme.test", "--admin-password", "boss-password")
	if err != nil || !strings.Contains(out, "added for host acme.test") {
		t.Fatalf("tenant add: %v %q", err, out)
	}
	if _, err := lms(t, "tenant", "add", "--host", "acme.test"); err == nil {
		t.Fatal("a host may serve one tenant only")
	}
	out, err = lms(t, "tenant", "add", "--host", "gen.test")
	if err != nil || !strings.Contains(out, "admin: admin@gen.test / ") {
		t.Fatalf("generated password must be printed once: %v %q", err, out)
	}
	out, err = lms(t, "tenant", "list", "--json")
	var list []struct {
		Hosts    []string `json:"hosts"`
		Platform bool     `json:"platform"`
	}
	if err != nil || json.Unmarshal([]byte(out), &list) != nil || len(list) != 3 || !list[0].Platform || list[1].Hosts[0] != "acme.test" {
		t.Fatalf("tenant list: %v %q", err, out)
	}
	if out, err = lms(t, "tenant", "list"); err != nil || !strings.Contains(out, "HOSTS") {
		t.Fatalf("tenant list table: %v %q", err, out)
	}
	if _, err := lms(t, "user", "add", "--host", "acme.test", "--email", "s@acme.test", "--password", "student-pass", "--role", "student"); err != nil {
		t.Fatalf("user add: %v", err)
	}
	for _, bad := range [][]string{
		{"user", "add", "--host", "acme.test", "--email", "t@acme.test", "--password", "student-pass", "--role", "owner"},
		{"user", "add", "--host", "acme.test", "--email", "s@acme.test", "--password", "student-pass", "--role", "student"},
		{"user", "add", "--host", "acme.test", "--email", "u@acme.test", "--password", "short", "--role", "student"},
		{"user", "add", "--host", "nowhere.test", "--email", "u@acme.test", "--password", "long-enough", "--role", "student"},
		{"frobnicate"},
	} {
		if _, err := lms(t, bad...); err == nil {
			t.Errorf("lms %v must fail", bad)
		}
	}
	if out, err = lms(t, "migrate"); err != nil || !strings.Contains(out, "3 tenant(s)") {
		t.Fatalf("migrate: %v %q", err, out)
	}
	out, err = lms(t, "openapi")
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if err != nil || json.Unmarshal([]byte(out), &doc) != nil || !strings.HasPrefix(doc.OpenAPI, "3.1") || len(doc.Paths) < 40 {
		t.Fatalf("openapi: %v %.200q", err, out)
	}
}

// A tenant added by the CLI while `lms serve` runs is served at once.
func TestTenantAddedWhileServing(t *testing.T) {
	setEnv(t)
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
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()
	call := func(host, method, path, body string) int {
		req, _ := http.NewRequest(method, "http://"+addr+path, strings.NewReader(body))
		req.Host = host
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}
	deadline := time.Now().Add(10 * time.Second)
	for call("localhost", "GET", "/api/healthcheck", "") != 200 {
		if time.Now().After(deadline) {
			t.Fatal("serve did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := call("live.test", "GET", "/api/config", ""); got != 404 {
		t.Fatalf("before tenant add: %d", got)
	}
	if _, err := lms(t, "tenant", "add", "--host", "live.test", "--admin-email", "a@live.test", "--admin-password", "live-password"); err != nil {
		t.Fatal(err)
	}
	if got := call("live.test", "POST", "/api/auth/login", `{"email":"a@live.test","password":"live-password"}`); got != 200 {
		t.Fatalf("login on the new tenant: %d", got)
	}
}
