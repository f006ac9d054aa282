package tokens_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
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

// create makes a scoped token through the API as c's caller and returns
// its id and secret.
func create(t *testing.T, c *client.Client, body client.CreateInputBody) (string, string) {
	t.Helper()
	tok := apitest.Must(c.PostAuthTokens(t.Context(), body))(t)
	if tok.ID == "" || !strings.HasPrefix(tok.Token, tokens.Prefix) {
		t.Fatalf("create: %+v", tok)
	}
	return tok.ID, tok.Token
}

func TestTokenLifecycle(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		tutor := env.NewUser("tutor")
		owner := env.UserClient(tutor)
		id, secret := create(t, owner, client.CreateInputBody{Name: "CLI", Scopes: []string{"courses:read", "profile:read"},
			RateLimitPerMinute: client.Ptr(int64(100))})
		if n := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE secret_hash = $1`, tokens.HashSecret(secret)); n != 1 {
			t.Fatalf("stored hash rows = %d", n)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM personal_tokens WHERE secret_hash = $1`, secret); n != 0 {
			t.Fatal("the secret itself is stored")
		}
		// Raw: that neither the secret nor its hash is in the answers is a
		// check of the wire, which the client's types cannot see.
		cur := env.Call(t, 200, "GET", "/api/auth/tokens/current", secret, nil)
		if cur.String("data.id") != id || cur.String("data.name") != "CLI" || cur.Number("data.rate_limit_per_minute") != 100 ||
			cur.Get("data.token") != nil || cur.Get("data.secret_hash") != nil {
			t.Fatalf("current: %s", cur.Body)
		}
		scoped := env.Client("", secret)
		if me := apitest.Must(scoped.GetProfileMe(ctx))(t); me.ID != tutor.ID {
			t.Fatalf("profile with the token: %+v", me)
		}
		list := env.Call(t, 200, "GET", "/api/auth/tokens", tutor.Token, nil)
		if list.String("data.0.id") != id || list.Get("data.1") != nil || list.Get("data.0.token") != nil {
			t.Fatalf("list: %s", list.Body)
		}
		// A signed token has no current scoped token.
		_, err := owner.GetAuthTokensCurrent(ctx)
		apitest.Refused(t, err, 404)
		// Another user cannot revoke it; its owner can, twice.
		apitest.Refused(t, env.UserClient(env.NewUser("tutor")).DeleteAuthTokensID(ctx, id), 404)
		apitest.OK(t, owner.DeleteAuthTokensID(ctx, id))
		apitest.OK(t, owner.DeleteAuthTokensID(ctx, id))
		_, err = scoped.GetAuthTokensCurrent(ctx)
		if e := apitest.Refused(t, err, 401); e.Message != "Token revoked." {
			t.Fatalf("revoked: %v", e)
		}
		if list := apitest.Must(owner.GetAuthTokens(ctx))(t); len(list) != 0 {
			t.Fatalf("revoked token still listed: %+v", list)
		}
	})
}

func TestCreateRefusals(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		student := env.ClientAs("student")
		ok := func() client.CreateInputBody {
			return client.CreateInputBody{Name: "x", Scopes: []string{"progress:read"}}
		}
		with := func(change func(*client.CreateInputBody)) client.CreateInputBody {
			b := ok()
			change(&b)
			return b
		}
		refused := func(name string, c *client.Client, body client.CreateInputBody, status int, check func(*client.Error) bool) {
			t.Run(name, func(t *testing.T) {
				_, err := c.PostAuthTokens(ctx, body)
				if e := apitest.Refused(t, err, status); check != nil && !check(e) {
					t.Errorf("%s: %v", name, e)
				}
			})
		}
		names := func(field string) func(*client.Error) bool {
			return func(e *client.Error) bool { return len(e.Errors[field]) > 0 }
		}
		refused("anonymous", env.ClientAs("anonymous"), ok(), 401, nil)
		refused("unknown scope", student, with(func(b *client.CreateInputBody) { b.Scopes = []string{"root"} }), 422,
			func(e *client.Error) bool {
				return len(e.Errors["scopes"]) > 0 && e.Errors["scopes"][0] == `The scope "root" does not exist.`
			})
		refused("no scope", student, with(func(b *client.CreateInputBody) { b.Scopes = []string{} }), 422, nil)
		refused("empty name", student, with(func(b *client.CreateInputBody) { b.Name = "" }), 422, nil)
		refused("rate limit 0", student, with(func(b *client.CreateInputBody) { b.RateLimitPerMinute = client.Ptr(int64(0)) }),
			422, names("rate_limit_per_minute"))
		refused("rate limit 6001", student, with(func(b *client.CreateInputBody) { b.RateLimitPerMinute = client.Ptr(int64(6001)) }),
			422, nil)
		t.Run("rate limit 6000", func(t *testing.T) {
			tok := apitest.Must(student.PostAuthTokens(ctx,
				with(func(b *client.CreateInputBody) { b.RateLimitPerMinute = client.Ptr(int64(6000)) })))(t)
			if tok.RateLimitPerMinute == nil || *tok.RateLimitPerMinute != 6000 {
				t.Errorf("rate limit 6000: %+v", tok)
			}
		})
		past := env.Clock.Now().Add(-time.Minute).Truncate(time.Second)
		refused("expiry in the past", student, with(func(b *client.CreateInputBody) { b.ExpiresAt = &past }), 422,
			names("expires_at"))
		// A token cannot create a wider one, only one within its scopes.
		_, secret := create(t, student, client.CreateInputBody{Name: "agent", Scopes: []string{"tokens:write", "progress:write"}})
		agent := env.Client("", secret)
		_, err := agent.PostAuthTokens(ctx, client.CreateInputBody{Name: "wider", Scopes: []string{"courses:read"}})
		apitest.Refused(t, err, 403)
		create(t, agent, client.CreateInputBody{Name: "narrower", Scopes: []string{"progress:read"}})
	})
}

