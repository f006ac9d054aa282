package tokens_test

import (
	"context"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/tokens"
)

// TestOrderOfChecks: authentication, then the scope (403, not counted),
// then the token's own limit (429 with the exact body and Retry-After).
func TestOrderOfChecks(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		_, secret := create(t, admin, client.CreateInputBody{Name: "agent", Scopes: []string{"courses:read"},
			RateLimitPerMinute: client.Ptr(int64(2))})
		agent := env.Client("", secret)
		users := func(c *client.Client) error {
			_, err := c.GetAdminUsers(ctx, client.GetAdminUsersParams{})
			return err
		}
		courses := func(c *client.Client) error {
			_, err := c.GetAdminCourses(ctx, client.GetAdminCoursesParams{})
			return err
		}
		// A missing scope is refused however often, and never counts.
		for range 3 {
			if e := apitest.Refused(t, users(agent), 403); e.Message != "This token lacks the scope users:read." {
				t.Fatalf("missing scope: %v", e)
			}
		}
		apitest.Refused(t, agent.PostAuthLogout(ctx), 403)
		apitest.OK(t, courses(agent))
		apitest.OK(t, courses(agent))
		// Raw: the refusal's exact envelope and header.
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
		apitest.Refused(t, users(agent), 403)
		apitest.Refused(t, courses(env.Client("", secret[:len(secret)-2])), 401)
		// Another token of the same user has its own count.
		_, other := create(t, admin, client.CreateInputBody{Name: "other", Scopes: []string{"courses:read"},
			RateLimitPerMinute: client.Ptr(int64(1))})
		apitest.OK(t, courses(env.Client("", other)))
		// The next window allows again.
		env.Clock.Advance(time.Minute)
		apitest.OK(t, courses(agent))
	})
}

// TestScopesNarrowPermissions: a token acts as its user with only the
// permissions its scopes keep, and never beyond the user's.
func TestScopesNarrowPermissions(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		_, secret := create(t, env.ClientAs("admin"), client.CreateInputBody{Name: "reader", Scopes: []string{"courses:read"}})
		reader := env.Client("", secret)
		perms := apitest.Must(reader.GetProfileMe(ctx))(t).Permissions
		if !slices.Contains(perms, "course_read") || slices.Contains(perms, "course_update") || slices.Contains(perms, "user_impersonate") {
			t.Fatalf("permissions of a courses:read token: %v", perms)
		}
		_, err := reader.PostAdminCourses(ctx, client.CourseBody{Title: "No"})
		apitest.Refused(t, err, 403)
		// A student's courses:write token still cannot author courses.
		_, writer := create(t, env.UserClient(env.NewUser("student")), client.CreateInputBody{Name: "w", Scopes: []string{"courses:write"}})
		_, err = env.Client("", writer).PostAdminCourses(ctx, client.CourseBody{Title: "No"})
		apitest.Refused(t, err, 403)
		// A tutor's courses:write token can.
		_, tw := create(t, env.UserClient(env.NewUser("tutor")), client.CreateInputBody{Name: "w", Scopes: []string{"courses:write"}})
		apitest.Must(env.Client("", tw).PostAdminCourses(ctx, client.CourseBody{Title: "Yes"}))(t)
	})
}

// waitAudit polls the agent audit until it lists at least n entries
// matching params, as an admin freshly logged in.
func waitAudit(t *testing.T, env *apitest.Env, params client.GetAdminAgentAuditParams, n int) *client.Page[client.AuditEntry] {
	t.Helper()
	admin := env.As("admin")
	token, _ := env.Login(env.Host, admin.Email, admin.Password)
	c := env.Client("", token)
	deadline := time.Now().Add(10 * time.Second)
	for {
		page := apitest.Must(c.GetAdminAgentAudit(t.Context(), params))(t)
		if page.Meta.Total >= n {
			return page
		}
		if time.Now().After(deadline) {
			t.Fatalf("agent audit %+v: %+v", params, page)
		}
		// The audit routes allow 60 calls a minute per user.
		time.Sleep(200 * time.Millisecond)
	}
}

