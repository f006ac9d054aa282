package device_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/device"
	"github.com/lms-platform/lms/internal/tokens"
)

var userCode = regexp.MustCompile(`^[BCDFGHJKMNPQRTVWXY]{4}-[BCDFGHJKMNPQRTVWXY]{4}$`)

// start begins a device login as an anonymous client and returns its
// device code and user code.
func start(t *testing.T, env *apitest.Env, scopes ...string) (string, string) {
	t.Helper()
	g := apitest.Must(env.ClientAs("anonymous").PostAuthDeviceCode(t.Context(),
		client.DeviceCodeInputBody{ClientName: "lmsctl on laptop", Scopes: scopes}))(t)
	if !strings.HasPrefix(g.DeviceCode, "lms_dc_") || !userCode.MatchString(g.UserCode) {
		t.Fatalf("device code answer: %+v", g)
	}
	return g.DeviceCode, g.UserCode
}

// poll polls with the device code after waiting the interval, and checks
// the answer's status and error code ("" for a success). Raw: the poll's
// answer is what device clients read (400 with an "error" code, success
// false), so its envelope is checked on every poll.
func poll(t *testing.T, env *apitest.Env, deviceCode string, wantCode string) *apitest.Response {
	t.Helper()
	env.Clock.Advance(device.Interval)
	want := 400
	if wantCode == "" {
		want = 200
	}
	res := env.Call(t, want, "POST", "/api/auth/device/token", "", map[string]any{"device_code": deviceCode})
	if got := res.String("error"); got != wantCode || res.Get("success") != (wantCode == "") {
		t.Fatalf("poll: error %q, want %q: %s", got, wantCode, res.Body)
	}
	return res
}

// each runs fn on every backend with a tenant of its own: the PostgreSQL
// suite shares one Redis, whose limit counters are keyed by tenant host,
// and every test calls from 127.0.0.1 as users numbered alike.
func each(t *testing.T, fn func(t *testing.T, env *apitest.Env)) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		b := make([]byte, 6)
		rand.Read(b)
		env.Host = "device-" + hex.EncodeToString(b) + ".test"
		env.Tenant = env.AddTenant(env.Host)
		fn(t, env)
	})
}

func requestPath(code, action string) string {
	p := "/api/auth/device/requests/" + url.PathEscape(code)
	if action != "" {
		p += "/" + action
	}
	return p
}

// approve approves the request of user code uc as c, for all its scopes.
func approve(t *testing.T, c *client.Client, uc string) (*client.DeviceRequest, error) {
	return c.PostAuthDeviceRequestsIDApprove(t.Context(), uc, client.DeviceApproveInputBody{})
}

// collect polls until the approved token is handed out and returns its
// secret.
func collect(t *testing.T, env *apitest.Env, dc string) string {
	t.Helper()
	return poll(t, env, dc, "").String("data.token")
}

