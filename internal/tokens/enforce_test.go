package tokens_test

import (
	"context"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/tokens"
)

// TestOrderOfChecks: authentication, then the scope (403, not counted),
// then the token's own limit (429 with the exact body and Retry-After).
func TestOrderOfChecks(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		_, secret := create(t, env, admin.Token, map[string]any{"name": "agent", "scopes": []string{"courses:read"},
			"rate_limit_per_minute": 2})
		// A missing scope is refused however often, and never counts.
		for range 3 {
			res := env.Call(t, 403, "GET", "/api/admin/users", secret, nil)
			if res.String("message") != "This token lacks the scope users:read." {
				t.Fatalf("missing scope: %s", res.Body)
			}
		}
		env.Call(t, 403, "POST", "/api/auth/logout", secret, nil)
		env.Call(t, 200, "GET", "/api/admin/courses", secret, nil)
		env.Call(t, 200, "GET", "/api/admin/courses", secret, nil)
		res := env.Call(t, 429, "GET", "/api/admin/courses", secret, nil)
		want := map[string]any{"success": false, "message": "This token exceeded its rate limit.", "error": "rate_limited"}
		if !reflect.DeepEqual(res.JSON, want) {
			t.Fatalf("429 body %s", res.Body)
		}
		if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
			t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
		}
		// The scope is still checked first once the limit is reached, and a
		// wrong secret is still a 401.
		env.Call(t, 403, "GET", "/api/admin/users", secret, nil)
		env.Call(t, 401, "GET", "/api/admin/courses", secret[:len(secret)-2], nil)
		// Another token of the same user has its own count.
		_, other := create(t, env, admin.Token, map[string]any{"name": "other", "scopes": []string{"courses:read"},
			"rate_limit_per_minute": 1})
		env.Call(t, 200, "GET", "/api/admin/courses", other, nil)
		// The next window allows again.
		env.Clock.Advance(time.Minute)
		env.Call(t, 200, "GET", "/api/admin/courses", secret, nil)
	})
}

// TestScopesNarrowPermissions: a token acts as its user with only the
// permissions its scopes keep, and never beyond the user's.
func TestScopesNarrowPermissions(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		_, secret := create(t, env, admin.Token, map[string]any{"name": "reader", "scopes": []string{"courses:read"}})
		me := env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		perms := fmt.Sprint(me.Get("data.permissions"))
		if !strings.Contains(perms, "course_read") || strings.Contains(perms, "course_update") || strings.Contains(perms, "user_impersonate") {
			t.Fatalf("permissions of a courses:read token: %s", perms)
		}
		env.Call(t, 403, "POST", "/api/admin/courses", secret, map[string]any{"title": "No"})
		// A student's courses:write token still cannot author courses.
		student := env.NewUser("student")
		_, writer := create(t, env, student.Token, map[string]any{"name": "w", "scopes": []string{"courses:write"}})
		env.Call(t, 403, "POST", "/api/admin/courses", writer, map[string]any{"title": "No"})
		// A tutor's courses:write token can.
		tutor := env.NewUser("tutor")
		_, tw := create(t, env, tutor.Token, map[string]any{"name": "w", "scopes": []string{"courses:write"}})
		env.Call(t, 201, "POST", "/api/admin/courses", tw, map[string]any{"title": "Yes"})
	})
}

// waitAudit polls the agent audit until it lists at least n entries
// matching query, as an admin freshly logged in.
func waitAudit(t *testing.T, env *apitest.Env, query string, n int) *apitest.Response {
	t.Helper()
	admin := env.As("admin")
	token, _ := env.Login(env.Host, admin.Email, admin.Password)
	deadline := time.Now().Add(10 * time.Second)
	for {
		res := env.Call(t, 200, "GET", "/api/admin/agent-audit?"+query, token, nil)
		if int(res.Number("meta.total")) >= n {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent audit %q: %s", query, res.Body)
		}
		// The audit routes allow 60 calls a minute per user.
		time.Sleep(200 * time.Millisecond)
	}
}

