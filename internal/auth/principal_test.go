package auth_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestPrincipalFollowsChanges uses each token once (so its principal is
// cached), changes what the principal is built from, and checks that the
// very next request sees the change.
func TestPrincipalFollowsChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		users := "/api/admin/users"
		profile := func(token string) *apitest.Response {
			return env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: token})
		}
		patch := func(id int64, body map[string]any) {
			t.Helper()
			env.Call(t, 200, "PATCH", users+"/"+strconv.FormatInt(id, 10), admin.Token, body)
		}

		t.Run("role change", func(t *testing.T) {
			u := env.NewUser("tutor")
			env.Call(t, 403, "GET", users, u.Token, nil)
			patch(u.ID, map[string]any{"roles": []string{"admin"}})
			env.Call(t, 200, "GET", users, u.Token, nil)
			patch(u.ID, map[string]any{"roles": []string{"student"}})
			env.Call(t, 403, "GET", users, u.Token, nil)
			if res := profile(u.Token); res.Status != 200 || !has(res, "data.permissions", "user_read_self") ||
				has(res, "data.permissions", "user_list") {
				t.Errorf("profile after demotion: %d %s", res.Status, res.Body)
			}
		})
		t.Run("block", func(t *testing.T) {
			u := env.NewUser("student")
			env.Call(t, 200, "GET", "/api/profile/me", u.Token, nil)
			patch(u.ID, map[string]any{"is_active": false})
			env.Call(t, 401, "GET", "/api/profile/me", u.Token, nil)
		})
		t.Run("logout", func(t *testing.T) {
			u := env.NewUser("student")
			env.Call(t, 200, "GET", "/api/profile/me", u.Token, nil)
			env.Call(t, 200, "POST", "/api/auth/logout", u.Token, nil)
			env.Call(t, 401, "GET", "/api/profile/me", u.Token, nil)
		})
		t.Run("deletion", func(t *testing.T) {
			u := env.NewUser("student")
			env.Call(t, 200, "GET", "/api/profile/me", u.Token, nil)
			env.Call(t, 200, "DELETE", users+"/"+strconv.FormatInt(u.ID, 10), admin.Token, nil)
			env.Call(t, 401, "GET", "/api/profile/me", u.Token, nil)
		})
		t.Run("password change", func(t *testing.T) {
			u := env.NewUser("student")
			other, _ := env.Login(env.Host, u.Email, u.Password)
			env.Call(t, 200, "GET", "/api/profile/me", other, nil)
			env.Call(t, 200, "PUT", "/api/profile/password", u.Token, map[string]any{"current_password": u.Password,
				"new_password": "changed-password", "new_password_confirmation": "changed-password"})
			env.Call(t, 401, "GET", "/api/profile/me", other, nil)
		})
		t.Run("tenant recreated", func(t *testing.T) {
			rec := env.AddTenant("recreated.test")
			token, _ := env.Login(rec.Hosts[0], "admin@recreated.test", "admin-password")
			me := apitest.Request{Method: "GET", Path: "/api/profile/me", Host: rec.Hosts[0], Token: token}
			if got := env.Do(me).Status; got != 200 {
				t.Fatalf("before: %d", got)
			}
			if err := env.Server.Tenants.Recreate(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			if got := env.Do(me).Status; got != 401 {
				t.Errorf("after the recreation: %d, want 401", got)
			}
		})
	})
}

// has reports whether the list at path holds want.
func has(res *apitest.Response, path, want string) bool {
	list, _ := res.Get(path).([]any)
	for _, v := range list {
		if v == want {
			return true
		}
	}
	return false
}
