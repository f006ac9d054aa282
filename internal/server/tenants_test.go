package server_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
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
			ctx, admin := t.Context(), env.As("admin")
			check := func(when string) {
				t.Helper()
				me, err := env.UserClient(admin).GetProfileMe(ctx)
				if err != nil || me.Email != admin.Email {
					t.Fatalf("%s: profile %v %+v", when, err, me)
				}
				if _, err := env.ClientAs("").GetCourses(ctx, client.GetCoursesParams{}); err != nil {
					t.Fatalf("%s: catalogue %v", when, err)
				}
			}
			check("warm")
			tn, release := env.OpenTenant(env.Tenant)
			release()
			env.AddTenant("other.test")
			if _, err := env.Client("other.test", "").GetCourses(ctx, client.GetCoursesParams{}); err != nil {
				t.Fatalf("other tenant: %v", err)
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
