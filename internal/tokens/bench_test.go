package tokens_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

// benchRequests serves GET /api/profile/settings (an answer that does not
// depend on the permissions a token keeps) with the bearer through the
// server's handler (no network), warm, and reports the median besides the
// mean. Goals (README): a scoped token costs at most 10 µs more than a
// signed token; with rate_limit_per_minute counted in Redis, at most
// 0.3 ms more at the median.
//
// limited runs the fake clock a minute ahead every 5000 requests, so that
// a token limited to 6000 a minute is counted but never refused.
func benchRequests(b *testing.B, env *apitest.Env, bearer string, limited bool) {
	req := httptest.NewRequest(http.MethodGet, "/api/profile/settings", nil)
	req.Host = env.Host
	req.Header.Set("Authorization", "Bearer "+bearer)
	serve := func() int {
		rec := httptest.NewRecorder()
		env.Server.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	if code := serve(); code != 200 {
		b.Fatalf("warm-up: %d", code)
	}
	times := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if limited && i%5000 == 4999 {
			env.Clock.Advance(time.Minute)
		}
		start := time.Now()
		if code := serve(); code != 200 {
			b.Fatalf("status %d", code)
		}
		if len(times) < cap(times) {
			times = append(times, time.Since(start))
		}
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
}

func benchEnv(b *testing.B, redisURL string) (*apitest.Env, *apitest.User) {
	env := apitest.New(b, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.RedisURL = redisURL }})
	return env, env.As("admin")
}

func newSecret(b *testing.B, env *apitest.Env, bearer string, body client.CreateInputBody) string {
	return apitest.Must(env.Client("", bearer).PostAuthTokens(b.Context(), body))(b).Token
}

// BenchmarkRequestSignedToken is the baseline: a signed access token.
func BenchmarkRequestSignedToken(b *testing.B) {
	env, admin := benchEnv(b, "")
	benchRequests(b, env, admin.Token, false)
}

// BenchmarkRequestScopedToken is the same request with a scoped token:
// secret check, scope check and the agent audit entry.
func BenchmarkRequestScopedToken(b *testing.B) {
	env, admin := benchEnv(b, "")
	benchRequests(b, env, newSecret(b, env, admin.Token, client.CreateInputBody{Name: "bench", Scopes: []string{"profile:read"}}), false)
}

// BenchmarkRequestSignedTokenRedis and BenchmarkRequestScopedTokenLimitRedis
// compare, with Redis configured, a signed token and a scoped token whose
// rate_limit_per_minute is counted in Redis (LMS_TEST_REDIS_URL).
func BenchmarkRequestSignedTokenRedis(b *testing.B) {
	env, admin := benchEnv(b, redisURL(b))
	benchRequests(b, env, admin.Token, false)
}

func BenchmarkRequestScopedTokenLimitRedis(b *testing.B) {
	env, admin := benchEnv(b, redisURL(b))
	benchRequests(b, env, newSecret(b, env, admin.Token, client.CreateInputBody{Name: "bench", Scopes: []string{"profile:read"},
		RateLimitPerMinute: client.Ptr(int64(6000))}), true)
}

func redisURL(b *testing.B) string {
	u := os.Getenv(redisconntest.EnvURL)
	if u == "" {
		b.Skipf("%s is not set", redisconntest.EnvURL)
	}
	return u
}