func TestDeviceLoginApproved(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		anonymous := env.ClientAs("anonymous")
		g := apitest.Must(anonymous.PostAuthDeviceCode(ctx, client.DeviceCodeInputBody{ClientName: "lmsctl on laptop",
			Scopes: []string{"courses:read", "profile:read"}}))(t)
		dc, uc := g.DeviceCode, g.UserCode
		if !userCode.MatchString(uc) || !strings.HasPrefix(dc, "lms_dc_") {
			t.Fatalf("codes: %+v", g)
		}
		if g.VerificationURI != "http://"+env.Host+":3000/device" ||
			g.VerificationURIComplete != "http://"+env.Host+":3000/device?code="+uc ||
			g.ExpiresIn != 600 || g.Interval != 5 {
			t.Fatalf("grant: %+v", g)
		}
		if env.Count(t, `SELECT COUNT(*) FROM device_requests WHERE device_code_hash = $1`, dc) != 0 {
			t.Fatal("the device code itself is stored")
		}
		poll(t, env, dc, device.CodePending)
		// Polling again at once is too fast; the interval grows.
		pollNow := func() *client.Error {
			t.Helper()
			_, err := anonymous.PostAuthDeviceToken(ctx, client.DeviceTokenInputBody{DeviceCode: dc})
			return apitest.Refused(t, err, 400)
		}
		if slow := pollNow(); slow.Code != device.CodeSlowDown {
			t.Fatalf("fast poll: %v", slow)
		}
		// The interval is now 10 s: after 5 s it is still too fast, and
		// grows again.
		env.Clock.Advance(device.Interval)
		if slow := pollNow(); slow.Code != device.CodeSlowDown || !strings.Contains(slow.Message, "15 seconds") {
			t.Fatalf("still too fast: %v", slow)
		}
		env.Clock.Advance(10 * time.Second)
		poll(t, env, dc, device.CodePending)

		learner := env.NewUser("student")
		lc := env.UserClient(learner)
		// The typed code may be lower case, without the dash. Raw: the
		// device code is absent from the answer, which the client's types
		// cannot see.
		typed := strings.ToLower(strings.ReplaceAll(uc, "-", ""))
		shown := env.Call(t, 200, "GET", requestPath(typed, ""), learner.Token, nil)
		if shown.String("data.client_name") != "lmsctl on laptop" || shown.String("data.status") != "pending" ||
			shown.String("data.user_code") != uc || shown.String("data.ip") == "" || shown.String("data.created_at") == "" ||
			shown.Get("data.scopes.1") != "profile:read" || shown.Get("data.device_code") != nil {
			t.Fatalf("show: %s", shown.Body)
		}
		// An approval cannot widen what the device asked for.
		_, err := lc.PostAuthDeviceRequestsIDApprove(ctx, uc, client.DeviceApproveInputBody{Scopes: []string{"courses:write"}})
		if wide := apitest.Refused(t, err, 403); !strings.Contains(wide.Message, "did not ask for") {
			t.Fatalf("widening: %v", wide)
		}
		ok := apitest.Must(lc.PostAuthDeviceRequestsIDApprove(ctx, uc, client.DeviceApproveInputBody{Scopes: []string{"courses:read"}}))(t)
		if ok.Status != "approved" || ok.TokenID == nil || *ok.TokenID == "" || !slices.Equal(ok.ApprovedScopes, []string{"courses:read"}) {
			t.Fatalf("approve: %+v", ok)
		}
		env.Clock.Advance(time.Minute)
		_, err = approve(t, lc, uc)
		apitest.Refused(t, err, 409)
		_, err = lc.PostAuthDeviceRequestsIDDeny(ctx, uc)
		apitest.Refused(t, err, 409)
		// Another user sees the decision but not the token.
		other := apitest.Must(env.UserClient(env.NewUser("student")).GetAuthDeviceRequestsID(ctx, uc))(t)
		if other.Status != "approved" || other.TokenID != nil {
			t.Fatalf("show to another user: %+v", other)
		}

		got := poll(t, env, dc, "")
		secret := got.String("data.token")
		if !strings.HasPrefix(secret, tokens.Prefix) || got.Number("data.user_id") != float64(learner.ID) ||
			got.Get("data.scopes.0") != "courses:read" || got.Get("data.scopes.1") != nil ||
			got.String("data.id") != *ok.TokenID || got.String("data.name") != "lmsctl on laptop" {
			t.Fatalf("collected: %s", got.Body)
		}
		if cur := apitest.Must(env.Client("", secret).GetAuthTokensCurrent(ctx))(t); cur.UserID != learner.ID {
			t.Fatalf("the token is not the approver's: %+v", cur)
		}
		// Collected once: the device code is spent, the sealed copy gone.
		poll(t, env, dc, device.CodeInvalidGrant)
		if n := env.Count(t, `SELECT COUNT(*) FROM device_requests WHERE sealed_token IS NOT NULL`); n != 0 {
			t.Fatalf("%d sealed tokens kept after collection", n)
		}
		poll(t, env, "lms_dc_unknown", device.CodeInvalidGrant)
	})
}

