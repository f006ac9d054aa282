package tokens_test

import (
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestAdminListingsNeedAdminScopes: a user-level scope (progress:read is
// "the user's own progress", notifications:read the user's own
// notifications) never opens an admin listing of every user's records,
// even on an admin's token; users:read does.
func TestAdminListingsNeedAdminScopes(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		learner := env.NewUser("student")
		_, progress := create(t, env, admin.Token, map[string]any{"name": "p", "scopes": []string{"progress:read"}})
		_, notes := create(t, env, admin.Token, map[string]any{"name": "n", "scopes": []string{"notifications:write"}})
		_, users := create(t, env, admin.Token, map[string]any{"name": "u", "scopes": []string{"users:read"}})
		listings := []string{"/api/admin/certificates", "/api/admin/notifications/all",
			"/api/admin/notifications/" + strconv.FormatInt(learner.ID, 10)}
		for _, path := range listings {
			for name, secret := range map[string]string{"progress:read": progress, "notifications:write": notes} {
				if res := env.Do(apitest.Request{Method: "GET", Path: path, Token: secret}); res.Status != 403 {
					t.Errorf("GET %s with %s: %d %.200s", path, name, res.Status, res.Body)
				}
			}
			env.Call(t, 200, "GET", path, users, nil)
			env.Call(t, 200, "GET", path, admin.Token, nil)
		}
		// The user-level scopes still open the caller's own records.
		env.Call(t, 200, "GET", "/api/certificates", progress, nil)
		env.Call(t, 200, "GET", "/api/admin/notifications", notes, nil)
		env.Call(t, 200, "GET", "/api/notifications", notes, nil)
	})
}