func TestAgentAudit(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		tutor := env.NewUser("tutor")
		id, secret := create(t, env, tutor.Token, map[string]any{"name": "agent", "scopes": []string{"courses:read"}})
		course := env.Call(t, 201, "POST", "/api/admin/courses", tutor.Token, map[string]any{"title": "Audited"})
		courseID := strconv.Itoa(int(course.Number("data.id")))
		env.Do(apitest.Request{Method: "GET", Path: "/api/admin/courses/" + courseID + "?secret=" + secret, Token: secret,
			Headers: map[string]string{"User-Agent": "agent-test/1.0"}})
		env.Call(t, 403, "GET", "/api/admin/users", secret, nil)
		env.Call(t, 404, "GET", "/api/no-such-route", secret, nil)
		// Signed tokens are not audited.
		env.Call(t, 200, "GET", "/api/admin/courses", tutor.Token, nil)

		res := waitAudit(t, env, "token_id="+id, 3)
		if strings.Contains(string(res.Body), secret) || strings.Contains(string(res.Body), "?") {
			t.Fatalf("the audit holds a secret or a query: %s", res.Body)
		}
		if res.Number("meta.total") != 3 {
			t.Fatalf("audit of the token: %s", res.Body)
		}
		ok := waitAudit(t, env, "token_id="+id+"&status=200", 1)
		if ok.String("data.0.route") != "GET /api/admin/courses/{id}" || ok.String("data.0.method") != "GET" ||
			ok.Number("data.0.user_id") != float64(tutor.ID) || ok.String("data.0.user_agent") != "agent-test/1.0" ||
			ok.String("data.0.ip") == "" || ok.Get("data.0.duration_us") == nil || ok.String("data.0.at") == "" {
			t.Fatalf("audit row: %s", ok.Body)
		}
		denied := waitAudit(t, env, "route="+urlQuery("GET /api/admin/users")+"&user_id="+strconv.FormatInt(tutor.ID, 10), 1)
		if denied.Number("data.0.status") != 403 || denied.Number("meta.total") != 1 {
			t.Fatalf("refused call: %s", denied.Body)
		}
		if env.Call(t, 200, "GET", "/api/admin/agent-audit?route=unmatched&token_id="+id, env.As("admin").Token, nil).Number("meta.total") != 1 {
			t.Fatal("a call to no route is not audited as unmatched")
		}
		// Time range and pagination.
		future := env.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		if env.Call(t, 200, "GET", "/api/admin/agent-audit?from="+future, env.As("admin").Token, nil).Number("meta.total") != 0 {
			t.Fatal("the from filter selects earlier calls")
		}
		page := env.Call(t, 200, "GET", "/api/admin/agent-audit?token_id="+id+"&per_page=2&page=2", env.As("admin").Token, nil)
		if page.Number("meta.last_page") != 2 || page.Get("data.0") == nil || page.Get("data.1") != nil {
			t.Fatalf("second page: %s", page.Body)
		}
		one := env.Call(t, 200, "GET", "/api/admin/tokens/"+id+"/audit", env.As("admin").Token, nil)
		if one.Number("meta.total") != 3 {
			t.Fatalf("token audit: %s", one.Body)
		}
		// The token's last use is recorded with its address.
		list := env.Call(t, 200, "GET", "/api/auth/tokens", tutor.Token, nil)
		if list.String("data.0.last_used_at") == "" || list.String("data.0.last_used_ip") == "" {
			t.Fatalf("last use: %s", list.Body)
		}
		// Only admins (token_manage) read the audit.
		env.Call(t, 403, "GET", "/api/admin/agent-audit", tutor.Token, nil)
		env.Call(t, 403, "GET", "/api/admin/tokens/"+id+"/audit", tutor.Token, nil)
		env.Call(t, 401, "GET", "/api/admin/agent-audit", "", nil)
	})
}

func urlQuery(s string) string {
	return strings.NewReplacer(" ", "%20", "/", "%2F", "{", "%7B", "}", "%7D").Replace(s)
}