func TestAgentAudit(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		tutor := env.NewUser("tutor")
		tc := env.UserClient(tutor)
		id, secret := create(t, tc, client.CreateInputBody{Name: "agent", Scopes: []string{"courses:read"}})
		agent := env.Client("", secret)
		course := apitest.Must(tc.PostAdminCourses(ctx, client.CourseBody{Title: "Audited"}))(t)
		// Raw: a secret in the query and a User-Agent of its own.
		env.Do(apitest.Request{Method: "GET", Path: "/api/admin/courses/" + strconv.FormatInt(course.ID, 10) + "?secret=" + secret,
			Token: secret, Headers: map[string]string{"User-Agent": "agent-test/1.0"}})
		_, err := agent.GetAdminUsers(ctx, client.GetAdminUsersParams{})
		apitest.Refused(t, err, 403)
		// Raw: a path no route serves.
		env.Call(t, 404, "GET", "/api/no-such-route", secret, nil)
		// Signed tokens are not audited.
		apitest.Must(tc.GetAdminCourses(ctx, client.GetAdminCoursesParams{}))(t)

		if page := waitAudit(t, env, client.GetAdminAgentAuditParams{TokenID: &id}, 3); page.Meta.Total != 3 {
			t.Fatalf("audit of the token: %+v", page)
		}
		// Raw: nothing anywhere in the answer holds the secret or a query.
		adminToken := env.As("admin").Token
		if res := env.Call(t, 200, "GET", "/api/admin/agent-audit?token_id="+id, adminToken, nil); strings.Contains(string(res.Body), secret) ||
			strings.Contains(string(res.Body), "?") {
			t.Fatalf("the audit holds a secret or a query: %s", res.Body)
		}
		okPage := waitAudit(t, env, client.GetAdminAgentAuditParams{TokenID: &id, Status: client.Ptr(int64(200))}, 1)
		if ok := okPage.Items[0]; ok.Route != "GET /api/admin/courses/{id}" || ok.Method != "GET" || ok.UserID != tutor.ID ||
			ok.UserAgent != "agent-test/1.0" || ok.IP == "" || ok.DurationUs <= 0 || ok.At.IsZero() {
			t.Fatalf("audit row: %+v", ok)
		}
		denied := waitAudit(t, env, client.GetAdminAgentAuditParams{Route: client.Ptr("GET /api/admin/users"), UserID: &tutor.ID}, 1)
		if denied.Items[0].Status != 403 || denied.Meta.Total != 1 {
			t.Fatalf("refused call: %+v", denied)
		}
		admin := env.ClientAs("admin")
		audit := func(p client.GetAdminAgentAuditParams) *client.Page[client.AuditEntry] {
			t.Helper()
			return apitest.Must(admin.GetAdminAgentAudit(ctx, p))(t)
		}
		if audit(client.GetAdminAgentAuditParams{Route: client.Ptr("unmatched"), TokenID: &id}).Meta.Total != 1 {
			t.Fatal("a call to no route is not audited as unmatched")
		}
		// Time range and pagination.
		future := env.Clock.Now().Add(time.Hour).UTC().Truncate(time.Second)
		if audit(client.GetAdminAgentAuditParams{From: &future}).Meta.Total != 0 {
			t.Fatal("the from filter selects earlier calls")
		}
		page := audit(client.GetAdminAgentAuditParams{TokenID: &id, PerPage: client.Ptr(int64(2)), Page: client.Ptr(int64(2))})
		if page.Meta.LastPage != 2 || len(page.Items) != 1 {
			t.Fatalf("second page: %+v", page)
		}
		one := apitest.Must(admin.GetAdminTokensIDAudit(ctx, id, client.GetAdminTokensIDAuditParams{}))(t)
		if one.Meta.Total != 3 {
			t.Fatalf("token audit: %+v", one)
		}
		// The token's last use is recorded with its address.
		list := apitest.Must(tc.GetAuthTokens(ctx))(t)
		if len(list) == 0 || list[0].LastUsedAt == nil || list[0].LastUsedIP == nil || *list[0].LastUsedIP == "" {
			t.Fatalf("last use: %+v", list)
		}
		// Only admins (token_manage) read the audit.
		_, err = tc.GetAdminAgentAudit(ctx, client.GetAdminAgentAuditParams{})
		apitest.Refused(t, err, 403)
		_, err = tc.GetAdminTokensIDAudit(ctx, id, client.GetAdminTokensIDAuditParams{})
		apitest.Refused(t, err, 403)
		_, err = env.ClientAs("anonymous").GetAdminAgentAudit(ctx, client.GetAdminAgentAuditParams{})
		apitest.Refused(t, err, 401)
	})
}

