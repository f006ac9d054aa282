package server

import (
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/limit"
)

// TestScopePolicy fails while a registered route has no scope decision, or
// the policy names a route that is not registered, and checks that every
// operation of the API description states its decision.
func TestScopePolicy(t *testing.T) {
	s := &Server{Config: &config.Config{}, Clock: clock.System{}, Limiter: limit.NewMemory(nil),
		Log: slog.New(slog.DiscardHandler)}
	s.buildAPI()
	defer s.Audit.Close()
	routes := httpx.Routes(s.API)
	for _, route := range routes {
		if _, ok := scopePolicy.Rule(route); !ok {
			t.Errorf("route %s has no scope decision in scopePolicy", route)
		}
	}
	for route := range scopePolicy {
		if !slices.Contains(routes, route) {
			t.Errorf("scopePolicy names %s, which is not registered", route)
		}
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		item := s.API.OpenAPI().Paths[path]
		o := item.Get
		switch method {
		case "POST":
			o = item.Post
		case "PUT":
			o = item.Put
		case "PATCH":
			o = item.Patch
		case "DELETE":
			o = item.Delete
		}
		rule, _ := scopePolicy.Rule(route)
		if o.Extensions["x-lms-scope"] != rule.Extension() || !strings.Contains(o.Description, "Scoped tokens: ") {
			t.Errorf("%s: x-lms-scope %v, description %q", route, o.Extensions["x-lms-scope"], o.Description)
		}
		if _, ok := o.Responses["403"]; !ok {
			t.Errorf("%s does not describe its 403", route)
		}
	}
}
