package server

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/limit"
)

// TestScopePolicy reads the registered operations and fails while one has
// no Scope (the rule a scoped token meets, declared on its httpx.Route),
// and checks that every operation of the API description states its rule.
func TestScopePolicy(t *testing.T) {
	s := &Server{Config: &config.Config{}, Clock: clock.System{}, Limiter: limit.NewMemory(nil),
		Log: slog.New(slog.DiscardHandler)}
	s.buildAPI()
	defer s.Audit.Close()
	routes := httpx.Routes(s.API)
	if len(routes) < 200 {
		t.Fatalf("only %d routes registered", len(routes))
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		o := httpx.OperationOf(s.API, method, path)
		// An unknown scope name does not get this far: describing the
		// API panics on it.
		scope := httpx.ScopeOf(o)
		if scope == "" {
			t.Errorf("route %s has no Scope: give its httpx.Route one (a scope, httpx.AnyToken or httpx.NoTokens)", route)
			continue
		}
		if o.Extensions["x-lms-scope"] != string(scope) || !strings.Contains(o.Description, "Scoped tokens: ") {
			t.Errorf("%s: x-lms-scope %v, description %q", route, o.Extensions["x-lms-scope"], o.Description)
		}
		if _, ok := o.Responses["403"]; !ok {
			t.Errorf("%s does not describe its 403", route)
		}
	}
}
