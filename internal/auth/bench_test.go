package auth_test

import (
	"context"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/auth"
)

// BenchmarkAuthenticate measures what every authenticated request pays
// once its token was seen: the verified-token lookup, the time checks and
// the cached principal (the first request reads token, user and roles from
// the tenant's database). Goal: ≤ 50 µs per request.
func BenchmarkAuthenticate(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	u := env.As("admin")
	t, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		now := env.Clock.Now()
		claims, err := auth.Parse(t, now, u.Token, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := auth.LoadPrincipal(ctx, t, now, claims); err != nil {
			b.Fatal(err)
		}
	}
}
