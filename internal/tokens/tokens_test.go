package tokens_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/tokens"
)

// each runs fn on every backend, each time with its own Env whose clock
// starts in a minute of its own. On PostgreSQL the limits are counted in
// the shared test Redis, where every Env's tenant has the same host and
// the same user ids: without this, other tests' calls in the same minute
// would count against this one's limits.
func each(t *testing.T, fn func(t *testing.T, env *apitest.Env)) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		env.Clock.Advance(time.Duration(rand.Int64N(1<<20)) * time.Minute)
		fn(t, env)
	})
}

// create makes a scoped token through the API as the caller of bearer and
// returns its id and secret.
func create(t *testing.T, env *apitest.Env, bearer string, body map[string]any) (string, string) {
	t.Helper()
	res := env.Call(t, 201, "POST", "/api/auth/tokens", bearer, body)
	id, secret := res.String("data.id"), res.String("data.token")
	if id == "" || !strings.HasPrefix(secret, tokens.Prefix) {
		t.Fatalf("create: %s", res.Body)
	}
	return id, secret
}

func TestTokenLifecycle(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		tutor := env.NewUser("tutor")
		id, secret := create(t, env, tutor.Token, map[string]any{"name": "CLI", "scopes": []string{"courses:read", "profile:read"},
			"rate_limit_per_minute": 100})
		if n := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE secret_hash = $1`, tokens.HashSecret(secret)); n != 1 {
			t.Fatalf("stored hash rows = %d", n)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE secret_hash = $1`, secret); n != 0 {
			t.Fatal("the secret itself is stored")
		}
		cur := env.Call(t, 200, "GET", "/api/auth/tokens/current", secret, nil)
		if cur.String("data.id") != id || cur.String("data.name") != "CLI" || cur.Number("data.rate_limit_per_minute") != 100 ||
			cur.Get("data.token") != nil || cur.Get("data.secret_hash") != nil {
			t.Fatalf("current: %s", cur.Body)
		}
		me := env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		if me.Number("data.id") != float64(tutor.ID) {
			t.Fatalf("profile with the token: %s", me.Body)
		}
		list := env.Call(t, 200, "GET", "/api/auth/tokens", tutor.Token, nil)
		if list.String("data.0.id") != id || list.Get("data.1") != nil || list.Get("data.0.token") != nil {
			t.Fatalf("list: %s", list.Body)
		}
		// A signed token has no current scoped token.
		env.Call(t, 404, "GET", "/api/auth/tokens/current", tutor.Token, nil)
		// Another user cannot revoke it; its owner can, twice.
		env.Call(t, 404, "DELETE", "/api/auth/tokens/"+id, env.NewUser("tutor").Token, nil)
		env.Call(t, 200, "DELETE", "/api/auth/tokens/"+id, tutor.Token, nil)
		env.Call(t, 200, "DELETE", "/api/auth/tokens/"+id, tutor.Token, nil)
		res := env.Call(t, 401, "GET", "/api/auth/tokens/current", secret, nil)
		if res.String("message") != "Token revoked." {
			t.Fatalf("revoked: %s", res.Body)
		}
		if list := env.Call(t, 200, "GET", "/api/auth/tokens", tutor.Token, nil); list.Get("data.0") != nil {
			t.Fatalf("revoked token still listed: %s", list.Body)
		}
	})
}

func TestCreateRefusals(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		student := env.As("student")
		past := env.Clock.Now().Add(-time.Minute).Format(time.RFC3339)
		ok := map[string]any{"name": "x", "scopes": []string{"progress:read"}}
		with := func(k string, v any) map[string]any {
			b := map[string]any{}
			for key, val := range ok {
				b[key] = val
			}
			b[k] = v
			return b
		}
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous", Method: "POST", Path: "/api/auth/tokens", Body: ok, Status: 401},
			{Name: "unknown scope", As: "student", Method: "POST", Path: "/api/auth/tokens", Body: with("scopes", []string{"root"}),
				Status: 422, JSON: map[string]any{"errors.scopes.0": `The scope "root" does not exist.`}},
			{Name: "no scope", As: "student", Method: "POST", Path: "/api/auth/tokens", Body: with("scopes", []string{}), Status: 422},
			{Name: "empty name", As: "student", Method: "POST", Path: "/api/auth/tokens", Body: with("name", ""), Status: 422},
			{Name: "rate limit 0", As: "student", Method: "POST", Path: "/api/auth/tokens", Body: with("rate_limit_per_minute", 0),
				Status: 422, JSON: map[string]any{"errors.rate_limit_per_minute": apitest.Present}},
			{Name: "rate limit 6001", As: "student", Method: "POST", Path: "/api/auth/tokens", Body: with("rate_limit_per_minute", 6001),
				Status: 422},
			{Name: "rate limit 6000", As: "student", Method: "POST", Path: "/api/auth/tokens", Body: with("rate_limit_per_minute", 6000),
				Status: 201, JSON: map[string]any{"data.rate_limit_per_minute": 6000}},
			{Name: "expiry in the past", As: "student", Method: "POST", Path: "/api/auth/tokens", Body: with("expires_at", past),
				Status: 422, JSON: map[string]any{"errors.expires_at": apitest.Present}},
		})
		// A token cannot create a wider one, only one within its scopes.
		_, secret := create(t, env, student.Token, map[string]any{"name": "agent", "scopes": []string{"tokens:write", "progress:write"}})
		env.Call(t, 403, "POST", "/api/auth/tokens", secret, map[string]any{"name": "wider", "scopes": []string{"courses:read"}})
		create(t, env, secret, map[string]any{"name": "narrower", "scopes": []string{"progress:read"}})
	})
}

