package tokens_test

import (
	"errors"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestChildNeverExceedsParent: a token created with a scoped token
// expires with it at the latest, is limited at most like it, and is
// revoked with it (transitively, at once, though it was just used and
// cached).
func TestChildNeverExceedsParent(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.UserClient(env.NewUser("student"))
		expires := env.Clock.Now().Add(2 * time.Minute).UTC().Truncate(time.Second)
		parentID, parent := create(t, u, client.CreateInputBody{Name: "agent", Scopes: []string{"tokens:write", "profile:read"},
			ExpiresAt: &expires, RateLimitPerMinute: client.Ptr(int64(5))})
		asParent := env.Client("", parent)

		// Asking for nothing gets the parent's expiry and limit.
		childID, child := create(t, asParent, client.CreateInputBody{Name: "child", Scopes: []string{"tokens:write", "profile:read"}})
		asChild := env.Client("", child)
		cur := apitest.Must(asChild.GetAuthTokensCurrent(ctx))(t)
		if cur.ExpiresAt == nil || !cur.ExpiresAt.Equal(expires) || cur.RateLimitPerMinute == nil || *cur.RateLimitPerMinute != 5 {
			t.Fatalf("child: %+v", cur)
		}
		// Asking for more is refused; asking for less is kept.
		_, err := asParent.PostAuthTokens(ctx, client.CreateInputBody{Name: "later", Scopes: []string{"profile:read"},
			ExpiresAt: client.Ptr(expires.Add(time.Second))})
		if e := apitest.Refused(t, err, 422); len(e.Errors["expires_at"]) == 0 {
			t.Fatalf("later expiry: %v", e)
		}
		_, err = asParent.PostAuthTokens(ctx, client.CreateInputBody{Name: "faster", Scopes: []string{"profile:read"},
			RateLimitPerMinute: client.Ptr(int64(6))})
		if e := apitest.Refused(t, err, 422); len(e.Errors["rate_limit_per_minute"]) == 0 {
			t.Fatalf("higher limit: %v", e)
		}
		sooner := env.Clock.Now().Add(time.Minute).UTC().Truncate(time.Second)
		slower := apitest.Must(asParent.PostAuthTokens(ctx, client.CreateInputBody{Name: "slower", Scopes: []string{"profile:read"},
			ExpiresAt: &sooner, RateLimitPerMinute: client.Ptr(int64(2))}))(t)
		if slower.ExpiresAt == nil || !slower.ExpiresAt.Equal(sooner) || slower.RateLimitPerMinute == nil || *slower.RateLimitPerMinute != 2 {
			t.Fatalf("narrower child: %+v", slower)
		}
		// The child's limit is the parent's: 5 a minute, one of which read
		// its expiry above.
		for range 4 {
			apitest.Must(asChild.GetProfileMe(ctx))(t)
		}
		_, err = asChild.GetProfileMe(ctx)
		apitest.Refused(t, err, 429)
		env.Clock.Advance(time.Minute)

		// A grandchild, used once so that its principal is cached.
		grandID, grand := create(t, asChild, client.CreateInputBody{Name: "grandchild", Scopes: []string{"profile:read"}})
		apitest.Must(env.Client("", grand).GetProfileMe(ctx))(t)
		apitest.Must(asChild.GetProfileMe(ctx))(t)
		// Revoking the parent revokes both at once.
		apitest.OK(t, u.DeleteAuthTokensID(ctx, parentID))
		for name, raw := range map[string]string{"parent": parent, "child": child, "grandchild": grand} {
			_, err := env.Client("", raw).GetProfileMe(ctx)
			if e := (*client.Error)(nil); !errors.As(err, &e) || e.Status != 401 || e.Message != "Token revoked." {
				t.Errorf("%s after the parent's revocation: %v", name, err)
			}
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE id IN ($1, $2) AND revoked_at IS NULL`, childID, grandID); n != 0 {
			t.Errorf("%d descendants still live in the database", n)
		}
		// A revoked token creates nothing.
		_, err = asChild.PostAuthTokens(ctx, client.CreateInputBody{Name: "late", Scopes: []string{"profile:read"}})
		apitest.Refused(t, err, 401)
	})
}

// TestChildExpiresWithParent: a child asking for no expiry stops working
// when its parent does, and an admin's revocation cascades too.
func TestChildExpiresWithParent(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.UserClient(env.NewUser("student"))
		_, parent := create(t, u, client.CreateInputBody{Name: "agent", Scopes: []string{"tokens:write", "profile:read"},
			ExpiresAt: client.Ptr(env.Clock.Now().Add(2 * time.Minute).UTC().Truncate(time.Second))})
		_, child := create(t, env.Client("", parent), client.CreateInputBody{Name: "child", Scopes: []string{"profile:read"}})
		asChild := env.Client("", child)
		apitest.Must(asChild.GetProfileMe(ctx))(t)
		env.Clock.Advance(2 * time.Minute)
		_, err := asChild.GetProfileMe(ctx)
		if e := apitest.Refused(t, err, 401); e.Message != "Token expired." {
			t.Fatalf("child after the parent expired: %v", e)
		}

		admin := env.ClientAs("admin")
		otherID, other := create(t, u, client.CreateInputBody{Name: "agent", Scopes: []string{"tokens:write", "profile:read"}})
		_, otherChild := create(t, env.Client("", other), client.CreateInputBody{Name: "child", Scopes: []string{"profile:read"}})
		asOtherChild := env.Client("", otherChild)
		apitest.Must(asOtherChild.GetProfileMe(ctx))(t)
		apitest.OK(t, admin.DeleteAdminTokensID(ctx, otherID))
		_, err = asOtherChild.GetProfileMe(ctx)
		apitest.Refused(t, err, 401)
	})
}
