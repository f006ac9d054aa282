package auth_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func setConfig(t *testing.T, env *apitest.Env, key string, value any) {
	t.Helper()
	apitest.Must(env.ClientAs("admin").PostAdminConfig(t.Context(),
		client.UpdateInputBody{Config: []client.Item{{Key: key, Value: value}}}))(t)
}

// me reads the profile with token: nil when it works, the refusal when not.
func me(t *testing.T, env *apitest.Env, token string) error {
	_, err := env.Client("", token).GetProfileMe(t.Context())
	return err
}

func TestLogin(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		student := env.As("student")
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "right credentials", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email, "password": student.Password},
				Status: 200, JSON: map[string]any{"success": true, "data.token": apitest.Present, "data.expires_at": apitest.Present},
				Events: []string{"Login"}},
			{Name: "e-mail is case-insensitive", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": strings.ToUpper(student.Email), "password": student.Password},
				Status: 200, Events: []string{"Login"}},
			{Name: "wrong password", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email, "password": "wrong-password"},
				Status: 422, JSON: map[string]any{"success": false, "message": "Invalid credentials."}, Events: []string{}},
			{Name: "unknown address", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": "nobody@school.test", "password": "whatever-pass"},
				Status: 422, Events: []string{}},
			{Name: "missing password", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email},
				Status: 422, JSON: map[string]any{"errors.password.0": "The password field is required."}},
			{Name: "malformed JSON", Method: "POST", Path: "/api/auth/login", Body: []byte(`{"email":`),
				Headers: map[string]string{"Content-Type": "application/json"}, Status: 400, JSON: map[string]any{"success": false}},
			{Name: "wrong type", Method: "POST", Path: "/api/auth/login",
				Body: map[string]any{"email": 12, "password": "x"}, Status: 422, JSON: map[string]any{"errors.email": apitest.Present}},
			{Name: "remember_me accepts 1", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email, "password": student.Password, "remember_me": 1},
				Status: 200, Check: expiresIn(30 * 24 * time.Hour)},
			{Name: "remember_me accepts true", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email, "password": student.Password, "remember_me": true},
				Status: 200, Check: expiresIn(30 * 24 * time.Hour)},
			{Name: "default lifetime is the setting", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email, "password": student.Password, "remember_me": 0},
				Status: 200, Check: expiresIn(5 * time.Minute)},
		})
	})
}

func expiresIn(d time.Duration) func(t *testing.T, env *apitest.Env, res *apitest.Response) {
	return func(t *testing.T, env *apitest.Env, res *apitest.Response) {
		exp, err := time.Parse(time.RFC3339, res.String("data.expires_at"))
		if err != nil {
			t.Fatalf("expires_at: %v", err)
		}
		livesFor(t, env, exp, d)
	}
}

// livesFor fails the test unless a token expiring at exp lives d from now.
func livesFor(t *testing.T, env *apitest.Env, exp time.Time, d time.Duration) {
	t.Helper()
	if got := exp.Sub(env.Clock.Now()); got < d-2*time.Second || got > d+2*time.Second {
		t.Fatalf("token lives %v, want %v", got, d)
	}
}

func TestTokenLifecycle(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.NewUser("student")
		if err := me(t, env, u.Token); err != nil {
			t.Fatalf("fresh token: %v", err)
		}
		// Refresh replaces the token; the old one stops working.
		fresh := apitest.Must(env.UserClient(u).GetAuthRefresh(ctx))(t).Token
		if client.StatusOf(me(t, env, u.Token)) != 401 || me(t, env, fresh) != nil {
			t.Fatal("refresh must revoke the old token and issue a working one")
		}
		// Logout revokes the current token and records Logout.
		before := env.LastEventID()
		apitest.OK(t, env.Client("", fresh).PostAuthLogout(ctx))
		if got := env.EventNames(before); len(got) != 1 || got[0] != "Logout" {
			t.Fatalf("events %v", got)
		}
		if client.StatusOf(me(t, env, fresh)) != 401 {
			t.Fatal("a logged-out token must answer 401")
		}
		// Expiry follows the injected clock.
		token, _ := env.Login(env.Host, u.Email, u.Password)
		env.Clock.Advance(5*time.Minute + time.Second)
		if e := apitest.Refused(t, me(t, env, token), 401); e.Message != "Token expired." {
			t.Fatalf("expired token: %v", e)
		}
		// Malformed tokens and tokens of another tenant answer 401.
		for name, tok := range map[string]string{
			"garbage":      "not-a-token",
			"other tenant": env.As("other-admin").Token,
			"tampered":     token[:len(token)-4] + "AAAA",
		} {
			if err := me(t, env, tok); client.StatusOf(err) != 401 {
				t.Errorf("%s token: %v, want 401", name, err)
			}
		}
	})
}