func TestAuditPruning(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		id, secret := create(t, env, admin.Token, map[string]any{"name": "agent", "scopes": []string{"profile:read"}})
		env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		waitAudit(t, env, "token_id="+id, 1)
		env.Clock.Advance(89 * 24 * time.Hour)
		env.Call(t, 200, "GET", "/api/profile/settings", secret, nil)
		waitAudit(t, env, "token_id="+id, 2)
		env.Clock.Advance(2 * 24 * time.Hour)
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		adminToken, _ := env.Login(env.Host, admin.Email, admin.Password)
		left := env.Call(t, 200, "GET", "/api/admin/agent-audit?token_id="+id, adminToken, nil)
		if left.Number("meta.total") != 1 || left.String("data.0.route") != "GET /api/profile/settings" {
			t.Fatalf("after pruning: %s", left.Body)
		}
		// A shorter retention setting prunes the rest on the next day's run.
		env.Call(t, 200, "POST", "/api/admin/config", adminToken,
			map[string]any{"config": []map[string]any{{"key": tokens.AuditRetentionKey, "value": 1}}})
		env.Clock.Advance(24 * time.Hour)
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM agent_audit WHERE token_id = $1`, id); n != 0 {
			t.Fatalf("%d rows left", n)
		}
	})
}

func TestRevocation(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		body := map[string]any{"name": "n", "scopes": []string{"profile:read"}}

		// An admin revokes it.
		u := env.NewUser("student")
		id, secret := create(t, env, u.Token, body)
		env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		env.Call(t, 403, "DELETE", "/api/admin/tokens/"+id, u.Token, nil)
		env.Call(t, 200, "DELETE", "/api/admin/tokens/"+id, admin.Token, nil)
		env.Call(t, 200, "DELETE", "/api/admin/tokens/"+id, admin.Token, nil)
		env.Call(t, 401, "GET", "/api/profile/me", secret, nil)
		env.Call(t, 404, "DELETE", "/api/admin/tokens/unknown", admin.Token, nil)

		// Blocking the user.
		u = env.NewUser("student")
		_, secret = create(t, env, u.Token, body)
		env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		env.Call(t, 200, "PATCH", "/api/admin/users/"+strconv.FormatInt(u.ID, 10), admin.Token, map[string]any{"is_active": false})
		env.Call(t, 401, "GET", "/api/profile/me", secret, nil)
		// Unblocking does not bring it back.
		env.Call(t, 200, "PATCH", "/api/admin/users/"+strconv.FormatInt(u.ID, 10), admin.Token, map[string]any{"is_active": true})
		env.Call(t, 401, "GET", "/api/profile/me", secret, nil)

		// Deleting the user.
		u = env.NewUser("student")
		_, secret = create(t, env, u.Token, body)
		env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		env.Call(t, 200, "DELETE", "/api/admin/users/"+strconv.FormatInt(u.ID, 10), admin.Token, nil)
		env.Call(t, 401, "GET", "/api/profile/me", secret, nil)

		// A password reset.
		u = env.NewUser("student")
		_, secret = create(t, env, u.Token, body)
		env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		before := len(env.SMTP.Wait(t, 0, time.Second))
		env.Call(t, 200, "POST", "/api/auth/password/forgot", "", map[string]any{"email": u.Email})
		// Mails of the earlier steps (the account blocked, deleted) are
		// sent after their commits too, so they may still arrive first.
		var code []string
		for n := before + 1; code == nil && n <= before+5; n++ {
			for _, m := range env.SMTP.Wait(t, n, 10*time.Second) {
				if slices.Contains(m.To, u.Email) && m.Subject == "Reset your password" {
					code = regexp.MustCompile(`token is:\s+([A-Za-z0-9]{32})`).FindStringSubmatch(m.Body)
				}
			}
		}
		if code == nil {
			t.Fatal("no reset mail")
		}
		env.Call(t, 200, "POST", "/api/auth/password/reset", "",
			map[string]any{"email": u.Email, "token": code[1], "password": "brand-new-pass"})
		env.Call(t, 401, "GET", "/api/profile/me", secret, nil)

		// Expiry, on the injected clock.
		u = env.NewUser("student")
		exp := env.Clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		_, secret = create(t, env, u.Token, map[string]any{"name": "n", "scopes": []string{"profile:read"}, "expires_at": exp})
		env.Call(t, 200, "GET", "/api/profile/me", secret, nil)
		env.Clock.Advance(time.Hour)
		if res := env.Call(t, 401, "GET", "/api/profile/me", secret, nil); res.String("message") != "Token expired." {
			t.Fatalf("expired: %s", res.Body)
		}
	})
}

func TestAdminTokenRoutes(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		a, b := env.NewUser("student"), env.NewUser("tutor")
		idA, _ := create(t, env, a.Token, map[string]any{"name": "a", "scopes": []string{"profile:read"}})
		create(t, env, b.Token, map[string]any{"name": "b", "scopes": []string{"profile:read"}})
		all := env.Call(t, 200, "GET", "/api/admin/tokens", admin.Token, nil)
		if all.Number("meta.total") != 2 || all.Get("data.0.token") != nil {
			t.Fatalf("all tokens: %s", all.Body)
		}
		one := env.Call(t, 200, "GET", "/api/admin/tokens?user_id="+strconv.FormatInt(a.ID, 10), admin.Token, nil)
		if one.Number("meta.total") != 1 || one.String("data.0.id") != idA {
			t.Fatalf("filtered: %s", one.Body)
		}
		env.Call(t, 200, "DELETE", "/api/admin/tokens/"+idA, admin.Token, nil)
		if env.Call(t, 200, "GET", "/api/admin/tokens", admin.Token, nil).Number("meta.total") != 1 {
			t.Fatal("a revoked token is listed by default")
		}
		if env.Call(t, 200, "GET", "/api/admin/tokens?include_revoked=true", admin.Token, nil).Number("meta.total") != 2 {
			t.Fatal("include_revoked lists revoked tokens")
		}
		for _, role := range []string{"student", "tutor"} {
			env.Call(t, 403, "GET", "/api/admin/tokens", env.As(role).Token, nil)
		}
		// An admin's scoped token needs tokens:manage on these routes.
		_, manage := create(t, env, admin.Token, map[string]any{"name": "m", "scopes": []string{"tokens:manage"}})
		_, other := create(t, env, admin.Token, map[string]any{"name": "o", "scopes": []string{"tokens:write"}})
		env.Call(t, 200, "GET", "/api/admin/tokens", manage, nil)
		env.Call(t, 403, "GET", "/api/admin/tokens", other, nil)
		// Another tenant's admin sees none of them.
		res := env.Do(apitest.Request{Method: "GET", Path: "/api/admin/tokens", Token: env.As("other-admin").Token, Host: "other.test"})
		if res.Status != 200 || res.Number("meta.total") != 0 {
			t.Fatalf("other tenant: %d %s", res.Status, res.Body)
		}
	})
}
