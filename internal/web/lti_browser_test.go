package web

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"html/template"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/lti"
)

// ltiPlatform is an LTI 1.3 platform of the test (a Moodle, say) with its
// own key: it publishes the key set, and its authentication endpoint
// answers the tool's OIDC request with a signed launch of sub, posted by
// the browser to the tool's redirect URI.
type ltiPlatform struct {
	srv      *httptest.Server
	issuer   string
	clientID string
	deploy   string
	sub      string
	key      *rsa.PrivateKey
	now      func() time.Time
}

// autoPost is the platform's page that posts the launch as soon as it
// loads, as platforms do.
var ltiAutoPost = template.Must(template.New("post").Parse(`<!doctype html><html><body onload="document.forms[0].submit()">
<form method="post" action="{{.Action}}"><input type="hidden" name="id_token" value="{{.Token}}">
<input type="hidden" name="state" value="{{.State}}"></form></body></html>`))

func newLTIPlatform(t *testing.T, now func() time.Time) *ltiPlatform {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p := &ltiPlatform{issuer: "https://moodle.school.example", clientID: "lms-tool", deploy: "1", sub: "moodle-user-42",
		key: key, now: now}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(lti.JWKS{Keys: []lti.JWK{lti.KeyJWK("moodle-key", &key.PublicKey)}})
	})
	mux.HandleFunc("GET /auth", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("client_id") != p.clientID || q.Get("login_hint") != p.sub || q.Get("response_mode") != "form_post" {
			http.Error(w, "not the request of the launch", http.StatusBadRequest)
			return
		}
		n := p.now()
		tok := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.MapClaims{
			"iss": p.issuer, "aud": p.clientID, "sub": p.sub, "nonce": q.Get("nonce"),
			"iat": n.Unix(), "exp": n.Add(5 * time.Minute).Unix(),
			"given_name": "Grace", "family_name": "Hopper",
			lti.ClaimMessageType:  lti.MessageResourceReq,
			lti.ClaimVersion:      lti.Version,
			lti.ClaimDeploymentID: p.deploy,
			lti.ClaimTargetLink:   q.Get("redirect_uri"),
			lti.ClaimResourceLink: map[string]any{"id": "week-1", "title": "Week 1"},
			lti.ClaimRoles:        []string{lti.RoleLearner},
		})
		tok.Header["kid"] = "moodle-key"
		signed, err := tok.SignedString(key)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		ltiAutoPost.Execute(w, map[string]string{"Action": q.Get("redirect_uri"), "Token": signed, "State": q.Get("state")})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// TestLTILaunchInBrowser: another platform launches our tool in Chromium.
// The browser goes from our OIDC login to the platform, whose page posts
// the signed launch to us; we send it to the frontend's /lti/launch,
// which exchanges the one-time code for a session and lands the learner,
// signed in, in the course of the launch.
func TestLTILaunchInBrowser(t *testing.T) {
	eachBackend(t, ltiLaunchInBrowser)
}

func ltiLaunchInBrowser(t *testing.T, backend string) {
	// The frontend's address must be known to the API before it starts:
	// launches are sent there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, frontPort, _ := net.SplitHostPort(ln.Addr().String())
	env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) {
		c.FetchAllowPrivate = true
		c.WebURL = "http://{host}:" + frontPort
	}})
	h, err := New(Options{APIURL: env.HTTP.URL, PlatformHost: "platform.test", Clock: env.Clock})
	if err != nil {
		t.Fatal(err)
	}
	front := httptest.NewUnstartedServer(h)
	front.Listener.Close()
	front.Listener = ln
	front.Start()
	t.Cleanup(func() {
		front.Close()
		h.cache.wait()
	})

	platform := newLTIPlatform(t, env.Clock.Now)
	_, platformPort, _ := net.SplitHostPort(strings.TrimPrefix(platform.srv.URL, "http://"))
	admin := env.As("admin")
	c := seedCourse(t, env, env.Host, admin.Token, "Launched from Moodle")
	env.Call(t, 201, "POST", "/api/admin/lti/registrations", admin.Token, map[string]any{
		"name": "Moodle", "issuer": platform.issuer, "client_id": platform.clientID,
		"auth_login_url": "http://platform.test:" + platformPort + "/auth", "jwks_url": platform.srv.URL + "/jwks",
		"deployment_ids": []string{platform.deploy}, "course_id": c.course,
	})
	tool := env.Call(t, 200, "GET", "/api/admin/lti/tool", admin.Token, nil)
	_, apiPort, _ := net.SplitHostPort(strings.TrimPrefix(env.HTTP.URL, "http://"))
	// The tool's URLs name the tenant's host; the browser reaches the API
	// at its port.
	loginURL := strings.Replace(tool.String("data.login_url"), "http://"+env.Host, "http://"+env.Host+":"+apiPort, 1)
	launchURL := strings.Replace(tool.String("data.launch_url"), "http://"+env.Host, "http://"+env.Host+":"+apiPort, 1)
	origin := "http://" + env.Host + ":" + frontPort

	ctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host, "platform.test"))
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, browsertest.Show(ctx, `location.href + "\n" + document.body.innerText.slice(0, 2000)`))
		}
	}
	// The platform's third-party initiated login, as its launch page
	// starts it.
	login := loginURL + "?" + url.Values{"iss": {platform.issuer}, "login_hint": {platform.sub},
		"target_link_uri": {launchURL}, "client_id": {platform.clientID}, "lti_deployment_id": {platform.deploy}}.Encode()
	// The page's scripts run through a chain of navigations (our login,
	// the platform's form, our launch, the frontend's exchange): the wait
	// is for the element of the course page, which survives them.
	var landedAt string
	run("launch", chromedp.Navigate(login), chromedp.WaitVisible(`.progress-summary`, chromedp.ByQuery),
		chromedp.Location(&landedAt))
	if landedAt != origin+"/learn/"+id(c.course) {
		t.Fatalf("the launch landed at %s", landedAt)
	}
	var title, signIn string
	run("course page", chromedp.Text(`h1`, &title, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector('.notice a[href^="/login"]') ? 'shown' : ''`, &signIn))
	if title != "Launched from Moodle" || signIn != "" {
		t.Fatalf("landed on %q, sign-in notice %q", title, signIn)
	}
	browsertest.Screenshot(t, ctx, "web-lti-launch")

	// The session is the frontend's HttpOnly cookie.
	var cookies []*network.Cookie
	run("session", chromedp.ActionFunc(func(ctx2 context.Context) error {
		var err error
		cookies, err = network.GetCookies().WithURLs([]string{origin}).Do(ctx2)
		return err
	}))
	var session *network.Cookie
	for _, ck := range cookies {
		if ck.Name == sessionCookie {
			session = ck
		}
	}
	if session == nil || !session.HTTPOnly {
		t.Fatalf("no HttpOnly session cookie after the launch: %+v", cookies)
	}
	// The session is the launched user's: a new student matched by
	// (issuer, sub), named from the launch.
	me := env.Call(t, 200, "GET", "/api/profile/me", session.Value, nil)
	if me.String("data.first_name") != "Grace" || me.Get("data.roles").([]any)[0] != "student" {
		t.Fatalf("the session's user: %s", me.Body)
	}
}
