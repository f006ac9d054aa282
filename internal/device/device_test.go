package device_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/device"
	"github.com/lms-platform/lms/internal/tokens"
)

var userCode = regexp.MustCompile(`^[BCDFGHJKMNPQRTVWXY]{4}-[BCDFGHJKMNPQRTVWXY]{4}$`)

// start begins a device login over HTTP as an anonymous client and
// returns its device code and user code.
func start(t *testing.T, env *apitest.Env, scopes ...string) (string, string) {
	t.Helper()
	res := env.Call(t, 200, "POST", "/api/auth/device/code", "", map[string]any{"client_name": "lmsctl on laptop", "scopes": scopes})
	dc, uc := res.String("data.device_code"), res.String("data.user_code")
	if !strings.HasPrefix(dc, "lms_dc_") || !userCode.MatchString(uc) {
		t.Fatalf("device code answer: %s", res.Body)
	}
	return dc, uc
}

// poll polls with the device code after waiting the interval, and checks
// the answer's status and error code ("" for a success).
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

func TestDeviceLoginApproved(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		res := env.Call(t, 200, "POST", "/api/auth/device/code", "", map[string]any{"client_name": "lmsctl on laptop",
			"scopes": []string{"courses:read", "profile:read"}})
		dc, uc := res.String("data.device_code"), res.String("data.user_code")
		if !userCode.MatchString(uc) || !strings.HasPrefix(dc, "lms_dc_") {
			t.Fatalf("codes: %s", res.Body)
		}
		if res.String("data.verification_uri") != "http://"+env.Host+":3000/device" ||
			res.String("data.verification_uri_complete") != "http://"+env.Host+":3000/device?code="+uc ||
			res.Number("data.expires_in") != 600 || res.Number("data.interval") != 5 {
			t.Fatalf("grant: %s", res.Body)
		}
		if env.Count(t, `SELECT COUNT(*) FROM device_requests WHERE device_code_hash = $1`, dc) != 0 {
			t.Fatal("the device code itself is stored")
		}
		poll(t, env, dc, device.CodePending)
		// Polling again at once is too fast; the interval grows.
		slow := env.Call(t, 400, "POST", "/api/auth/device/token", "", map[string]any{"device_code": dc})
		if slow.String("error") != device.CodeSlowDown {
			t.Fatalf("fast poll: %s", slow.Body)
		}
		env.Clock.Advance(device.Interval)
		poll(t, env, dc, device.CodePending)

		learner := env.NewUser("student")
		// The typed code may be lower case, without the dash.
		typed := strings.ToLower(strings.ReplaceAll(uc, "-", ""))
		shown := env.Call(t, 200, "GET", requestPath(typed, ""), learner.Token, nil)
		if shown.String("data.client_name") != "lmsctl on laptop" || shown.String("data.status") != "pending" ||
			shown.String("data.user_code") != uc || shown.String("data.ip") == "" || shown.String("data.created_at") == "" ||
			shown.Get("data.scopes.1") != "profile:read" || shown.Get("data.device_code") != nil {
			t.Fatalf("show: %s", shown.Body)
		}
		// An approval cannot widen what the device asked for.
		wide := env.Call(t, 403, "POST", requestPath(uc, "approve"), learner.Token, map[string]any{"scopes": []string{"courses:write"}})
		if !strings.Contains(wide.String("message"), "did not ask for") {
			t.Fatalf("widening: %s", wide.Body)
		}
		ok := env.Call(t, 200, "POST", requestPath(uc, "approve"), learner.Token, map[string]any{"scopes": []string{"courses:read"}})
		if ok.String("data.status") != "approved" || ok.String("data.token_id") == "" || ok.Get("data.approved_scopes.0") != "courses:read" ||
			ok.Get("data.approved_scopes.1") != nil {
			t.Fatalf("approve: %s", ok.Body)
		}
		env.Clock.Advance(time.Minute)
		env.Call(t, 409, "POST", requestPath(uc, "approve"), learner.Token, nil)
		env.Call(t, 409, "POST", requestPath(uc, "deny"), learner.Token, nil)
		// Another user sees the decision but not the token.
		other := env.Call(t, 200, "GET", requestPath(uc, ""), env.NewUser("student").Token, nil)
		if other.String("data.status") != "approved" || other.Get("data.token_id") != nil {
			t.Fatalf("show to another user: %s", other.Body)
		}

		got := poll(t, env, dc, "")
		secret := got.String("data.token")
		if !strings.HasPrefix(secret, tokens.Prefix) || got.Number("data.user_id") != float64(learner.ID) ||
			got.Get("data.scopes.0") != "courses:read" || got.Get("data.scopes.1") != nil ||
			got.String("data.id") != ok.String("data.token_id") || got.String("data.name") != "lmsctl on laptop" {
			t.Fatalf("collected: %s", got.Body)
		}
		cur := env.Call(t, 200, "GET", "/api/auth/tokens/current", secret, nil)
		if cur.Number("data.user_id") != float64(learner.ID) {
			t.Fatalf("the token is not the approver's: %s", cur.Body)
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
		admin := env.As("admin")
		dc, uc := start(t, env, "users:read")
		env.Call(t, 200, "POST", requestPath(uc, "deny"), admin.Token, nil)
		poll(t, env, dc, device.CodeDenied)
		env.Call(t, 409, "POST", requestPath(uc, "approve"), admin.Token, nil)
		if list := env.Call(t, 200, "GET", "/api/auth/tokens", admin.Token, nil); list.Get("data.0") != nil {
			t.Fatalf("a denied request made a token: %s", list.Body)
		}

		dc, uc = start(t, env, "users:read")
		env.Clock.Advance(device.Lifetime)
		poll(t, env, dc, device.CodeExpired)
		env.Clock.Advance(time.Minute)
		// Signed access tokens last five minutes: sign in again.
		admin = env.NewUser("admin")
		shown := env.Call(t, 200, "GET", requestPath(uc, ""), admin.Token, nil)
		if shown.String("data.status") != "expired" {
			t.Fatalf("show expired: %s", shown.Body)
		}
		res := env.Call(t, 409, "POST", requestPath(uc, "approve"), admin.Token, nil)
		if !strings.Contains(res.String("message"), "expired") {
			t.Fatalf("approve expired: %s", res.Body)
		}
	})
}

