package auth_test

import (
	"net/http"
	"regexp"
	"slices"
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
		ctx := t.Context()
		student := env.As("student")
		anonymous := env.ClientAs("anonymous")
		// Raw: the envelopes, and bodies the client cannot send (a field
		// left out, a wrong type, broken JSON).
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "right credentials", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email, "password": student.Password},
				Status: 200, JSON: map[string]any{"success": true, "data.token": apitest.Present, "data.expires_at": apitest.Present},
				Events: []string{"Login"}},
			{Name: "wrong password", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email, "password": "wrong-password"},
				Status: 422, JSON: map[string]any{"success": false, "message": "Invalid credentials."}, Events: []string{}},
			{Name: "missing password", Method: "POST", Path: "/api/auth/login",
				Body:   map[string]any{"email": student.Email},
				Status: 422, JSON: map[string]any{"errors.password.0": "The password field is required."}},
			{Name: "malformed JSON", Method: "POST", Path: "/api/auth/login", Body: []byte(`{"email":`),
				Headers: map[string]string{"Content-Type": "application/json"}, Status: 400, JSON: map[string]any{"success": false}},
			{Name: "wrong type", Method: "POST", Path: "/api/auth/login",
				Body: map[string]any{"email": 12, "password": "x"}, Status: 422, JSON: map[string]any{"errors.email": apitest.Present}},
		})
		login := func(body client.LoginInputBody) (*client.Issued, error) { return anonymous.PostAuthLogin(ctx, body) }
		t.Run("e-mail is case-insensitive", func(t *testing.T) {
			env.Recorded(t, []string{"Login"}, func() {
				apitest.Must(login(client.LoginInputBody{Email: strings.ToUpper(student.Email), Password: student.Password}))(t)
			})
		})
		t.Run("unknown address", func(t *testing.T) {
			env.Recorded(t, []string{}, func() {
				_, err := login(client.LoginInputBody{Email: "nobody@school.test", Password: "whatever-pass"})
				apitest.Refused(t, err, 422)
			})
		})
		for _, c := range []struct {
			name       string
			rememberMe any
			lives      time.Duration
		}{
			{"remember_me accepts 1", 1, 30 * 24 * time.Hour},
			{"remember_me accepts true", true, 30 * 24 * time.Hour},
			{"default lifetime is the setting", 0, 5 * time.Minute},
		} {
			t.Run(c.name, func(t *testing.T) {
				issued := apitest.Must(login(client.LoginInputBody{Email: student.Email, Password: student.Password,
					RememberMe: c.rememberMe}))(t)
				livesFor(t, env, issued.ExpiresAt, c.lives)
			})
		}
	})
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
			"tampered":     apitest.Tampered(token),
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
		ctx := t.Context()
		anonymous := env.ClientAs("anonymous")
		body := client.RegisterInputBody{Email: "new@school.test", Password: "long-enough", FirstName: "Ada", LastName: "Lovelace"}
		env.Recorded(t, []string{"AccountRegistered"}, func() {
			u := apitest.Must(anonymous.PostAuthRegister(ctx, body))(t)
			if u.Email != "new@school.test" || u.EmailVerified || !slices.Equal(u.Roles, []string{"student"}) {
				t.Errorf("register: %+v", u)
			}
		})
		env.Recorded(t, []string{}, func() {
			_, err := anonymous.PostAuthRegister(ctx, body)
			if e := apitest.Refused(t, err, 422); len(e.Errors["email"]) == 0 || e.Errors["email"][0] != "The email has already been taken." {
				t.Errorf("taken address: %v", e)
			}
		})
		_, err := anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: "new@school.test", Password: "long-enough"})
		apitest.Refused(t, err, 422) // not verified yet

		mails := env.SMTP.Wait(t, 1, 10*time.Second)
		link := linkPattern.FindString(mails[0].Body)
		if mails[0].To[0] != "new@school.test" || !strings.Contains(link, "/api/auth/email/verify/") {
			t.Fatalf("verification mail: %+v", mails[0])
		}
		// Raw: the link as mailed.
		path := link[strings.Index(link, "/api/"):]
		apitest.RunOne(t, env, apitest.Scenario{Name: "tampered link", Method: "GET", Path: path + "0", Status: 403})
		apitest.RunOne(t, env, apitest.Scenario{Name: "verify", Method: "GET", Path: path, Status: 200,
			Events: []string{"AccountConfirmed"}})
		apitest.Must(anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: "new@school.test", Password: "long-enough"}))(t)
	})
}

