package social_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/social"
	"github.com/lms-platform/lms/internal/social/socialtest"
)

// world is a platform with two tenants and the provider.
type world struct {
	env     *apitest.Env
	port    string
	issuer  string
	browser *http.Client
}

// person is who signs in at the provider.
type person = socialtest.Person

const frontPort = "3999"

func newWorld(t *testing.T, backend, node string) *world {
	env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) {
		c.FetchAllowPrivate = true
		c.WebURL = "http://{host}:" + frontPort
	}})
	env.AddTenant("other.test")
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(env.HTTP.URL, "http://"))
	w := &world{env: env, port: port}
	w.issuer = socialtest.Start(t, node, []socialtest.Client{
		{ID: "school-client", Secret: "school-secret", RedirectURIs: []string{w.origin("school.test") + social.CallbackPath("google")}},
		{ID: "other-client", Secret: "other-secret", RedirectURIs: []string{w.origin("other.test") + social.CallbackPath("google")}},
	})
	// The browser: the tenants' made-up names reach the test server, and
	// the test looks at every redirect.
	dialer := &net.Dialer{}
	w.browser = &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(addr)
		if strings.HasSuffix(host, ".test") {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		return dialer.DialContext(ctx, network, addr)
	}}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return w
}

func (w *world) origin(host string) string { return "http://" + host + ":" + w.port }

// configure turns the google slot of the tenant at host on.
func (w *world) configure(t *testing.T, host, clientID, secret string) {
	t.Helper()
	admin, _ := w.env.Login(host, "admin@"+host, "admin-password")
	apitest.Must(w.env.Client(host, admin).PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{
		{Key: "lms_auth.socialite.google.enabled", Value: true},
		{Key: "lms_auth.socialite.google.client_id", Value: clientID},
		{Key: "lms_auth.socialite.google.client_secret", Value: secret},
		{Key: "lms_auth.socialite.google.issuer", Value: w.issuer},
	}}))(t)
}

func (w *world) get(t *testing.T, raw string) *http.Response {
	t.Helper()
	res, err := w.browser.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res
}

// start opens the start route in a fresh browser (no session at the
// provider) and answers the provider's address.
func (w *world) start(t *testing.T, host, slot string) *url.URL {
	t.Helper()
	w.browser.Jar, _ = cookiejar.New(nil)
	res := w.get(t, w.origin(host)+"/api/auth/social/"+slot+"?next=/learn/7")
	if res.StatusCode != http.StatusFound {
		t.Fatalf("start: %d", res.StatusCode)
	}
	to, _ := url.Parse(res.Header.Get("Location"))
	return to
}

// signIn goes through the provider's pages as p and answers the callback
// address the provider sends the browser to, unopened.
func (w *world) signIn(t *testing.T, authorize *url.URL, p person) *url.URL {
	t.Helper()
	return socialtest.SignIn(t, w.browser, authorize, p)
}

// callback opens the callback and answers where it sends the browser, or
// the refusal's status and code.
func (w *world) callback(t *testing.T, cb *url.URL) (*url.URL, int, string) {
	t.Helper()
	res, err := w.browser.Get(cb.String())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		var body struct{ Error string }
		json.NewDecoder(res.Body).Decode(&body)
		return nil, res.StatusCode, body.Error
	}
	to, _ := url.Parse(res.Header.Get("Location"))
	return to, res.StatusCode, ""
}

// landing signs p in at host up to the frontend's landing and answers
// the sealed token.
func (w *world) landing(t *testing.T, host string, p person) string {
	t.Helper()
	to, status, code := w.callback(t, w.signIn(t, w.start(t, host, "google"), p))
	if to == nil {
		t.Fatalf("callback: %d %s", status, code)
	}
	if to.Host != host+":"+frontPort || to.Path != "/auth/social" || to.Query().Get("next") != "/learn/7" {
		t.Fatalf("landing %s", to)
	}
	return to.Query().Get("token")
}

func (w *world) complete(t *testing.T, host, token string, body client.CompleteInputBody) (*client.Issued, error) {
	return w.env.Client(host, "").PostAuthSocialCompleteID(t.Context(), token, body)
}

func (w *world) me(t *testing.T, host string, issued *client.Issued) *client.Profile {
	t.Helper()
	return apitest.Must(w.env.Client(host, issued.Token).GetProfileMe(t.Context()))(t)
}

func refusedWith(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	e := apitest.Refused(t, err, status)
	if code != "" && e.Code != code {
		t.Fatalf("code %q, want %q: %v", e.Code, code, e)
	}
	return e
}

func verified(sub, email, given, family string) person {
	return person{"sub": {sub}, "email": {email}, "email_verified": {"true"}, "given_name": {given}, "family_name": {family}}
}