func TestRememberMeRefreshKeepsClass(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.NewUser("student")
		login := apitest.Must(env.ClientAs("anonymous").PostAuthLogin(ctx,
			client.LoginInputBody{Email: u.Email, Password: u.Password, RememberMe: "1"}))(t)
		env.Clock.Advance(10 * 24 * time.Hour)
		refreshed := apitest.Must(env.Client("", login.Token).GetAuthRefresh(ctx))(t)
		livesFor(t, env, refreshed.ExpiresAt, 30*24*time.Hour)
	})
}

var linkPattern = regexp.MustCompile(`https?://\S+`)

func TestRegistrationAndVerification(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		body := map[string]any{"email": "new@school.test", "password": "long-enough", "first_name": "Ada", "last_name": "Lovelace"}
		res := apitest.RunOne(t, env, apitest.Scenario{Name: "register", Method: "POST", Path: "/api/auth/register",
			Body: body, Status: 201, JSON: map[string]any{"data.email": "new@school.test", "data.email_verified": false,
				"data.roles": []string{"student"}}, Events: []string{"AccountRegistered"}})
		_ = res
		apitest.RunOne(t, env, apitest.Scenario{Name: "taken address", Method: "POST", Path: "/api/auth/register",
			Body: body, Status: 422, JSON: map[string]any{"errors.email.0": "The email has already been taken."}, Events: []string{}})
		apitest.RunOne(t, env, apitest.Scenario{Name: "unverified cannot log in", Method: "POST", Path: "/api/auth/login",
			Body: map[string]any{"email": "new@school.test", "password": "long-enough"}, Status: 422})

		mails := env.SMTP.Wait(t, 1, 10*time.Second)
		link := linkPattern.FindString(mails[0].Body)
		if mails[0].To[0] != "new@school.test" || !strings.Contains(link, "/api/auth/email/verify/") {
			t.Fatalf("verification mail: %+v", mails[0])
		}
		path := link[strings.Index(link, "/api/"):]
		apitest.RunOne(t, env, apitest.Scenario{Name: "tampered link", Method: "GET", Path: path + "0", Status: 403})
		apitest.RunOne(t, env, apitest.Scenario{Name: "verify", Method: "GET", Path: path, Status: 200,
			Events: []string{"AccountConfirmed"}})
		apitest.RunOne(t, env, apitest.Scenario{Name: "verified logs in", Method: "POST", Path: "/api/auth/login",
			Body: map[string]any{"email": "new@school.test", "password": "long-enough"}, Status: 200})
	})
}

func TestRegistrationJoinsRegisterableGroups(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		open := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Open", Registerable: client.Ptr(true)}))(t).ID
		closed := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Closed"}))(t).ID
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "lists only registerable groups", Method: "GET", Path: "/api/auth/registerable-groups", Status: 200,
				JSON: map[string]any{"data.0.name": "Open", "data.1": nil}},
			{Name: "closed group refused", Method: "POST", Path: "/api/auth/register", Status: 422,
				Body: map[string]any{"email": "g1@school.test", "password": "long-enough", "first_name": "G", "last_name": "One",
					"groups": []int64{closed}}, JSON: map[string]any{"errors.groups": apitest.Present}, Events: []string{}},
			{Name: "joins the open group", Method: "POST", Path: "/api/auth/register", Status: 201,
				Body: map[string]any{"email": "g2@school.test", "password": "long-enough", "first_name": "G", "last_name": "Two",
					"groups": []int64{open}}, Events: []string{"UserAddedToGroup", "AccountRegistered"}},
		})
	})
}

func TestRegistrationSettings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		body := func(email string) map[string]any {
			return map[string]any{"email": email, "password": "long-enough", "first_name": "A", "last_name": "B"}
		}
		setConfig(t, env, "lms_auth.registration", "disabled")
		apitest.RunOne(t, env, apitest.Scenario{Name: "closed", Method: "POST", Path: "/api/auth/register",
			Body: body("a@school.test"), Status: 403, Events: []string{}})
		setConfig(t, env, "lms_auth.registration", "enabled")
		setConfig(t, env, "lms_auth.account_must_be_enabled_by_admin", "enabled")
		setConfig(t, env, "lms_auth.auto_verified_email", "enabled")
		apitest.RunOne(t, env, apitest.Scenario{Name: "needs an admin", Method: "POST", Path: "/api/auth/register",
			Body: body("b@school.test"), Status: 201, JSON: map[string]any{"data.is_active": false, "data.email_verified": true},
			Events: []string{"AccountRegistered", "AccountMustBeEnableByAdmin"}})
		apitest.RunOne(t, env, apitest.Scenario{Name: "inactive cannot log in", Method: "POST", Path: "/api/auth/login",
			Body: map[string]any{"email": "b@school.test", "password": "long-enough"}, Status: 422})
	})
}

