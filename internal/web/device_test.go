package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	lmsclient "github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/device"
)

// startDevice begins a device login over the API as a command-line client
// would, and returns its device code, user code and complete URI.
func startDevice(t *testing.T, env *apitest.Env, client string) (string, string, string) {
	t.Helper()
	g := apitest.Must(env.ClientAs("").PostAuthDeviceCode(t.Context(), lmsclient.DeviceCodeInputBody{ClientName: client,
		Scopes: []string{"courses:read"}}))(t)
	return g.DeviceCode, g.UserCode, g.VerificationURIComplete
}

// pollDevice polls once after the interval and returns the answer.
func pollDevice(t *testing.T, env *apitest.Env, deviceCode string) *apitest.Response {
	t.Helper()
	env.Clock.Advance(device.Interval)
	return env.Do(apitest.Request{Method: "POST", Path: "/api/auth/device/token", Body: map[string]any{"device_code": deviceCode}})
}

// confirmation is the decision form of a device confirmation page as a
// browser would post it: the code, the page's token and the CSRF cookie
// the page set.
// A browser that had a secret already keeps it (known).
func confirmation(t *testing.T, page *resp, known ...*http.Cookie) req {
	t.Helper()
	m := regexp.MustCompile(`name="code" value="([^"]+)"><input type="hidden" name="csrf_token" value="([^"]+)"`).FindStringSubmatch(page.text())
	c := page.cookie(csrfCookie)
	if c == nil && len(known) > 0 {
		c = known[0]
	}
	if m == nil || c == nil {
		t.Fatalf("the confirmation page has no token (cookie %v): %.800s", c, page.text())
	}
	return req{form: url.Values{"code": {m[1]}, csrfField: {m[2]}}, cookies: []*http.Cookie{c}}
}

// TestDevicePage: anonymous visitors are sent to sign in and back; a
// typed code shows the request; an unknown code says so; approving
// answers the device's poll with a token of the signed-in user.
func TestDevicePage(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	dc, uc, complete := startDevice(t, s.env, "lmsctl on laptop")
	page, err := url.Parse(complete)
	if err != nil || page.Path != "/device" || page.Query().Get("code") != uc {
		t.Fatalf("verification_uri_complete %q", complete)
	}
	r := s.must(req{path: page.RequestURI()}, http.StatusSeeOther)
	if r.header.Get("Location") != "/login?next="+url.QueryEscape(page.RequestURI()) {
		t.Fatalf("anonymous: Location %q", r.header.Get("Location"))
	}
	u := s.env.NewUser("student")
	r = s.must(req{path: "/device", token: u.Token}, http.StatusOK)
	if !strings.Contains(r.text(), `id="device-code"`) || r.header.Get("Cache-Control") != "no-store" {
		t.Fatal("the code form")
	}
	r = s.must(req{path: "/device?code=BBBB-BBBB", token: u.Token}, http.StatusNotFound)
	if !strings.Contains(r.text(), "Unknown code") || !strings.Contains(r.text(), `id="device-code"`) {
		t.Fatalf("unknown code: %.600s", r.text())
	}
	r = s.must(req{path: "/device?code=" + strings.ToLower(uc), token: u.Token}, http.StatusOK)
	for _, want := range []string{"lmsctl on laptop", "courses:read", uc, `id="device-approve"`, `id="device-deny"`} {
		if !strings.Contains(r.text(), want) {
			t.Fatalf("the request page lacks %q", want)
		}
	}
	approve := confirmation(t, r)
	approve.method, approve.path, approve.token = "POST", "/device/approve", u.Token
	r = s.must(approve, http.StatusOK)
	if !strings.Contains(r.text(), "Approved.") || strings.Contains(r.text(), `id="device-approve"`) {
		t.Fatalf("approved: %.600s", r.text())
	}
	res := pollDevice(t, s.env, dc)
	if res.Status != 200 || res.Number("data.user_id") != float64(u.ID) {
		t.Fatalf("poll after approval: %d %s", res.Status, res.Body)
	}
	// Deciding again says why it cannot.
	approve.path = "/device/deny"
	r = s.must(approve, http.StatusConflict)
	if !strings.Contains(r.text(), "already") {
		t.Fatalf("decided twice: %.600s", r.text())
	}
}