// TestSocialLogin signs people in through a real OpenID provider
// (oidc-provider, run in node) on SQLite and PostgreSQL.
func TestSocialLogin(t *testing.T) {
	node := socialtest.Need(t)
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend, node)
			env := w.env
			setting := func(key string, value any) {
				t.Helper()
				apitest.Must(env.ClientAs("admin").PostAdminConfig(t.Context(),
					client.UpdateInputBody{Config: []client.Item{{Key: key, Value: value}}}))(t)
			}

			// Not configured: 404, and nothing is sent to any provider.
			for _, slot := range []string{"google", "microsoft"} {
				if res := w.get(t, w.origin("school.test")+"/api/auth/social/"+slot); res.StatusCode != http.StatusNotFound {
					t.Fatalf("%s unconfigured: %d", slot, res.StatusCode)
				}
			}
			w.configure(t, "school.test", "school-client", "school-secret")
			if res := w.get(t, w.origin("school.test")+"/api/auth/social/microsoft"); res.StatusCode != http.StatusNotFound {
				t.Fatalf("microsoft unconfigured: %d", res.StatusCode)
			}
			if res := w.get(t, w.origin("other.test")+"/api/auth/social/google"); res.StatusCode != http.StatusNotFound {
				t.Fatalf("other tenant unconfigured: %d", res.StatusCode)
			}
			authorize := w.start(t, "school.test", "google")
			q := authorize.Query()
			if q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("nonce") == "" ||
				q.Get("client_id") != "school-client" || q.Get("redirect_uri") != w.origin("school.test")+"/api/auth/social/google/callback" {
				t.Fatalf("authorization request %s", authorize)
			}

			var alice int64
			t.Run("a new person gets an account", func(t *testing.T) {
				token := w.landing(t, "school.test", verified("alice-sub", "alice@example.com", "Alice", "Liddell"))
				before := env.LastEventID()
				issued := apitest.Must(w.complete(t, "school.test", token, client.CompleteInputBody{}))(t)
				me := w.me(t, "school.test", issued)
				if me.Email != "alice@example.com" || me.FirstName != "Alice" || !me.EmailVerified {
					t.Fatalf("profile %+v", me)
				}
				alice = me.ID
				// lms_auth.socialite_remember_me is off: a short token.
				if left := time.Until(issued.ExpiresAt); left > time.Hour {
					t.Fatalf("token lives %s", left)
				}
				names := strings.Join(env.EventNames(before), ",")
				if !strings.Contains(names, "AccountRegistered") || !strings.Contains(names, "Login") {
					t.Fatalf("events %s", names)
				}
				// The hand-off is used once.
				_, err := w.complete(t, "school.test", token, client.CompleteInputBody{})
				refusedWith(t, err, http.StatusUnauthorized, "invalid_token")
			})

			t.Run("a returning person is known by sub", func(t *testing.T) {
				setting("lms_auth.socialite_remember_me", true)
				defer setting("lms_auth.socialite_remember_me", false)
				// The provider now tells another address: still Alice.
				token := w.landing(t, "school.test", verified("alice-sub", "alice.new@example.com", "Alice", "Liddell"))
				issued := apitest.Must(w.complete(t, "school.test", token, client.CompleteInputBody{}))(t)
				if me := w.me(t, "school.test", issued); me.ID != alice || me.Email != "alice@example.com" {
					t.Fatalf("profile %+v", me)
				}
				if left := time.Until(issued.ExpiresAt); left < 29*24*time.Hour {
					t.Fatalf("remember-me token lives %s", left)
				}
			})

			t.Run("an account with the address is linked only when verified", func(t *testing.T) {
				owner := env.NewUser("student")
				p := verified("mallory-sub", owner.Email, "M", "M")
				p.Set("email_verified", "false")
				_, err := w.complete(t, "school.test", w.landing(t, "school.test", p), client.CompleteInputBody{})
				refusedWith(t, err, http.StatusConflict, "account_exists")
				if n := env.Count(t, `SELECT COUNT(*) FROM users WHERE email = $1`, owner.Email); n != 1 {
					t.Fatalf("%d accounts", n)
				}

				token := w.landing(t, "school.test", verified("owner-sub", owner.Email, "O", "W"))
				issued := apitest.Must(w.complete(t, "school.test", token, client.CompleteInputBody{}))(t)
				if me := w.me(t, "school.test", issued); me.ID != owner.ID {
					t.Fatalf("linked to %d, want %d", me.ID, owner.ID)
				}
				// From now on the sub alone finds the owner, verified or not.
				p = verified("owner-sub", "elsewhere@example.com", "O", "W")
				p.Set("email_verified", "false")
				issued = apitest.Must(w.complete(t, "school.test", w.landing(t, "school.test", p), client.CompleteInputBody{}))(t)
				if me := w.me(t, "school.test", issued); me.ID != owner.ID {
					t.Fatalf("returning owner is %d", me.ID)
				}
			})

			t.Run("missing data is asked for at the complete step", func(t *testing.T) {
				setting("lms_auth.auto_verified_email", "enabled")
				defer setting("lms_auth.auto_verified_email", "disabled")
				token := w.landing(t, "school.test", person{"sub": {"carol-sub"}, "given_name": {"Carol"}})
				users := env.Count(t, `SELECT COUNT(*) FROM users`)
				_, err := w.complete(t, "school.test", token, client.CompleteInputBody{})
				e := refusedWith(t, err, http.StatusUnprocessableEntity, "details_required")
				if len(e.Errors["email"]) != 1 || len(e.Errors["last_name"]) != 1 || e.Errors["first_name"] != nil {
					t.Fatalf("errors %v", e.Errors)
				}
				if n := env.Count(t, `SELECT COUNT(*) FROM users`); n != users {
					t.Fatal("an account was made without its data")
				}
				email, last := "carol@example.com", "Carroll"
				issued := apitest.Must(w.complete(t, "school.test", token, client.CompleteInputBody{Email: &email, LastName: &last}))(t)
				if me := w.me(t, "school.test", issued); me.Email != email || me.FirstName != "Carol" || me.LastName != last {
					t.Fatalf("profile %+v", me)
				}
			})

			t.Run("a blocked person is refused", func(t *testing.T) {
				blocked := false
				apitest.Must(env.ClientAs("admin").PatchAdminUsersID(t.Context(), alice, client.UserChangeBody{IsActive: &blocked}))(t)
				token := w.landing(t, "school.test", verified("alice-sub", "alice@example.com", "Alice", "Liddell"))
				_, err := w.complete(t, "school.test", token, client.CompleteInputBody{})
				if e := apitest.Refused(t, err, http.StatusUnprocessableEntity); !apitest.Says(e, "blocked") {
					t.Fatalf("refusal %v", e)
				}
			})

			t.Run("a tampered or expired state is refused", func(t *testing.T) {
				cb := w.signIn(t, w.start(t, "school.test", "google"), verified("dave-sub", "dave@example.com", "D", "D"))
				tampered := *cb
				q := tampered.Query()
				state := []byte(q.Get("state"))
				state[10] ^= 1
				q.Set("state", string(state))
				tampered.RawQuery = q.Encode()
				if _, status, code := w.callback(t, &tampered); status != 401 || code != "invalid_state" {
					t.Fatalf("tampered state: %d %s", status, code)
				}
				env.Clock.Advance(social.StateLifetime + time.Second)
				if _, status, code := w.callback(t, cb); status != 401 || code != "invalid_state" {
					t.Fatalf("expired state: %d %s", status, code)
				}
			})

			t.Run("an expired or tampered hand-off is refused", func(t *testing.T) {
				token := w.landing(t, "school.test", verified("erin-sub", "erin@example.com", "E", "E"))
				_, err := w.complete(t, "school.test", apitest.Tampered(token), client.CompleteInputBody{})
				refusedWith(t, err, http.StatusUnauthorized, "invalid_token")
				env.Clock.Advance(social.HandoffLifetime + time.Second)
				_, err = w.complete(t, "school.test", token, client.CompleteInputBody{})
				refusedWith(t, err, http.StatusUnauthorized, "invalid_token")
			})

			t.Run("an id_token for another nonce is refused", func(t *testing.T) {
				authorize := w.start(t, "school.test", "google")
				q := authorize.Query()
				q.Set("nonce", "someone-elses-nonce")
				authorize.RawQuery = q.Encode()
				cb := w.signIn(t, authorize, verified("frank-sub", "frank@example.com", "F", "F"))
				if _, status, code := w.callback(t, cb); status != 401 || code != "invalid_nonce" {
					t.Fatalf("wrong nonce: %d %s", status, code)
				}
			})

			t.Run("tenants are apart", func(t *testing.T) {
				token := w.landing(t, "school.test", verified("gina-sub", "gina@example.com", "G", "G"))
				_, err := w.complete(t, "other.test", token, client.CompleteInputBody{})
				refusedWith(t, err, http.StatusUnauthorized, "invalid_token")

				w.configure(t, "other.test", "other-client", "other-secret")
				cb := w.signIn(t, w.start(t, "school.test", "google"), verified("gina-sub", "gina@example.com", "G", "G"))
				elsewhere, _ := url.Parse(w.origin("other.test") + cb.RequestURI())
				if _, status, code := w.callback(t, elsewhere); status != 401 || code != "invalid_state" {
					t.Fatalf("state of another tenant: %d %s", status, code)
				}
				// The same person has an account of their own at each tenant.
				issued := apitest.Must(w.complete(t, "other.test", w.landing(t, "other.test",
					verified("gina-sub", "gina@example.com", "G", "G")), client.CompleteInputBody{}))(t)
				if me := w.me(t, "other.test", issued); me.Email != "gina@example.com" {
					t.Fatalf("profile %+v", me)
				}
				if _, err := env.Client("school.test", issued.Token).GetProfileMe(t.Context()); err == nil {
					t.Fatal("a token of other.test works at school.test")
				}
			})
		})
	}
}
