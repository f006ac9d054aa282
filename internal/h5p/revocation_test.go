package h5p_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/client"
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
		ctx, admin := t.Context(), env.ClientAs("admin")
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

		t.Run("logout", func(t *testing.T) {
			u := env.NewUser("student")
			known(t, u.Token, u.ID)
			apitest.OK(t, env.UserClient(u).PostAuthLogout(ctx))
			anonymous(t, env.Host, u.Token)
		})
		t.Run("block", func(t *testing.T) {
			u := env.NewUser("student")
			known(t, u.Token, u.ID)
			apitest.Must(admin.PatchAdminUsersID(ctx, u.ID, client.UserChangeBody{IsActive: client.Ptr(false)}))(t)
			anonymous(t, env.Host, u.Token)
		})
		t.Run("deletion", func(t *testing.T) {
			u := env.NewUser("student")
			known(t, u.Token, u.ID)
			apitest.OK(t, admin.DeleteAdminUsersID(ctx, u.ID))
			anonymous(t, env.Host, u.Token)
		})
		t.Run("password change", func(t *testing.T) {
			u := env.NewUser("student")
			other, _ := env.Login(env.Host, u.Email, u.Password)
			known(t, other, u.ID)
			apitest.OK(t, env.UserClient(u).PutProfilePassword(ctx, client.PasswordInputBody{CurrentPassword: u.Password,
				NewPassword: "changed-password", NewPasswordConfirmation: "changed-password"}))
			anonymous(t, env.Host, other)
			known(t, u.Token, u.ID)
		})
		t.Run("role change", func(t *testing.T) {
			u := env.NewUser("tutor")
			if perms := strs(whoami(env.Host, u.Token).Get("data.permissions")); !slices.Contains(perms, "h5p_create") {
				t.Fatalf("tutor's permissions %v", perms)
			}
			apitest.Must(admin.PatchAdminUsersID(ctx, u.ID, client.UserChangeBody{Roles: []string{"student"}}))(t)
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
