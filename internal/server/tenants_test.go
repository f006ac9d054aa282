package server_test

import (
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
)

// A tenant pushed out of the warm tenants has its idle connections closed,
// and one idle for LMS_TENANT_IDLE is closed: both serve their next
// requests as before.
func TestColdAndReopenedTenantsServe(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.TenantWarm = 1 }})
			admin := env.As("admin")
			check := func(when string) {
				t.Helper()
				me := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: admin.Token})
				if me.Status != 200 || me.String("data.email") != admin.Email {
					t.Fatalf("%s: profile %d %s", when, me.Status, me.Body)
				}
				list := env.Do(apitest.Request{Method: "GET", Path: "/api/courses"})
				if list.Status != 200 {
					t.Fatalf("%s: catalogue %d %s", when, list.Status, list.Body)
				}
			}
			check("warm")
			tn, release := env.OpenTenant(env.Tenant)
			release()
			env.AddTenant("other.test")
			if res := env.Do(apitest.Request{Method: "GET", Path: "/api/courses", Host: "other.test"}); res.Status != 200 {
				t.Fatalf("other tenant: %d %s", res.Status, res.Body)
			}
			if n := tn.DB.Stats().OpenConnections; n != 0 {
				t.Fatalf("the tenant pushed out of the warm ones keeps %d connections", n)
			}
			check("cold")
			env.Server.Tenants.Close(env.Tenant.ID)
			check("reopened")
		})
	}
}