func TestDeviceCollectedExactlyOnce(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		dc, uc := start(t, env, "progress:read")
		env.Call(t, 200, "POST", requestPath(uc, "approve"), env.NewUser("student").Token, nil)
		env.Clock.Advance(device.Interval)
		const polls = 8
		statuses := make(chan int, polls)
		var wg sync.WaitGroup
		for range polls {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- env.Do(apitest.Request{Method: "POST", Path: "/api/auth/device/token",
					Body: map[string]any{"device_code": dc}}).Status
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
		_, onlyTokens := createToken(t, env, tutor.Token, "tokens:write")
		_, withCourses := createToken(t, env, tutor.Token, "tokens:write", "courses:read")
		_, noTokens := createToken(t, env, tutor.Token, "courses:read")
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous cannot show", Method: "GET", Path: requestPath(uc, ""), Status: 401},
			{Name: "anonymous cannot approve", Method: "POST", Path: requestPath(uc, "approve"), Status: 401},
			{Name: "anonymous cannot deny", Method: "POST", Path: requestPath(uc, "deny"), Status: 401},
			{Name: "another tenant's token is refused", As: "other-admin", Method: "GET", Path: requestPath(uc, ""), Status: 401},
			{Name: "learner: unknown code", As: "student", Method: "GET", Path: requestPath("BBBB-BBBB", ""), Status: 404},
			{Name: "learner: malformed code", As: "student", Method: "GET", Path: requestPath("AAAA-0000", ""), Status: 404},
			{Name: "admin shows", As: "admin", Method: "GET", Path: requestPath(uc, ""), Status: 200,
				JSON: map[string]any{"data.status": "pending", "data.scopes.0": "courses:read"}},
			{Name: "scoped token without tokens scope cannot show", Method: "GET", Path: requestPath(uc, ""),
				Headers: map[string]string{"Authorization": "Bearer " + noTokens}, Status: 403},
			{Name: "scoped token cannot start a device login", Method: "POST", Path: "/api/auth/device/code",
				Headers: map[string]string{"Authorization": "Bearer " + withCourses},
				Body:    map[string]any{"client_name": "x", "scopes": []string{"courses:read"}}, Status: 403},
			{Name: "scoped token cannot approve beyond its own scopes", Method: "POST", Path: requestPath(uc, "approve"),
				Headers: map[string]string{"Authorization": "Bearer " + onlyTokens}, Status: 403,
				JSON: map[string]any{"message": "A token cannot create a token with scopes wider than its own."}},
			{Name: "scoped token approves within its scopes", Method: "POST", Path: requestPath(uc, "approve"),
				Headers: map[string]string{"Authorization": "Bearer " + withCourses}, Status: 200,
				JSON: map[string]any{"data.status": "approved"}},
			{Name: "client name required", Method: "POST", Path: "/api/auth/device/code",
				Body: map[string]any{"client_name": "", "scopes": []string{"courses:read"}}, Status: 422},
			{Name: "unknown scope", Method: "POST", Path: "/api/auth/device/code",
				Body: map[string]any{"client_name": "x", "scopes": []string{"everything"}}, Status: 422},
			{Name: "no scopes", Method: "POST", Path: "/api/auth/device/code",
				Body: map[string]any{"client_name": "x", "scopes": []string{}}, Status: 422},
		})
		// The approved token belongs to the token's user, the tutor.
		if list := env.Call(t, 200, "GET", "/api/auth/tokens", tutor.Token, nil); !strings.Contains(string(list.Body), `"name":"lmsctl on laptop"`) {
			t.Fatalf("tutor's tokens: %s", list.Body)
		}
	})
}