func TestDeviceLoginDeniedAndExpired(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		dc, uc := start(t, env, "users:read")
		apitest.Must(admin.PostAuthDeviceRequestsIDDeny(ctx, uc))(t)
		poll(t, env, dc, device.CodeDenied)
		_, err := approve(t, admin, uc)
		apitest.Refused(t, err, 409)
		if list := apitest.Must(admin.GetAuthTokens(ctx))(t); len(list) != 0 {
			t.Fatalf("a denied request made a token: %+v", list)
		}

		dc, uc = start(t, env, "users:read")
		env.Clock.Advance(device.Lifetime)
		poll(t, env, dc, device.CodeExpired)
		env.Clock.Advance(time.Minute)
		// Signed access tokens last five minutes: sign in again.
		admin = env.UserClient(env.NewUser("admin"))
		if shown := apitest.Must(admin.GetAuthDeviceRequestsID(ctx, uc))(t); shown.Status != "expired" {
			t.Fatalf("show expired: %+v", shown)
		}
		_, err = approve(t, admin, uc)
		if e := apitest.Refused(t, err, 409); !strings.Contains(e.Message, "expired") {
			t.Fatalf("approve expired: %v", e)
		}
	})
}

func TestDeviceCollectedExactlyOnce(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		dc, uc := start(t, env, "progress:read")
		apitest.Must(approve(t, env.UserClient(env.NewUser("student")), uc))(t)
		env.Clock.Advance(device.Interval)
		const polls = 8
		anonymous := env.ClientAs("anonymous")
		statuses := make(chan int, polls)
		var wg sync.WaitGroup
		for range polls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := anonymous.PostAuthDeviceToken(context.Background(), client.DeviceTokenInputBody{DeviceCode: dc})
				if err == nil {
					statuses <- 200
					return
				}
				statuses <- client.StatusOf(err)
			}()
		}
		wg.Wait()
		close(statuses)
		won := 0
		for s := range statuses {
			switch s {
			case 200:
				won++
			case 400:
			default:
				t.Errorf("concurrent poll answered %d", s)
			}
		}
		if won != 1 {
			t.Fatalf("%d polls collected the token, want exactly 1", won)
		}
	})
}