func TestMaxLiveTokens(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		env.Call(t, 200, "POST", "/api/admin/config", admin.Token,
			map[string]any{"config": []map[string]any{{"key": tokens.MaxPerUserKey, "value": 2}}})
		u := env.NewUser("student")
		body := map[string]any{"name": "n", "scopes": []string{"profile:read"}}
		first, _ := create(t, env, u.Token, body)
		create(t, env, u.Token, body)
		res := env.Call(t, 422, "POST", "/api/auth/tokens", u.Token, body)
		if res.Get("errors.tokens") == nil {
			t.Fatalf("over the maximum: %s", res.Body)
		}
		// A revoked token no longer counts.
		env.Call(t, 200, "DELETE", "/api/auth/tokens/"+first, u.Token, nil)
		create(t, env, u.Token, body)
	})
}

func TestBadSecrets(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		_, secret := create(t, env, u.Token, map[string]any{"name": "n", "scopes": []string{"profile:read"}})
		env.As("other-admin")
		flipped := []byte(secret)
		flipped[20] ^= 1
		cases := map[string]string{
			"truncated":  secret[:len(secret)-1],
			"mistyped":   string(flipped),
			"bare":       tokens.Prefix,
			"lengthened": secret + "0",
		}
		before := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE last_used_at IS NOT NULL`)
		for name, raw := range cases {
			res := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: raw})
			if res.Status != 401 || res.String("message") != "Invalid token." {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
		// Another tenant does not know the token: well formed, it costs that
		// tenant one read and answers 401.
		if res := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: secret, Host: "other.test"}); res.Status != 401 {
			t.Errorf("other tenant: %d %s", res.Status, res.Body)
		}
		// Revoked and expired tokens are refused without a write too: once
		// the audit's buffer is written, neither has a row or a last use.
		revokedID, revoked := create(t, env, u.Token, map[string]any{"name": "r", "scopes": []string{"profile:read"}})
		env.Call(t, 200, "DELETE", "/api/auth/tokens/"+revokedID, u.Token, nil)
		expiredID, expired := create(t, env, u.Token, map[string]any{"name": "e", "scopes": []string{"profile:read"},
			"expires_at": env.Clock.Now().Add(time.Minute).UTC().Format(time.RFC3339)})
		env.Clock.Advance(time.Minute)
		env.Call(t, 401, "GET", "/api/profile/me", revoked, nil)
		env.Call(t, 401, "GET", "/api/profile/me", expired, nil)
		// A client that sends a scoped token means to use it: a refused one
		// is a 401 on public routes too, never a quiet anonymous answer.
		for _, raw := range []string{revoked, expired, cases["truncated"]} {
			if res := env.Do(apitest.Request{Method: "GET", Path: "/api/courses", Token: raw}); res.Status != 401 {
				t.Errorf("refused token on a public route: %d %s", res.Status, res.Body)
			}
		}
		env.Server.Audit.Flush(context.Background())
		if n := env.Count(t, `SELECT COUNT(*) FROM agent_audit WHERE token_id IN ($1, $2)`, revokedID, expiredID); n != 0 {
			t.Errorf("%d audit rows of refused tokens", n)
		}
		if after := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE last_used_at IS NOT NULL`); after != before {
			t.Error("a refused token was written")
		}
	})
}

// TestTokenRoutesAreLimited: the token and audit routes share 60 calls a
// minute per user.
func TestTokenRoutesAreLimited(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		for i := range 60 {
			path := "/api/auth/tokens"
			if i%2 == 1 {
				path = "/api/admin/tokens" // counted too, though refused
			}
			if res := env.Do(apitest.Request{Method: "GET", Path: path, Token: u.Token}); res.Status == 429 {
				t.Fatalf("call %d refused", i+1)
			}
		}
		res := env.Call(t, 429, "GET", "/api/auth/tokens", u.Token, nil)
		if res.Header.Get("Retry-After") == "" {
			t.Fatal("no Retry-After")
		}
		env.Call(t, 200, "GET", "/api/auth/tokens", env.NewUser("student").Token, nil)
		env.Clock.Advance(time.Minute)
		env.Call(t, 200, "GET", "/api/auth/tokens", u.Token, nil)
	})
}