func createToken(t *testing.T, env *apitest.Env, bearer string, scopes ...string) (string, string) {
	t.Helper()
	res := env.Call(t, 201, "POST", "/api/auth/tokens", bearer, map[string]any{"name": "agent", "scopes": scopes})
	return res.String("data.id"), res.String("data.token")
}

func TestDeviceTenantIsolation(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		dc, uc := start(t, env, "courses:read")
		other := env.As("other-admin")
		res := env.Do(apitest.Request{Method: "GET", Path: requestPath(uc, ""), Host: "other.test", Token: other.Token})
		if res.Status != 404 {
			t.Fatalf("another tenant's user code: %d %s", res.Status, res.Body)
		}
		res = env.Do(apitest.Request{Method: "POST", Path: "/api/auth/device/token", Host: "other.test",
			Body: map[string]any{"device_code": dc}})
		if res.Status != 400 || res.String("error") != device.CodeInvalidGrant {
			t.Fatalf("another tenant's device code: %d %s", res.Status, res.Body)
		}
	})
}

func TestDeviceLimits(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		for i := range 11 {
			want := 200
			if i == 10 {
				want = 429
			}
			res := env.Call(t, want, "POST", "/api/auth/device/code", "", map[string]any{"client_name": "x", "scopes": []string{"courses:read"}})
			if want == 429 && res.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
		}
		for i := range 61 {
			want := 400
			if i == 60 {
				want = 429
			}
			env.Call(t, want, "POST", "/api/auth/device/token", "", map[string]any{"device_code": "lms_dc_guess"})
		}
		// Show, approve and deny share five calls a minute per user.
		user := env.NewUser("student")
		for _, action := range []string{"", "approve", "deny", "", "approve"} {
			method := "POST"
			if action == "" {
				method = "GET"
			}
			env.Call(t, 404, method, requestPath("BBBB-BBBB", action), user.Token, nil)
		}
		env.Call(t, 429, "GET", requestPath("BBBB-BBBB", ""), user.Token, nil)
		// Another user has a counter of its own.
		env.Call(t, 404, "GET", requestPath("BBBB-BBBB", ""), env.NewUser("student").Token, nil)
		env.Clock.Advance(time.Minute)
		env.Call(t, 404, "GET", requestPath("BBBB-BBBB", ""), user.Token, nil)
	})
}

func TestDevicePruneJob(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		learner := env.NewUser("student")
		// One approved and collected, one approved and never collected.
		dcDone, ucDone := start(t, env, "progress:read")
		env.Call(t, 200, "POST", requestPath(ucDone, "approve"), learner.Token, nil)
		secret := poll(t, env, dcDone, "").String("data.token")
		dcLost, ucLost := start(t, env, "progress:read")
		lost := env.Call(t, 200, "POST", requestPath(ucLost, "approve"), learner.Token, nil).String("data.token_id")

		env.Clock.Advance(device.Lifetime)
		tick(t, env)
		// Signed access tokens last five minutes: sign in again.
		learner.Token, _ = env.Login(env.Host, learner.Email, learner.Password)
		admin := env.NewUser("admin")
		list := env.Call(t, 200, "GET", "/api/admin/tokens?include_revoked=true&user_id="+itoa(learner.ID), admin.Token, nil)
		revoked := map[string]bool{}
		for i := 0; list.Get("data."+itoa(int64(i))) != nil; i++ {
			revoked[list.String("data."+itoa(int64(i))+".id")] = list.Get("data."+itoa(int64(i))+".revoked_at") != nil
		}
		if len(revoked) != 2 || !revoked[lost] {
			t.Fatalf("after the prune: %s", list.Body)
		}
		env.Call(t, 200, "GET", "/api/auth/tokens/current", secret, nil)
		poll(t, env, dcLost, device.CodeExpired)
		if s := env.Call(t, 200, "GET", requestPath(ucLost, ""), learner.Token, nil).String("data.status"); s != "revoked" {
			t.Fatalf("uncollected request is %q", s)
		}

		// A day after expiry both requests are deleted.
		env.Clock.Advance(24 * time.Hour)
		tick(t, env)
		learner.Token, _ = env.Login(env.Host, learner.Email, learner.Password)
		if n := env.Count(t, `SELECT COUNT(*) FROM device_requests`); n != 0 {
			t.Fatalf("%d requests left a day after expiry", n)
		}
		env.Call(t, 404, "GET", requestPath(ucDone, ""), learner.Token, nil)
	})
}

func tick(t *testing.T, env *apitest.Env) {
	t.Helper()
	if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestDeviceSecretsStayOutOfLogs(t *testing.T) {
	var log bytes.Buffer
	env := apitest.New(t, "sqlite", apitest.Options{Log: &log})
	dc, uc := start(t, env, "courses:read")
	env.Call(t, 200, "POST", requestPath(uc, "approve"), env.NewUser("student").Token, nil)
	secret := poll(t, env, dc, "").String("data.token")
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
