package auth_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestPrincipalFollowsChanges uses each token once (so its principal is
// cached), changes what the principal is built from, and checks that the
// very next request sees the change.
func TestPrincipalFollowsChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		users := func(c *client.Client) error {
			_, err := c.GetAdminUsers(ctx, client.GetAdminUsersParams{})
			return err
		}
		profile := func(c *client.Client) (*client.Profile, error) { return c.GetProfileMe(ctx) }
		patch := func(t *testing.T, id int64, body client.UserChangeBody) {
			t.Helper()
			apitest.Must(admin.PatchAdminUsersID(ctx, id, body))(t)
		}

		t.Run("role change", func(t *testing.T) {
			u := env.NewUser("tutor")
			c := env.UserClient(u)
			apitest.Refused(t, users(c), 403)
			patch(t, u.ID, client.UserChangeBody{Roles: []string{"admin"}})
			apitest.OK(t, users(c))
			patch(t, u.ID, client.UserChangeBody{Roles: []string{"student"}})
			apitest.Refused(t, users(c), 403)
			if p, err := profile(c); err != nil || !slices.Contains(p.Permissions, "user_read_self") ||
				slices.Contains(p.Permissions, "user_list") {
				t.Errorf("profile after demotion: %+v %v", p, err)
			}
		})
		t.Run("block", func(t *testing.T) {
			u := env.NewUser("student")
			c := env.UserClient(u)
			apitest.Must(profile(c))(t)
			patch(t, u.ID, client.UserChangeBody{IsActive: client.Ptr(false)})
			_, err := profile(c)
			apitest.Refused(t, err, 401)
		})
		t.Run("logout", func(t *testing.T) {
			c := env.UserClient(env.NewUser("student"))
			apitest.Must(profile(c))(t)
			apitest.OK(t, c.PostAuthLogout(ctx))
			_, err := profile(c)
			apitest.Refused(t, err, 401)
		})
		t.Run("deletion", func(t *testing.T) {
			u := env.NewUser("student")
			c := env.UserClient(u)
			apitest.Must(profile(c))(t)
			apitest.OK(t, admin.DeleteAdminUsersID(ctx, u.ID))
			_, err := profile(c)
			apitest.Refused(t, err, 401)
		})
		t.Run("password change", func(t *testing.T) {
			u := env.NewUser("student")
			token, _ := env.Login(env.Host, u.Email, u.Password)
			other := env.Client("", token)
			apitest.Must(profile(other))(t)
			apitest.OK(t, env.UserClient(u).PutProfilePassword(ctx, client.PasswordInputBody{CurrentPassword: u.Password,
				NewPassword: "changed-password", NewPasswordConfirmation: "changed-password"}))
			_, err := profile(other)
			apitest.Refused(t, err, 401)
		})
		t.Run("tenant recreated", func(t *testing.T) {
			rec := env.AddTenant("recreated.test")
			token, _ := env.Login(rec.Hosts[0], "admin@recreated.test", "admin-password")
			c := env.Client(rec.Hosts[0], token)
			if _, err := profile(c); err != nil {
				t.Fatalf("before: %v", err)
			}
			if err := env.Server.Tenants.Recreate(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			if _, err := profile(c); client.StatusOf(err) != 401 {
				t.Errorf("after the recreation: %v, want 401", err)
			}
		})
	})
}

// TestConcurrentFirstRequests: a class whose tokens the server has not
// met yet sends its first requests at once, so that on PostgreSQL their
// tokens and users are read in shared queries. Each request is answered
// as its own user with its own roles, and a revoked token is refused.
func TestConcurrentFirstRequests(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		roles := []string{"student", "tutor", "admin", "student"}
		type caller struct {
			u       *apitest.User
			role    string
			revoked bool
		}
		var callers []caller
		for i := range 32 {
			c := caller{u: env.NewUser(roles[i%len(roles)]), role: roles[i%len(roles)], revoked: i%5 == 0}
			if c.revoked {
				apitest.OK(t, env.UserClient(c.u).PostAuthLogout(ctx))
			}
			callers = append(callers, c)
		}
		apitest.AtOnce(t, len(callers), func(i int) error {
			c := callers[i]
			p, err := env.UserClient(c.u).GetProfileMe(ctx)
			if c.revoked {
				if client.StatusOf(err) != 401 {
					return fmt.Errorf("%s after logout: %v, want 401", c.u.Email, err)
				}
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %v", c.u.Email, err)
			}
			if p.Email != c.u.Email || !slices.Equal(p.Roles, []string{c.role}) {
				return fmt.Errorf("%s (%s) was answered as %s %v", c.u.Email, c.role, p.Email, p.Roles)
			}
			return nil
		})
	})
}
