package device_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestDeviceTokenIsApproversChild: a device request approved with a
// scoped token gets a child of that token: its expiry and rate limit,
// and revoked with it.
func TestDeviceTokenIsApproversChild(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		tutor := env.UserClient(env.NewUser("tutor"))
		expires := env.Clock.Now().Add(time.Hour).UTC().Truncate(time.Second)
		parent := apitest.Must(tutor.PostAuthTokens(ctx, client.CreateInputBody{Name: "agent",
			Scopes: []string{"tokens:write", "courses:read"}, ExpiresAt: &expires, RateLimitPerMinute: client.Ptr(int64(7))}))(t)
		dc, uc := start(t, env, "courses:read")
		apitest.Must(approve(t, env.Client("", parent.Token), uc))(t)
		device := env.Client("", collect(t, env, dc))
		cur := apitest.Must(device.GetAuthTokensCurrent(ctx))(t)
		if cur.ExpiresAt == nil || !cur.ExpiresAt.Equal(expires) || cur.RateLimitPerMinute == nil || *cur.RateLimitPerMinute != 7 {
			t.Fatalf("device token: %+v", cur)
		}
		apitest.OK(t, tutor.DeleteAuthTokensID(ctx, parent.ID))
		_, err := device.GetAuthTokensCurrent(ctx)
		apitest.Refused(t, err, 401)
	})
}