func TestDeviceRoutesPerCaller(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		_, uc := start(t, env, "courses:read")
		tutor := env.NewUser("tutor")
		_, onlyTokens := createToken(t, env, tutor, "tokens:write")
		_, withCourses := createToken(t, env, tutor, "tokens:write", "courses:read")
		_, noTokens := createToken(t, env, tutor, "courses:read")
		ctx := t.Context()
		anonymous := env.ClientAs("anonymous")
		show := func(c *client.Client, code string) (*client.DeviceRequest, error) {
			return c.GetAuthDeviceRequestsID(ctx, code)
		}
		refused := func(name string, err error, status int) {
			t.Helper()
			t.Run(name, func(t *testing.T) { apitest.Refused(t, err, status) })
		}
		_, err := show(anonymous, uc)
		refused("anonymous cannot show", err, 401)
		_, err = approve(t, anonymous, uc)
		refused("anonymous cannot approve", err, 401)
		_, err = anonymous.PostAuthDeviceRequestsIDDeny(ctx, uc)
		refused("anonymous cannot deny", err, 401)
		_, err = show(env.Client("", env.As("other-admin").Token), uc)
		refused("another tenant's token is refused", err, 401)
		student := env.ClientAs("student")
		_, err = show(student, "BBBB-BBBB")
		refused("learner: unknown code", err, 404)
		_, err = show(student, "AAAA-0000")
		refused("learner: malformed code", err, 404)
		if r := apitest.Must(show(env.ClientAs("admin"), uc))(t); r.Status != "pending" || len(r.Scopes) == 0 || r.Scopes[0] != "courses:read" {
			t.Errorf("admin shows: %+v", r)
		}
		_, err = show(env.Client("", noTokens), uc)
		refused("scoped token without tokens scope cannot show", err, 403)
		_, err = env.Client("", withCourses).PostAuthDeviceCode(ctx, client.DeviceCodeInputBody{ClientName: "x", Scopes: []string{"courses:read"}})
		refused("scoped token cannot start a device login", err, 403)
		_, err = approve(t, env.Client("", onlyTokens), uc)
		if e := apitest.Refused(t, err, 403); e.Message != "A token cannot create a token with scopes wider than its own." {
			t.Errorf("scoped token cannot approve beyond its own scopes: %v", e)
		}
		if r := apitest.Must(approve(t, env.Client("", withCourses), uc))(t); r.Status != "approved" {
			t.Errorf("scoped token approves within its scopes: %+v", r)
		}
		for name, body := range map[string]client.DeviceCodeInputBody{
			"client name required": {ClientName: "", Scopes: []string{"courses:read"}},
			"unknown scope":        {ClientName: "x", Scopes: []string{"everything"}},
			"no scopes":            {ClientName: "x", Scopes: []string{}},
		} {
			_, err = anonymous.PostAuthDeviceCode(ctx, body)
			refused(name, err, 422)
		}
		// The approved token belongs to the token's user, the tutor.
		list := apitest.Must(env.UserClient(tutor).GetAuthTokens(ctx))(t)
		if !slices.ContainsFunc(list, func(tok client.Token) bool { return tok.Name == "lmsctl on laptop" }) {
			t.Fatalf("tutor's tokens: %+v", list)
		}
	})
}

func createToken(t *testing.T, env *apitest.Env, u *apitest.User, scopes ...string) (string, string) {
	t.Helper()
	tok := apitest.Must(env.UserClient(u).PostAuthTokens(t.Context(), client.CreateInputBody{Name: "agent", Scopes: scopes}))(t)
	return tok.ID, tok.Token
}

func TestDeviceTenantIsolation(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		dc, uc := start(t, env, "courses:read")
		ctx := t.Context()
		other := env.Client("other.test", env.As("other-admin").Token)
		if _, err := other.GetAuthDeviceRequestsID(ctx, uc); client.StatusOf(err) != 404 {
			t.Fatalf("another tenant's user code: %v", err)
		}
		_, err := env.Client("other.test", "").PostAuthDeviceToken(ctx, client.DeviceTokenInputBody{DeviceCode: dc})
		if e := apitest.Refused(t, err, 400); e.Code != device.CodeInvalidGrant {
			t.Fatalf("another tenant's device code: %v", e)
		}
	})
}

func TestDeviceLimits(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		anonymous := env.ClientAs("anonymous")
		for i := range 10 {
			if _, err := anonymous.PostAuthDeviceCode(ctx, client.DeviceCodeInputBody{ClientName: "x", Scopes: []string{"courses:read"}}); err != nil {
				t.Fatalf("call %d: %v", i+1, err)
			}
		}
		_, err := anonymous.PostAuthDeviceCode(ctx, client.DeviceCodeInputBody{ClientName: "x", Scopes: []string{"courses:read"}})
		if e := apitest.Refused(t, err, 429); e.RetryAfter == 0 {
			t.Fatal("429 without Retry-After")
		}
		for i := range 61 {
			want := 400
			if i == 60 {
				want = 429
			}
			_, err := anonymous.PostAuthDeviceToken(ctx, client.DeviceTokenInputBody{DeviceCode: "lms_dc_guess"})
			apitest.Refused(t, err, want)
		}
		// Show, approve and deny share five calls a minute per user.
		user := env.UserClient(env.NewUser("student"))
		show := func(c *client.Client) error {
			_, err := c.GetAuthDeviceRequestsID(ctx, "BBBB-BBBB")
			return err
		}
		deny := func(c *client.Client) error {
			_, err := c.PostAuthDeviceRequestsIDDeny(ctx, "BBBB-BBBB")
			return err
		}
		approveUnknown := func(c *client.Client) error {
			_, err := approve(t, c, "BBBB-BBBB")
			return err
		}
		for _, call := range []func(*client.Client) error{show, approveUnknown, deny, show, approveUnknown} {
			apitest.Refused(t, call(user), 404)
		}
		apitest.Refused(t, show(user), 429)
		// Another user has a counter of its own.
		apitest.Refused(t, show(env.UserClient(env.NewUser("student"))), 404)
		env.Clock.Advance(time.Minute)
		apitest.Refused(t, show(user), 404)
	})
}