func TestMaxLiveTokens(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		apitest.Must(env.ClientAs("admin").PostAdminConfig(ctx,
			client.UpdateInputBody{Config: []client.Item{{Key: tokens.MaxPerUserKey, Value: 2}}}))(t)
		u := env.UserClient(env.NewUser("student"))
		body := client.CreateInputBody{Name: "n", Scopes: []string{"profile:read"}}
		first, _ := create(t, u, body)
		create(t, u, body)
		_, err := u.PostAuthTokens(ctx, body)
		if e := apitest.Refused(t, err, 422); len(e.Errors["tokens"]) == 0 {
			t.Fatalf("over the maximum: %v", e)
		}
		// A revoked token no longer counts.
		apitest.OK(t, u.DeleteAuthTokensID(ctx, first))
		create(t, u, body)
	})
}

func TestBadSecrets(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.NewUser("student")
		owner := env.UserClient(u)
		_, secret := create(t, owner, client.CreateInputBody{Name: "n", Scopes: []string{"profile:read"}})
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
			_, err := env.Client("", raw).GetProfileMe(ctx)
			var e *client.Error
			if !errors.As(err, &e) || e.Status != 401 || e.Message != "Invalid token." {
				t.Errorf("%s: %v", name, err)
			}
		}
		// Another tenant does not know the token: well formed, it costs that
		// tenant one read and answers 401.
		if _, err := env.Client("other.test", secret).GetProfileMe(ctx); client.StatusOf(err) != 401 {
			t.Errorf("other tenant: %v", err)
		}
		// Revoked and expired tokens are refused without a write too: once
		// the audit's buffer is written, neither has a row or a last use.
		revokedID, revoked := create(t, owner, client.CreateInputBody{Name: "r", Scopes: []string{"profile:read"}})
		apitest.OK(t, owner.DeleteAuthTokensID(ctx, revokedID))
		expiredID, expired := create(t, owner, client.CreateInputBody{Name: "e", Scopes: []string{"profile:read"},
			ExpiresAt: client.Ptr(env.Clock.Now().Add(time.Minute).UTC().Truncate(time.Second))})
		env.Clock.Advance(time.Minute)
		for _, raw := range []string{revoked, expired} {
			_, err := env.Client("", raw).GetProfileMe(ctx)
			apitest.Refused(t, err, 401)
		}
		// A client that sends a scoped token means to use it: a refused one
		// is a 401 on public routes too, never a quiet anonymous answer.
		for _, raw := range []string{revoked, expired, cases["truncated"]} {
			if _, err := env.Client("", raw).GetCourses(ctx, client.GetCoursesParams{}); client.StatusOf(err) != 401 {
				t.Errorf("refused token on a public route: %v", err)
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
		ctx := t.Context()
		u := env.UserClient(env.NewUser("student"))
		for i := range 60 {
			var err error
			if i%2 == 0 {
				_, err = u.GetAuthTokens(ctx)
			} else {
				_, err = u.GetAdminTokens(ctx, client.GetAdminTokensParams{}) // counted too, though refused
			}
			if client.StatusOf(err) == 429 {
				t.Fatalf("call %d refused", i+1)
			}
		}
		_, err := u.GetAuthTokens(ctx)
		if e := apitest.Refused(t, err, 429); e.RetryAfter == 0 {
			t.Fatal("no Retry-After")
		}
		apitest.Must(env.UserClient(env.NewUser("student")).GetAuthTokens(ctx))(t)
		env.Clock.Advance(time.Minute)
		apitest.Must(u.GetAuthTokens(ctx))(t)
	})
}
