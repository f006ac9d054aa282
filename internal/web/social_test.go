package web

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/social/socialtest"
)

// TestSocialLogin signs a new person in through the frontend's "Sign in
// with Google" button, a real OpenID provider and the page that asks for
// what the provider did not tell, into a session.
func TestSocialLogin(t *testing.T) {
	node := socialtest.Need(t)
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
	f := newFront(t, env.HTTP.URL, "platform.test", frontOptions{})
	// The browser reaches the frontend at the tenant's name on the
	// frontend's default port, where the API's landing sends it.
	origin := "http://school.test:3000"
	issuer := socialtest.Start(t, node, []socialtest.Client{{ID: "web-client", Secret: "web-secret",
		RedirectURIs: []string{origin + "/api/auth/social/google/callback"}}})
	apitest.Must(env.ClientAs("admin").PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{
		{Key: "lms_auth.socialite.google.enabled", Value: true},
		{Key: "lms_auth.socialite.google.client_id", Value: "web-client"},
		{Key: "lms_auth.socialite.google.client_secret", Value: "web-secret"},
		{Key: "lms_auth.socialite.google.issuer", Value: issuer},
		{Key: "lms_auth.auto_verified_email", Value: "enabled"},
	}}))(t)
	jar, _ := cookiejar.New(nil)
	dialer := &net.Dialer{}
	browser := &http.Client{Jar: jar, Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); strings.HasSuffix(host, ".test") {
			addr = f.srv.Listener.Addr().String()
		}
		return dialer.DialContext(ctx, network, addr)
	}}, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	open := func(res *http.Response, err error) (*http.Response, string) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, string(body)
	}

	res, page := open(browser.Get(origin + "/login?next=/my"))
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `data-social="google" href="/api/auth/social/google?next=%2fmy"`) ||
		!strings.Contains(page, "Sign in with Google") || strings.Contains(page, "Sign in with Microsoft") {
		t.Fatalf("login page %d: %s", res.StatusCode, page)
	}
	res, _ = open(browser.Get(origin + "/api/auth/social/google?next=/my"))
	authorize, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || authorize.Query().Get("redirect_uri") != origin+"/api/auth/social/google/callback" {
		t.Fatalf("start: %d %s", res.StatusCode, authorize)
	}
	callback := socialtest.SignIn(t, browser, authorize, socialtest.Person{"sub": {"web-sub"}, "given_name": {"Wendy"},
		"email": {"wendy@example.com"}, "email_verified": {"true"}})
	res, _ = open(browser.Get(callback.String()))
	landing, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || landing.Host != "school.test:3000" || landing.Path != "/auth/social" {
		t.Fatalf("callback: %d %s", res.StatusCode, landing)
	}
	// The landing link opened in another browser is refused (login CSRF).
	res, _ = open((&http.Client{Transport: browser.Transport, CheckRedirect: browser.CheckRedirect}).Get(landing.String()))
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("landing in another browser: %d", res.StatusCode)
	}
	res, page = open(browser.Get(landing.String()))
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `name="last_name"`) || strings.Contains(page, `name="email"`) {
		t.Fatalf("complete page %d: %s", res.StatusCode, page)
	}
	field := func(name string) string {
		m := regexp.MustCompile(`name="` + name + `" value="([^"]*)"`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s in %s", name, page)
		}
		return m[1]
	}
	form := url.Values{"csrf_token": {field("csrf_token")}, "token": {field("token")}, "next": {field("next")},
		"last_name": {"Darling"}}
	req, _ := http.NewRequest(http.MethodPost, origin+"/auth/social", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	res, page = open(browser.Do(req))
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/my" {
		t.Fatalf("complete: %d %s", res.StatusCode, page)
	}
	var session string
	for _, c := range res.Cookies() {
		if c.Name == sessionCookie {
			session = c.Value
		}
	}
	me := apitest.Must(env.Client("", session).GetProfileMe(t.Context()))(t)
	if me.Email != "wendy@example.com" || me.FirstName != "Wendy" || me.LastName != "Darling" {
		t.Fatalf("signed in as %+v", me)
	}
}