func TestDevicePruneJob(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		learner := env.NewUser("student")
		// One approved and collected, one approved and never collected.
		dcDone, ucDone := start(t, env, "progress:read")
		apitest.Must(approve(t, env.UserClient(learner), ucDone))(t)
		secret := collect(t, env, dcDone)
		dcLost, ucLost := start(t, env, "progress:read")
		lost := apitest.Must(approve(t, env.UserClient(learner), ucLost))(t).TokenID
		if lost == nil {
			t.Fatal("an approval without its token id")
		}

		env.Clock.Advance(device.Lifetime)
		tick(t, env)
		// Signed access tokens last five minutes: sign in again.
		learner.Token, _ = env.Login(env.Host, learner.Email, learner.Password)
		admin := env.UserClient(env.NewUser("admin"))
		list := apitest.Must(admin.GetAdminTokens(ctx, client.GetAdminTokensParams{IncludeRevoked: client.Ptr(true), UserID: &learner.ID}))(t)
		revoked := map[string]bool{}
		for _, tok := range list.Items {
			revoked[tok.ID] = tok.RevokedAt != nil
		}
		if len(revoked) != 2 || !revoked[*lost] {
			t.Fatalf("after the prune: %+v", list.Items)
		}
		apitest.Must(env.Client("", secret).GetAuthTokensCurrent(ctx))(t)
		poll(t, env, dcLost, device.CodeExpired)
		if r := apitest.Must(env.UserClient(learner).GetAuthDeviceRequestsID(ctx, ucLost))(t); r.Status != "revoked" {
			t.Fatalf("uncollected request is %q", r.Status)
		}

		// A day after expiry both requests are deleted.
		env.Clock.Advance(24 * time.Hour)
		tick(t, env)
		learner.Token, _ = env.Login(env.Host, learner.Email, learner.Password)
		if n := env.Count(t, `SELECT COUNT(*) FROM device_requests`); n != 0 {
			t.Fatalf("%d requests left a day after expiry", n)
		}
		_, err := env.UserClient(learner).GetAuthDeviceRequestsID(ctx, ucDone)
		apitest.Refused(t, err, 404)
	})
}

func tick(t *testing.T, env *apitest.Env) {
	t.Helper()
	if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func TestDeviceSecretsStayOutOfLogs(t *testing.T) {
	var log bytes.Buffer
	env := apitest.New(t, "sqlite", apitest.Options{Log: &log})
	dc, uc := start(t, env, "courses:read")
	apitest.Must(approve(t, env.UserClient(env.NewUser("student")), uc))(t)
	secret := collect(t, env, dc)
	poll(t, env, dc, device.CodeInvalidGrant)
	env.Server.Audit.Flush(context.Background())
	for _, s := range []string{dc, secret, strings.TrimPrefix(dc, "lms_dc_")} {
		if bytes.Contains(log.Bytes(), []byte(s)) {
			t.Fatalf("a secret reached the log")
		}
	}
	if log.Len() == 0 {
		t.Fatal("no log lines: the test would not notice a secret")
	}
}