// TestDeviceInBrowser is the Chromium check: a device login
// started over HTTP is approved on the /device page by a user who signs in
// on the way, then collected by polling; a second one, typed into the
// form, is denied and its poll answers access_denied.
func TestDeviceInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	learner := env.NewUser("student")
	dc, uc, complete := startDevice(t, env, "lmsctl on build-server")
	page, err := url.Parse(complete)
	if err != nil {
		t.Fatal(err)
	}
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(s.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	ctx := browsertest.New(t, 2*time.Minute, browsertest.MapHosts(env.Host))
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(ctx, `location.href + "\n" + document.body.innerText.slice(0, 2000)`))
		}
	}

	// The link the device shows: first to sign in, then back to the request.
	run("verification link", chromedp.Navigate(origin+page.RequestURI()), chromedp.WaitVisible(`#email`, chromedp.ByID))
	run("sign in",
		chromedp.SendKeys(`#email`, learner.Email, chromedp.ByID),
		chromedp.SendKeys(`#password`, learner.Password, chromedp.ByID),
		chromedp.Submit(`#password`, chromedp.ByID),
		chromedp.WaitVisible(`#device-approve`, chromedp.ByID))
	var text string
	run("request", chromedp.Text(`#device-request`, &text, chromedp.ByID))
	if !strings.Contains(text, "lmsctl on build-server") || !strings.Contains(text, "courses:read") || !strings.Contains(text, uc) {
		t.Fatalf("the request shows %q", text)
	}
	browsertest.Screenshot(t, ctx, "web-device-request")
	if res := pollDevice(t, env, dc); res.String("error") != device.CodePending {
		t.Fatalf("before approval: %s", res.Body)
	}
	run("approve", chromedp.Click(`#device-approve`, chromedp.ByID), chromedp.WaitVisible(`#device-result`, chromedp.ByID),
		chromedp.Text(`#device-status`, &text, chromedp.ByID))
	if text != "approved" {
		t.Fatalf("status after approval %q", text)
	}
	browsertest.Screenshot(t, ctx, "web-device-approved")
	res := pollDevice(t, env, dc)
	secret := res.String("data.token")
	if res.Status != 200 || res.Number("data.user_id") != float64(learner.ID) || secret == "" {
		t.Fatalf("collect: %d %s", res.Status, res.Body)
	}
	apitest.Must(env.Client("", secret).GetCourses(t.Context(), lmsclient.GetCoursesParams{}))(t)
	if res := pollDevice(t, env, dc); res.String("error") != device.CodeInvalidGrant {
		t.Fatalf("second collection: %s", res.Body)
	}

	// A second device, its code typed by hand, denied.
	dc, uc, _ = startDevice(t, env, "unknown script")
	run("code form", chromedp.Navigate(origin+"/device"), chromedp.WaitVisible(`#device-code`, chromedp.ByID),
		chromedp.SendKeys(`#device-code`, strings.ToLower(uc), chromedp.ByID),
		chromedp.Submit(`#device-code`, chromedp.ByID),
		chromedp.WaitVisible(`#device-deny`, chromedp.ByID),
		chromedp.Click(`#device-deny`, chromedp.ByID),
		chromedp.WaitVisible(`#device-result`, chromedp.ByID),
		chromedp.Text(`#device-status`, &text, chromedp.ByID))
	if text != "denied" {
		t.Fatalf("status after denial %q", text)
	}
	if res := pollDevice(t, env, dc); res.Status != 400 || res.String("error") != device.CodeDenied {
		t.Fatalf("poll after denial: %d %s", res.Status, res.Body)
	}
}