func TestPasswordReset(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		apitest.RunOne(t, env, apitest.Scenario{Name: "unknown address answers the same", Method: "POST",
			Path: "/api/auth/password/forgot", Body: map[string]any{"email": "nobody@school.test"}, Status: 200, Events: []string{}})
		apitest.RunOne(t, env, apitest.Scenario{Name: "forgot", Method: "POST", Path: "/api/auth/password/forgot",
			Body: map[string]any{"email": u.Email, "return_url": "https://front.school.test/reset"}, Status: 200,
			Events: []string{"ForgotPassword"}})
		mail := env.SMTP.Wait(t, 1, 10*time.Second)[0]
		token := regexp.MustCompile(`token is:\s+([A-Za-z0-9]{32})`).FindStringSubmatch(mail.Body)
		if token == nil || !strings.Contains(mail.Body, "https://front.school.test/reset?") {
			t.Fatalf("reset mail: %q", mail.Body)
		}
		reset := func(tok string) map[string]any {
			return map[string]any{"email": u.Email, "token": tok, "password": "brand-new-pass"}
		}
		apitest.RunOne(t, env, apitest.Scenario{Name: "wrong token", Method: "POST", Path: "/api/auth/password/reset",
			Body: reset(strings.Repeat("x", 32)), Status: 422, Events: []string{}})
		apitest.RunOne(t, env, apitest.Scenario{Name: "reset", Method: "POST", Path: "/api/auth/password/reset",
			Body: reset(token[1]), Status: 200, Events: []string{"ResetPassword"}})
		apitest.RunOne(t, env, apitest.Scenario{Name: "token is single use", Method: "POST", Path: "/api/auth/password/reset",
			Body: reset(token[1]), Status: 422})
		if client.StatusOf(me(t, env, u.Token)) != 401 {
			t.Fatal("a password reset must end existing sessions")
		}
		env.Login(env.Host, u.Email, "brand-new-pass")
	})
}

func TestResendIsLimited(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		// A verified user gets 409 each time; the limit counts the calls anyway.
		ctx := t.Context()
		u := env.UserClient(env.NewUser("student"))
		for i := 0; i < 6; i++ {
			if err := u.PostAuthEmailResend(ctx); client.StatusOf(err) != http.StatusConflict {
				t.Fatalf("call %d: %v", i, err)
			}
		}
		if e := apitest.Refused(t, u.PostAuthEmailResend(ctx), 429); e.RetryAfter == 0 {
			t.Fatalf("7th resend without Retry-After: %v", e)
		}
		env.Clock.Advance(time.Minute)
		if err := u.PostAuthEmailResend(ctx); client.StatusOf(err) == 429 {
			t.Fatal("a new window must allow resends again")
		}
	})
}

func TestImpersonate(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		student := env.As("student")
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "student may not", As: "student", Method: "POST", Path: "/api/admin/auth/impersonate",
				Body: map[string]any{"user_id": env.As("tutor").ID}, Status: 403, Events: []string{}},
			{Name: "unknown user", As: "admin", Method: "POST", Path: "/api/admin/auth/impersonate",
				Body: map[string]any{"user_id": 99999}, Status: 422},
			{Name: "admin impersonates", As: "admin", Method: "POST", Path: "/api/admin/auth/impersonate",
				Body: map[string]any{"user_id": student.ID}, Status: 200, Events: []string{"Impersonate"},
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					p := apitest.Must(env.Client("", res.String("data.token")).GetProfileMe(t.Context()))(t)
					if p.ID != student.ID {
						t.Fatalf("impersonation token acts as %v, want %d", p.ID, student.ID)
					}
				}},
		})
	})
}

func TestUnknownTenant(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	// Raw: the error envelope itself.
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/config", Host: "nowhere.test"})
	if res.Status != 404 || res.String("message") != "Unknown tenant." || res.Get("success") != false {
		t.Fatalf("unknown host: %d %s", res.Status, res.Body)
	}
}
