package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/tokens"
)

// TestScopeMatrix sends every registered route, with a token of the admin
// (who holds every permission) carrying each single scope, a plausible
// request about real objects, and fails on any 2xx the route's scope
// decision (x-lms-scope of its operation) does not allow. A refused scope
// is a 403.
func TestScopeMatrix(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		w := newMatrixWorld(t, env)
		admin := env.As("admin")
		// Issued through the service: the token routes' own limit (60 a
		// minute per user) is not what this test is about.
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		secrets := map[string]string{}
		for _, s := range tokens.Scopes {
			created, err := env.Server.Tokens.Issue(context.Background(), tenant, admin.ID, tokens.NewToken{Name: s.Name,
				Scopes: []string{s.Name}})
			if err != nil {
				t.Fatal(err)
			}
			secrets[s.Name] = created.Secret
		}
		sent := 0
		for _, route := range httpx.Routes(env.Server.API) {
			method, path, _ := strings.Cut(route, " ")
			op := httpx.OperationOf(env.Server.API, method, path)
			ext, _ := op.Extensions["x-lms-scope"].(string)
			if ext == "" {
				t.Errorf("%s has no x-lms-scope", route)
			}
			for _, s := range tokens.Scopes {
				allowed := ext == "any" || (ext != "none" && tokens.Has([]string{s.Name}, ext))
				if allowed && method != "GET" {
					continue
				}
				req := w.request(t, route)
				req.Token = secrets[s.Name]
				res := env.Do(req)
				sent++
				if allowed {
					// Reads are safe to send with the allowed scope: the
					// token must get past the scope check.
					if msg := res.String("message"); strings.HasPrefix(msg, "This token lacks") || strings.HasPrefix(msg, "This route does not accept") {
						t.Errorf("%s refused a token with %s: %s", route, s.Name, res.Body)
					}
					continue
				}
				if res.Status >= 200 && res.Status < 300 {
					t.Errorf("%s answered %d to a token with only %s: %s", route, res.Status, s.Name, res.Body)
				}
				// The platform API answers 404 on this tenant's host before any
				// scope is read; internal/platformadmin tests its scopes.
				if strings.HasPrefix(path, "/api/") && !strings.HasPrefix(path, "/api/platform/") && res.Status != 403 {
					t.Errorf("%s answered %d to a token with only %s, want 403: %s", route, res.Status, s.Name, res.Body)
				}
			}
		}
		if routes := len(httpx.Routes(env.Server.API)); sent < routes*len(tokens.Scopes)/2 {
			t.Fatalf("only %d requests sent for %d routes", sent, routes)
		}
	})
}
