package device_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestDeviceTokenIsApproversChild: a device request approved with a
// scoped token gets a child of that token: its expiry and rate limit,
// and revoked with it.
func TestDeviceTokenIsApproversChild(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		tutor := env.NewUser("tutor")
		expires := env.Clock.Now().Add(time.Hour).UTC().Truncate(time.Second)
		res := env.Call(t, 201, "POST", "/api/auth/tokens", tutor.Token, map[string]any{"name": "agent",
			"scopes": []string{"tokens:write", "courses:read"}, "expires_at": expires.Format(time.RFC3339), "rate_limit_per_minute": 7})
		parentID, parent := res.String("data.id"), res.String("data.token")
		dc, uc := start(t, env, "courses:read")
		env.Call(t, 200, "POST", requestPath(uc, "approve"), parent, nil)
		secret := poll(t, env, dc, "").String("data.token")
		cur := env.Call(t, 200, "GET", "/api/auth/tokens/current", secret, nil)
		if at, err := time.Parse(time.RFC3339, cur.String("data.expires_at")); err != nil || !at.Equal(expires) ||
			cur.Number("data.rate_limit_per_minute") != 7 {
			t.Fatalf("device token: %s", cur.Body)
		}
		env.Call(t, 200, "DELETE", "/api/auth/tokens/"+parentID, tutor.Token, nil)
		env.Call(t, 401, "GET", "/api/auth/tokens/current", secret, nil)
	})
}
