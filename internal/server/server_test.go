package server_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/server"
)

// TestOpenAPIDescribesEveryRoute fails when a registered route is missing
// from /api/openapi.json or lacks a summary, or when a route needing a user
// does not declare its 401 and 403 answers.
func TestOpenAPIDescribesEveryRoute(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/openapi.json"})
	if res.Status != 200 {
		t.Fatalf("openapi.json: %d", res.Status)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.1") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	routes := httpx.Routes(env.Server.API)
	if len(routes) < 60 {
		t.Fatalf("only %d routes registered", len(routes))
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		raw, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s is not in /api/openapi.json", route)
			continue
		}
		var op struct {
			Summary   string                     `json:"summary"`
			Security  []map[string]any           `json:"security"`
			Responses map[string]json.RawMessage `json:"responses"`
		}
		json.Unmarshal(raw, &op)
		if op.Summary == "" {
			t.Errorf("%s has no summary", route)
		}
		// Public routes list the empty requirement (authentication optional).
		public := slices.ContainsFunc(op.Security, func(r map[string]any) bool { return len(r) == 0 })
		if len(op.Security) == 0 {
			t.Errorf("%s declares no security", route)
		} else if !public && (op.Responses["401"] == nil || op.Responses["403"] == nil) {
			t.Errorf("%s needs a user but does not declare 401 and 403", route)
		}
	}
	// The offline generator and the served document agree.
	offline, err := server.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var off struct {
		Paths map[string]any `json:"paths"`
	}
	json.Unmarshal(offline, &off)
	if len(off.Paths) != len(doc.Paths) {
		t.Fatalf("lms openapi has %d paths, the server %d", len(off.Paths), len(doc.Paths))
	}
}

func TestGeneralRoutes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "health", Method: "GET", Path: "/api/health", Status: 200,
				JSON: map[string]any{"success": true, "data.ok": true, "data.services.database": "ok", "data.services.blob": "ok"}},
			{Name: "healthcheck", Method: "GET", Path: "/api/healthcheck", Status: 200, JSON: map[string]any{"success": true}},
			{Name: "name", Method: "GET", Path: "/api/name", Status: 200, JSON: map[string]any{"data.name": "school.test"}},
			{Name: "events", Method: "GET", Path: "/api/events", Status: 200, JSON: map[string]any{"data.0.name": "AccountBlocked"}},
			{Name: "meta", Method: "GET", Path: "/api/meta", Status: 200,
				JSON: map[string]any{"data.name": "LMS", "data.version": server.Version, "data.modules.0.name": "auth",
					"data.modules.0.version": apitest.Present}},
			{Name: "config is public", Method: "GET", Path: "/api/config", Status: 200,
				JSON: map[string]any{"data.lms_auth.registration": "enabled"}},
			{Name: "unknown route", Method: "GET", Path: "/api/nothing-here", Status: 404},
		})
		if env.Backend == "postgres" && env.Server.Redis != nil {
			res := env.Do(apitest.Request{Method: "GET", Path: "/api/health"})
			if res.String("data.services.redis") != "ok" {
				t.Fatalf("health must check Redis when configured: %s", res.Body)
			}
		}
	})
}

func TestGeneralRoutesAreLimited(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	for i := 0; i < 60; i++ {
		if res := env.Do(apitest.Request{Method: "GET", Path: "/api/healthcheck"}); res.Status != 200 {
			t.Fatalf("call %d: %d", i, res.Status)
		}
	}
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/healthcheck"})
	if res.Status != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || res.Get("success") != false {
		t.Fatalf("61st call: %d %v %s", res.Status, res.Header, res.Body)
	}
	// Limits are counted per tenant host: another tenant is not affected.
	env.AddTenant("other.test")
	if res := env.Do(apitest.Request{Method: "GET", Path: "/api/healthcheck", Host: "other.test"}); res.Status != 200 {
		t.Fatalf("other tenant: %d", res.Status)
	}
}

func TestBodyLimitsAndContentType(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	big := `{"email":"` + strings.Repeat("a", 2<<20) + `","password":"x"}`
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/auth/login", Body: big, Type: "application/json"})
	if res.Status != http.StatusRequestEntityTooLarge || res.Get("success") != false {
		t.Fatalf("oversized body: %d %s", res.Status, res.Body)
	}
	res = env.Do(apitest.Request{Method: "POST", Path: "/api/auth/login", Body: "email=a", Type: "application/x-www-form-urlencoded"})
	if res.Status < 400 || res.Status >= 500 || res.Get("success") != false {
		t.Fatalf("wrong content type: %d %s", res.Status, res.Body)
	}
}