func TestAuditPruning(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.As("admin")
		id, secret := create(t, env.UserClient(admin), client.CreateInputBody{Name: "agent", Scopes: []string{"profile:read"}})
		agent := env.Client("", secret)
		apitest.Must(agent.GetProfileMe(ctx))(t)
		waitAudit(t, env, client.GetAdminAgentAuditParams{TokenID: &id}, 1)
		env.Clock.Advance(89 * 24 * time.Hour)
		apitest.Must(agent.GetProfileSettings(ctx))(t)
		waitAudit(t, env, client.GetAdminAgentAuditParams{TokenID: &id}, 2)
		env.Clock.Advance(2 * 24 * time.Hour)
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		adminToken, _ := env.Login(env.Host, admin.Email, admin.Password)
		fresh := env.Client("", adminToken)
		left := apitest.Must(fresh.GetAdminAgentAudit(ctx, client.GetAdminAgentAuditParams{TokenID: &id}))(t)
		if left.Meta.Total != 1 || left.Items[0].Route != "GET /api/profile/settings" {
			t.Fatalf("after pruning: %+v", left)
		}
		// A shorter retention setting prunes the rest on the next day's run.
		apitest.Must(fresh.PostAdminConfig(ctx, client.UpdateInputBody{Config: []client.Item{{Key: tokens.AuditRetentionKey, Value: 1}}}))(t)
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
		ctx := t.Context()
		admin := env.ClientAs("admin")
		body := client.CreateInputBody{Name: "n", Scopes: []string{"profile:read"}}
		// scoped makes a token of a new student and checks it works.
		scoped := func() (*apitest.User, string, *client.Client) {
			t.Helper()
			u := env.NewUser("student")
			id, secret := create(t, env.UserClient(u), body)
			c := env.Client("", secret)
			apitest.Must(c.GetProfileMe(ctx))(t)
			return u, id, c
		}
		refused := func(c *client.Client) *client.Error {
			t.Helper()
			_, err := c.GetProfileMe(ctx)
			return apitest.Refused(t, err, 401)
		}

		// An admin revokes it.
		u, id, c := scoped()
		apitest.Refused(t, env.UserClient(u).DeleteAdminTokensID(ctx, id), 403)
		apitest.OK(t, admin.DeleteAdminTokensID(ctx, id))
		apitest.OK(t, admin.DeleteAdminTokensID(ctx, id))
		refused(c)
		apitest.Refused(t, admin.DeleteAdminTokensID(ctx, "unknown"), 404)

		// Blocking the user.
		u, _, c = scoped()
		apitest.Must(admin.PatchAdminUsersID(ctx, u.ID, client.UserChangeBody{IsActive: client.Ptr(false)}))(t)
		refused(c)
		// Unblocking does not bring it back.
		apitest.Must(admin.PatchAdminUsersID(ctx, u.ID, client.UserChangeBody{IsActive: client.Ptr(true)}))(t)
		refused(c)

		// Deleting the user.
		u, _, c = scoped()
		apitest.OK(t, admin.DeleteAdminUsersID(ctx, u.ID))
		refused(c)

		// A password reset.
		u, _, c = scoped()
		before := len(env.SMTP.Wait(t, 0, time.Second))
		anonymous := env.ClientAs("anonymous")
		apitest.OK(t, anonymous.PostAuthPasswordForgot(ctx, client.EmailInputBody{Email: u.Email}))
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
		apitest.OK(t, anonymous.PostAuthPasswordReset(ctx, client.ResetInputBody{Email: u.Email, Token: code[1], Password: "brand-new-pass"}))
		refused(c)

		// Expiry, on the injected clock.
		u = env.NewUser("student")
		exp := env.Clock.Now().Add(time.Hour).UTC().Truncate(time.Second)
		_, secret := create(t, env.UserClient(u), client.CreateInputBody{Name: "n", Scopes: []string{"profile:read"}, ExpiresAt: &exp})
		c = env.Client("", secret)
		apitest.Must(c.GetProfileMe(ctx))(t)
		env.Clock.Advance(time.Hour)
		if e := refused(c); e.Message != "Token expired." {
			t.Fatalf("expired: %v", e)
		}
	})
}

func TestAdminTokenRoutes(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		a, b := env.NewUser("student"), env.NewUser("tutor")
		idA, _ := create(t, env.UserClient(a), client.CreateInputBody{Name: "a", Scopes: []string{"profile:read"}})
		create(t, env.UserClient(b), client.CreateInputBody{Name: "b", Scopes: []string{"profile:read"}})
		// Raw: the listing holds no secret, which the client's types cannot see.
		all := env.Call(t, 200, "GET", "/api/admin/tokens", env.As("admin").Token, nil)
		if all.Number("meta.total") != 2 || all.Get("data.0.token") != nil {
			t.Fatalf("all tokens: %s", all.Body)
		}
		list := func(c *client.Client, p client.GetAdminTokensParams) (*client.Page[client.Token], error) {
			return c.GetAdminTokens(ctx, p)
		}
		one := apitest.Must(list(admin, client.GetAdminTokensParams{UserID: &a.ID}))(t)
		if one.Meta.Total != 1 || one.Items[0].ID != idA {
			t.Fatalf("filtered: %+v", one)
		}
		apitest.OK(t, admin.DeleteAdminTokensID(ctx, idA))
		if apitest.Must(list(admin, client.GetAdminTokensParams{}))(t).Meta.Total != 1 {
			t.Fatal("a revoked token is listed by default")
		}
		if apitest.Must(list(admin, client.GetAdminTokensParams{IncludeRevoked: client.Ptr(true)}))(t).Meta.Total != 2 {
			t.Fatal("include_revoked lists revoked tokens")
		}
		for _, role := range []string{"student", "tutor"} {
			_, err := list(env.ClientAs(role), client.GetAdminTokensParams{})
			apitest.Refused(t, err, 403)
		}
		// An admin's scoped token needs tokens:manage on these routes.
		_, manage := create(t, admin, client.CreateInputBody{Name: "m", Scopes: []string{"tokens:manage"}})
		_, other := create(t, admin, client.CreateInputBody{Name: "o", Scopes: []string{"tokens:write"}})
		apitest.Must(list(env.Client("", manage), client.GetAdminTokensParams{}))(t)
		_, err := list(env.Client("", other), client.GetAdminTokensParams{})
		apitest.Refused(t, err, 403)
		// Another tenant's admin sees none of them.
		if page := apitest.Must(list(env.Client("other.test", env.As("other-admin").Token), client.GetAdminTokensParams{}))(t); page.Meta.Total != 0 {
			t.Fatalf("other tenant: %+v", page)
		}
	})
}
