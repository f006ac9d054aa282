package tokens_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestChildNeverExceedsParent: a token created with a scoped token
// expires with it at the latest, is limited at most like it, and is
// revoked with it (transitively, at once, though it was just used and
// cached).
func TestChildNeverExceedsParent(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		expires := env.Clock.Now().Add(2 * time.Minute).UTC().Truncate(time.Second)
		parentID, parent := create(t, env, u.Token, map[string]any{"name": "agent", "scopes": []string{"tokens:write", "profile:read"},
			"expires_at": expires.Format(time.RFC3339), "rate_limit_per_minute": 5})

		// Asking for nothing gets the parent's expiry and limit.
		childID, child := create(t, env, parent, map[string]any{"name": "child", "scopes": []string{"tokens:write", "profile:read"}})
		cur := env.Call(t, 200, "GET", "/api/auth/tokens/current", child, nil)
		if at, err := time.Parse(time.RFC3339, cur.String("data.expires_at")); err != nil || !at.Equal(expires) ||
			cur.Number("data.rate_limit_per_minute") != 5 {
			t.Fatalf("child: %s", cur.Body)
		}
		// Asking for more is refused; asking for less is kept.
		later := expires.Add(time.Second).Format(time.RFC3339)
		res := env.Call(t, 422, "POST", "/api/auth/tokens", parent, map[string]any{"name": "later", "scopes": []string{"profile:read"},
			"expires_at": later})
		if res.Get("errors.expires_at") == nil {
			t.Fatalf("later expiry: %s", res.Body)
		}
		res = env.Call(t, 422, "POST", "/api/auth/tokens", parent, map[string]any{"name": "faster", "scopes": []string{"profile:read"},
			"rate_limit_per_minute": 6})
		if res.Get("errors.rate_limit_per_minute") == nil {
			t.Fatalf("higher limit: %s", res.Body)
		}
		sooner := env.Clock.Now().Add(time.Minute).UTC().Truncate(time.Second)
		res = env.Call(t, 201, "POST", "/api/auth/tokens", parent, map[string]any{"name": "slower", "scopes": []string{"profile:read"},
			"expires_at": sooner.Format(time.RFC3339), "rate_limit_per_minute": 2})
		if at, _ := time.Parse(time.RFC3339, res.String("data.expires_at")); !at.Equal(sooner) || res.Number("data.rate_limit_per_minute") != 2 {
			t.Fatalf("narrower child: %s", res.Body)
		}
		// The child's limit is the parent's: 5 a minute, one of which read
		// its expiry above.
		for range 4 {
			env.Call(t, 200, "GET", "/api/profile/me", child, nil)
		}
		env.Call(t, 429, "GET", "/api/profile/me", child, nil)
		env.Clock.Advance(time.Minute)

		// A grandchild, used once so that its principal is cached.
		grandID, grand := create(t, env, child, map[string]any{"name": "grandchild", "scopes": []string{"profile:read"}})
		env.Call(t, 200, "GET", "/api/profile/me", grand, nil)
		env.Call(t, 200, "GET", "/api/profile/me", child, nil)
		// Revoking the parent revokes both at once.
		env.Call(t, 200, "DELETE", "/api/auth/tokens/"+parentID, u.Token, nil)
		for name, raw := range map[string]string{"parent": parent, "child": child, "grandchild": grand} {
			if res := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: raw}); res.Status != 401 ||
				res.String("message") != "Token revoked." {
				t.Errorf("%s after the parent's revocation: %d %s", name, res.Status, res.Body)
			}
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE id IN ($1, $2) AND revoked_at IS NULL`, childID, grandID); n != 0 {
			t.Errorf("%d descendants still live in the database", n)
		}
		// A revoked token creates nothing.
		env.Call(t, 401, "POST", "/api/auth/tokens", child, map[string]any{"name": "late", "scopes": []string{"profile:read"}})
	})
}

// TestChildExpiresWithParent: a child asking for no expiry stops working
// when its parent does, and an admin's revocation cascades too.
func TestChildExpiresWithParent(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		_, parent := create(t, env, u.Token, map[string]any{"name": "agent", "scopes": []string{"tokens:write", "profile:read"},
			"expires_at": env.Clock.Now().Add(2 * time.Minute).UTC().Format(time.RFC3339)})
		_, child := create(t, env, parent, map[string]any{"name": "child", "scopes": []string{"profile:read"}})
		env.Call(t, 200, "GET", "/api/profile/me", child, nil)
		env.Clock.Advance(2 * time.Minute)
		if res := env.Call(t, 401, "GET", "/api/profile/me", child, nil); res.String("message") != "Token expired." {
			t.Fatalf("child after the parent expired: %s", res.Body)
		}

		admin := env.As("admin")
		otherID, other := create(t, env, u.Token, map[string]any{"name": "agent", "scopes": []string{"tokens:write", "profile:read"}})
		_, otherChild := create(t, env, other, map[string]any{"name": "child", "scopes": []string{"profile:read"}})
		env.Call(t, 200, "GET", "/api/profile/me", otherChild, nil)
		env.Call(t, 200, "DELETE", "/api/admin/tokens/"+otherID, admin.Token, nil)
		env.Call(t, 401, "GET", "/api/profile/me", otherChild, nil)
	})
}