func TestRegistrationJoinsRegisterableGroups(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin, anonymous := env.ClientAs("admin"), env.ClientAs("anonymous")
		open := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Open", Registerable: client.Ptr(true)}))(t).ID
		closed := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Closed"}))(t).ID
		if groups := apitest.Must(anonymous.GetAuthRegisterableGroups(ctx))(t); len(groups) != 1 || groups[0].Name != "Open" {
			t.Errorf("lists only registerable groups: %+v", groups)
		}
		env.Recorded(t, []string{}, func() {
			_, err := anonymous.PostAuthRegister(ctx, client.RegisterInputBody{Email: "g1@school.test", Password: "long-enough",
				FirstName: "G", LastName: "One", Groups: []int64{closed}})
			if e := apitest.Refused(t, err, 422); len(e.Errors["groups"]) == 0 {
				t.Errorf("closed group refused: %v", e)
			}
		})
		env.Recorded(t, []string{"UserAddedToGroup", "AccountRegistered"}, func() {
			apitest.Must(anonymous.PostAuthRegister(ctx, client.RegisterInputBody{Email: "g2@school.test", Password: "long-enough",
				FirstName: "G", LastName: "Two", Groups: []int64{open}}))(t)
		})
	})
}

func TestRegistrationSettings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		anonymous := env.ClientAs("anonymous")
		body := func(email string) client.RegisterInputBody {
			return client.RegisterInputBody{Email: email, Password: "long-enough", FirstName: "A", LastName: "B"}
		}
		setConfig(t, env, "lms_auth.registration", "disabled")
		env.Recorded(t, []string{}, func() {
			_, err := anonymous.PostAuthRegister(ctx, body("a@school.test"))
			apitest.Refused(t, err, 403) // closed
		})
		setConfig(t, env, "lms_auth.registration", "enabled")
		setConfig(t, env, "lms_auth.account_must_be_enabled_by_admin", "enabled")
		setConfig(t, env, "lms_auth.auto_verified_email", "enabled")
		env.Recorded(t, []string{"AccountRegistered", "AccountMustBeEnableByAdmin"}, func() {
			if u := apitest.Must(anonymous.PostAuthRegister(ctx, body("b@school.test")))(t); u.IsActive || !u.EmailVerified {
				t.Errorf("needs an admin: %+v", u)
			}
		})
		_, err := anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: "b@school.test", Password: "long-enough"})
		apitest.Refused(t, err, 422) // inactive
	})
}

func TestPasswordReset(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		anonymous := env.ClientAs("anonymous")
		u := env.NewUser("student")
		env.Recorded(t, []string{}, func() { // an unknown address answers the same
			apitest.OK(t, anonymous.PostAuthPasswordForgot(ctx, client.EmailInputBody{Email: "nobody@school.test"}))
		})
		env.Recorded(t, []string{"ForgotPassword"}, func() {
			apitest.OK(t, anonymous.PostAuthPasswordForgot(ctx, client.EmailInputBody{Email: u.Email,
				ReturnURL: client.Ptr("https://front.school.test/reset")}))
		})
		mail := env.SMTP.Wait(t, 1, 10*time.Second)[0]
		token := regexp.MustCompile(`token is:\s+([A-Za-z0-9]{32})`).FindStringSubmatch(mail.Body)
		if token == nil || !strings.Contains(mail.Body, "https://front.school.test/reset?") {
			t.Fatalf("reset mail: %q", mail.Body)
		}
		reset := func(tok string) error {
			return anonymous.PostAuthPasswordReset(ctx, client.ResetInputBody{Email: u.Email, Token: tok, Password: "brand-new-pass"})
		}
		env.Recorded(t, []string{}, func() { apitest.Refused(t, reset(strings.Repeat("x", 32)), 422) })
		env.Recorded(t, []string{"ResetPassword"}, func() { apitest.OK(t, reset(token[1])) })
		apitest.Refused(t, reset(token[1]), 422) // single use
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
		ctx := t.Context()
		student := env.As("student")
		impersonate := func(c *client.Client, id int64) (*client.Issued, error) {
			return c.PostAdminAuthImpersonate(ctx, client.ImpersonateInputBody{UserID: id})
		}
		tutor, studentClient, admin := env.As("tutor"), env.ClientAs("student"), env.ClientAs("admin")
		env.Recorded(t, []string{}, func() {
			_, err := impersonate(studentClient, tutor.ID)
			apitest.Refused(t, err, 403) // a student may not
		})
		_, err := impersonate(admin, 99999)
		apitest.Refused(t, err, 422) // unknown user
		env.Recorded(t, []string{"Impersonate"}, func() {
			issued := apitest.Must(impersonate(admin, student.ID))(t)
			if p := apitest.Must(env.Client("", issued.Token).GetProfileMe(ctx))(t); p.ID != student.ID {
				t.Fatalf("impersonation token acts as %v, want %d", p.ID, student.ID)
			}
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
