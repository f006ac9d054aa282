package h5p_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
)

// TestRevocationEndsCachedProfile caches each token's profile with one H5P
// request, ends or changes what it stands for through the API, and checks
// that the very next H5P request sees it, with no wait for the profile
// cache. It runs in process on each backend, and on SQLite with Redis when
// LMS_TEST_REDIS_URL is set.
func TestRevocationEndsCachedProfile(t *testing.T) {
	run := func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		whoami := func(host, token string) *apitest.Response {
			return get(env, host, "/h5p/whoami", token, nil)
		}
		known := func(t *testing.T, token string, id int64) {
			t.Helper()
			if got := whoami(env.Host, token).String("data.id"); got != strconv.FormatInt(id, 10) {
				t.Fatalf("before: caller %q, want %d", got, id)
			}
		}
		anonymous := func(t *testing.T, host, token string) {
			t.Helper()
			if got := whoami(host, token).String("data.id"); got != "anonymous" {
				t.Errorf("after: caller %q, want anonymous", got)
			}
		}
		user := func(id int64) string { return "/api/admin/users/" + strconv.FormatInt(id, 10) }

		t.Run("logout", func(t *testing.T) {
			u := env.NewUser("student")
			known(t, u.Token, u.ID)
			env.Call(t, 200, "POST", "/api/auth/logout", u.Token, nil)
			anonymous(t, env.Host, u.Token)
		})
		t.Run("block", func(t *testing.T) {
			u := env.NewUser("student")
			known(t, u.Token, u.ID)
			env.Call(t, 200, "PATCH", user(u.ID), admin.Token, map[string]any{"is_active": false})
			anonymous(t, env.Host, u.Token)
		})
		t.Run("deletion", func(t *testing.T) {
			u := env.NewUser("student")
			known(t, u.Token, u.ID)
			env.Call(t, 200, "DELETE", user(u.ID), admin.Token, nil)
			anonymous(t, env.Host, u.Token)
		})
		t.Run("password change", func(t *testing.T) {
			u := env.NewUser("student")
			other, _ := env.Login(env.Host, u.Email, u.Password)
			known(t, other, u.ID)
			env.Call(t, 200, "PUT", "/api/profile/password", u.Token, map[string]any{"current_password": u.Password,
				"new_password": "changed-password", "new_password_confirmation": "changed-password"})
			anonymous(t, env.Host, other)
			known(t, u.Token, u.ID)
		})
		t.Run("role change", func(t *testing.T) {
			u := env.NewUser("tutor")
			if perms := strs(whoami(env.Host, u.Token).Get("data.permissions")); !slices.Contains(perms, "h5p_create") {
				t.Fatalf("tutor's permissions %v", perms)
			}
			env.Call(t, 200, "PATCH", user(u.ID), admin.Token, map[string]any{"roles": []string{"student"}})
			if perms := strs(whoami(env.Host, u.Token).Get("data.permissions")); slices.Contains(perms, "h5p_create") {
				t.Errorf("the demoted user's permissions %v", perms)
			}
		})
		t.Run("tenant recreated", func(t *testing.T) {
			rec := env.AddTenant("h5p-recreated.test")
			token, id := env.Login(rec.Hosts[0], "admin@h5p-recreated.test", "admin-password")
			if got := whoami(rec.Hosts[0], token).String("data.id"); got != strconv.FormatInt(id, 10) {
				t.Fatalf("before: caller %q", got)
			}
			if err := env.Server.Tenants.Recreate(context.Background(), rec); err != nil {
				t.Fatal(err)
			}
			anonymous(t, rec.Hosts[0], token)
		})
	}
	apitest.Each(t, run)
	if url := os.Getenv("LMS_TEST_REDIS_URL"); url != "" {
		t.Run("sqlite with redis", func(t *testing.T) {
			run(t, apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.RedisURL = url }}))
		})
	}
}
