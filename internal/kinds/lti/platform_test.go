package lti_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/lti"
	"github.com/lms-platform/lms/internal/server"
)

// twoTenants is one server where tenant A (127.0.0.1) is the platform and
// tenant B (localhost) the tool: both reachable by the fetch guard on
// this machine, each with its own keys.
type twoTenants struct {
	env              *apitest.Env
	port             string
	originA, originB string
	adminA, adminB   string
	student          string
	studentID        int64
	topic            int64
	courseA, lessonA int64
	courseB, topicB  int64
	tool             *client.ExternalTool
	log              *syncBuffer
	// browser is the learner's (and admins') browser of the tests.
	browser *browser
}

// clientA and clientB are typed clients of the two tenants, on their
// origins (with the port: the URLs the routes answer are built from it).
func (w *twoTenants) clientA(token string) *client.Client {
	return w.env.Client(strings.TrimPrefix(w.originA, "http://"), token)
}

func (w *twoTenants) clientB(token string) *client.Client {
	return w.env.Client(strings.TrimPrefix(w.originB, "http://"), token)
}

// browse is a request of the tests' browser (see browser.do).
func (w *twoTenants) browse(t *testing.T, method, rawURL, form string) *http.Response {
	t.Helper()
	return w.browser.do(t, method, rawURL, form)
}

// browser is a browser of the tests: it sends its requests to the test
// server whatever host their URL names (as the server's host), keeps the
// cookies they answer under that URL as a browser would, and follows no
// redirect.
type browser struct {
	env *apitest.Env
	jar http.CookieJar
}

func newBrowser(env *apitest.Env) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{env: env, jar: jar}
}

// Do sends req (to the test server, with the cookies of req.Host) and
// keeps the cookies of the answer: the typed client calls through it as
// the browser's page script would.
func (b *browser) Do(req *http.Request) (*http.Response, error) {
	named := *req.URL
	named.Host = req.Host
	for _, c := range b.jar.Cookies(&named) {
		req.AddCookie(c)
	}
	c := *b.env.HTTP.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err == nil {
		b.jar.SetCookies(&named, res.Cookies())
	}
	return res, err
}

// client is a typed client of the tenant at host whose calls the browser
// makes.
func (b *browser) client(host, token string) *client.Client {
	c, err := client.New(b.env.HTTP.URL, b)
	if err != nil {
		b.env.T.Fatal(err)
	}
	return c.WithHost(host).WithToken(token)
}

// do requests an absolute URL of one of the test's tenants.
func (b *browser) do(t *testing.T, method, rawURL, form string) *http.Response {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(method, b.env.HTTP.URL+u.RequestURI(), strings.NewReader(form))
	req.Host = u.Host
	if form != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	res, err := b.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func newTwoTenants(t *testing.T, backend string) *twoTenants {
	log := &syncBuffer{}
	env := apitest.New(t, backend, apitest.Options{Log: log, Configure: func(c *config.Config) {
		c.FetchAllowPrivate = true
		c.WebURL = "https://{host}"
	}})
	ctx := context.Background()
	w := &twoTenants{env: env, log: log, browser: newBrowser(env)}
	_, w.port, _ = strings.Cut(strings.TrimPrefix(env.HTTP.URL, "http://"), ":")
	w.originA, w.originB = "http://127.0.0.1:"+w.port, "http://localhost:"+w.port
	for host, email := range map[string]string{"127.0.0.1": "admin@a.test", "localhost": "admin@b.test"} {
		if _, _, err := env.Server.AddTenant(ctx, server.NewTenant{Host: host, AdminEmail: email, AdminPassword: "admin-password"}); err != nil {
			t.Fatal(err)
		}
	}
	w.adminA, _ = env.Login("127.0.0.1", "admin@a.test", "admin-password")
	w.adminB, _ = env.Login("localhost", "admin@b.test", "admin-password")
	recA, err := env.Server.Registry.ByHost(ctx, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Server.AddUser(ctx, recA, "learner@a.test", "secret-password", "student"); err != nil {
		t.Fatal(err)
	}
	w.student, w.studentID = env.Login("127.0.0.1", "learner@a.test", "secret-password")

	// A adds B as an external tool, with B's URLs.
	a, b := w.clientA(w.adminA), w.clientB(w.adminB)
	w.tool = apitest.Must(a.PostAdminLTITools(ctx, client.ToolInput{Name: "Tool B", LoginURL: w.originB + lti.LoginPath,
		TargetLinkURI: w.originB + lti.LaunchPath, RedirectUris: []string{w.originB + lti.LaunchPath},
		JwksURL: ptrTo(w.originB + lti.JWKSPath), ShareName: ptrTo(true)}))(t)
	// B registers A as a platform, with A's URLs, landing in B's course.
	published := "published"
	w.courseB = apitest.Must(b.PostAdminCourses(ctx, client.CourseBody{Title: "Course of B", Status: &published}))(t).ID
	urlsA := apitest.Must(a.GetAdminLTIPlatform(ctx))(t)
	apitest.Must(b.PostAdminLTIRegistrations(ctx, client.RegistrationInput{Name: "Platform A", Issuer: urlsA.Issuer,
		ClientID: w.tool.ClientID, AuthLoginURL: urlsA.AuthorizationURL, JwksURL: urlsA.JwksURL, TokenURL: ptrTo(w.originA + lti.TokenPath),
		DeploymentIDs: []string{w.tool.DeploymentID}, CourseID: &w.courseB}))(t)
	lessonB := apitest.Must(b.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: w.courseB}))(t).ID
	w.topicB = apitest.Must(b.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lessonB, Title: "Read on B",
		Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, Markdown: ptrTo("Text.")}))(t).ID
	// A's course with an lti topic the learner may open.
	w.courseA = apitest.Must(a.PostAdminCourses(ctx, client.CourseBody{Title: "Course of A", Status: &published}))(t).ID
	w.lessonA = apitest.Must(a.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: w.courseA}))(t).ID
	w.topic = apitest.Must(a.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.lessonA, Title: "External",
		Topicable: lti.Class, Tool: &w.tool.ID, Custom: map[string]string{"chapter": "3"}}))(t).ID
	apitest.Must(a.PostAdminCoursesIDAccess(ctx, w.courseA, client.AssignInputBody{Users: []client.GrantBody{{ID: w.studentID}}}))(t)
	return w
}

var formField = regexp.MustCompile(`name="(id_token|state)" value="([^"]*)"`)
var formAction = regexp.MustCompile(`action="([^"]*)"`)

// launchToAuthorize runs the learner's launch to the point where the
// tool sent the browser to our authorization endpoint, and returns that
// URL.
func (w *twoTenants) launchToAuthorize(t *testing.T) string {
	t.Helper()
	start := apitest.Must(w.browser.client(strings.TrimPrefix(w.originA, "http://"), w.student).PostLTILaunchesID(
		context.Background(), w.topic))(t)
	login := w.browse(t, "GET", start.URL, "")
	if login.StatusCode != http.StatusFound {
		t.Fatalf("tool login: %d", login.StatusCode)
	}
	return login.Header.Get("Location")
}

// authorizeForm opens our authorization endpoint's page and reads the
// form it posts to the tool.
func (w *twoTenants) authorizeForm(t *testing.T, authorize string) (action string, fields url.Values) {
	t.Helper()
	page := w.browse(t, "GET", authorize, "")
	body := readAll(t, page)
	if page.StatusCode != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("authorize: %d %s", page.StatusCode, body)
	}
	fields = url.Values{}
	for _, m := range formField.FindAllStringSubmatch(body, -1) {
		fields.Set(m[1], html.UnescapeString(m[2]))
	}
	return html.UnescapeString(formAction.FindStringSubmatch(body)[1]), fields
}

func TestPlatformLaunchesTool(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newTwoTenants(t, backend)
			authorize := w.launchToAuthorize(t)
			if !strings.HasPrefix(authorize, w.originA+lti.AuthorizePath+"?") {
				t.Fatalf("the tool sent the browser to %s", authorize)
			}
			hint, _ := url.Parse(authorize)
			action, fields := w.authorizeForm(t, authorize)
			if action != w.originB+lti.LaunchPath || fields.Get("id_token") == "" {
				t.Fatalf("form: %s %v", action, fields)
			}
			// The hint is used once.
			if _, again := autoPost(t, w.browse(t, "GET", authorize, "")); again.Get("error") != "login_required" {
				t.Fatalf("reused hint: %v", again)
			}
			landing := w.browse(t, "POST", action, fields.Encode())
			if landing.StatusCode != http.StatusSeeOther {
				t.Fatalf("tool launch: %d %s", landing.StatusCode, readAll(t, landing))
			}
			loc, _ := url.Parse(landing.Header.Get("Location"))
			if loc.Host != "localhost" || loc.Query().Get("course") != strconv.FormatInt(w.courseB, 10) {
				t.Fatalf("landing: %s", loc)
			}
			ctx := context.Background()
			ex := apitest.Must(w.clientB("").PostLTIToolExchange(ctx, client.ExchangeInputBody{Code: loc.Query().Get("code")}))(t)
			onB := w.clientB(ex.Token)
			me := apitest.Must(onB.GetProfileMe(ctx))(t)
			// Name shared (share_name), e-mail not (share_email off): B made
			// a student named after A's learner.
			if !slices.Equal(me.Roles, []string{"student"}) || strings.Contains(me.Email, "learner@a.test") {
				t.Fatalf("user on B: %+v", me)
			}
			apitest.Must(onB.GetCoursesIDProgram(ctx, w.courseB))(t)
			secrets := append(w.gradeBack(t), hint.Query().Get("login_hint"), fields.Get("id_token"), fields.Get("state"),
				loc.Query().Get("code"), ex.Token)
			// The log holds the requests of both roles, and none of the
			// secrets they carried.
			log := w.log.String()
			if !strings.Contains(log, `"route":"GET `+lti.AuthorizePath+`"`) || !strings.Contains(log, `"route":"POST `+lti.TokenPath+`"`) {
				t.Fatalf("the server log was not captured: %.500s", log)
			}
			for _, secret := range secrets {
				if secret == "" || strings.Contains(log, secret) {
					t.Fatalf("a secret of the protocol (%.12s…) is empty or reached the log", secret)
				}
			}
		})
	}
}

// keyOfB is tenant B's signing key and its kid: the key of B's client
// assertions as a tool.
func (w *twoTenants) keyOfB(t *testing.T) (*rsa.PrivateKey, string) {
	t.Helper()
	recB, err := w.env.Server.Registry.ByHost(context.Background(), "localhost")
	if err != nil {
		t.Fatal(err)
	}
	tenantB, release := w.env.OpenTenant(recB)
	defer release()
	return tenantB.Keys.Private, tenantB.Keys.ID
}

// tokenAnswer is the token endpoint's answer: a token or an OAuth error.
type tokenAnswer struct {
	lti.ServiceToken
	Error string `json:"error"`
}

// askToken posts a client assertion for scope to A's token endpoint.
func (w *twoTenants) askToken(t *testing.T, assertion, scope string) (int, tokenAnswer) {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}, "client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion": {assertion}, "scope": {scope}}
	res := w.browse(t, "POST", w.originA+lti.TokenPath, form.Encode())
	var out tokenAnswer
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatalf("token answer: %d %v", res.StatusCode, err)
	}
	return res.StatusCode, out
}

// gradeBack is the tool (B) sending a score through AGS: a token for its
// client assertion signed with B's key, a line item, a completed score;
// the topic is then complete for A's learner. Scopes are checked: none
// offered is refused, the unknown ones are dropped, and a token without
// a service's scope is refused there. It returns the assertions and
// tokens it used.
func (w *twoTenants) gradeBack(t *testing.T) []string {
	t.Helper()
	keyB, kidB := w.keyOfB(t)
	now := w.env.Clock.Now()
	clientID := w.tool.ClientID
	assertion := func(jti string, key *rsa.PrivateKey) string {
		return sign(t, jwt.MapClaims{"iss": clientID, "sub": clientID, "aud": w.originA + lti.TokenPath,
			"iat": now.Unix(), "exp": now.Add(time.Minute).Unix(), "jti": jti}, kidB, key)
	}
	full := assertion("j1", keyB)
	status, tok := w.askToken(t, full, lti.ScopeLineItem+" "+lti.ScopeScore+" https://example/other")
	if status != 200 || tok.Scope != lti.ScopeLineItem+" "+lti.ScopeScore {
		t.Fatalf("token: %d %+v", status, tok)
	}
	// Another key than the tool's is refused.
	if status, out := w.askToken(t, assertion("j-forged", mustKey(t)), lti.ScopeScore); status != 401 || out.Error != "invalid_client" {
		t.Fatalf("forged assertion: %d %+v", status, out)
	}
	// No scope we offer: 400 invalid_scope (RFC 6749 5.2), issuing
	// nothing and keeping nothing, so the assertion still serves once.
	scoreOnly := assertion("j2", keyB)
	if status, out := w.askToken(t, scoreOnly, "https://example/other"); status != 400 ||
		out.Error != "invalid_scope" || out.AccessToken != "" {
		t.Fatalf("unknown scope: %d %+v", status, out)
	}
	status, scoreTok := w.askToken(t, scoreOnly, lti.ScopeScore)
	if status != 200 || scoreTok.Scope != lti.ScopeScore {
		t.Fatalf("score token: %d %+v", status, scoreTok)
	}
	items := w.originA + "/api/lti/ags/" + strconv.FormatInt(w.topic, 10) + "/lineitems"
	call := func(method, u, ctype, body, bearer string) *http.Response {
		req, _ := http.NewRequest(method, w.env.HTTP.URL+strings.TrimPrefix(u, w.originA), strings.NewReader(body))
		req.Host = strings.TrimPrefix(w.originA, "http://")
		req.Header.Set("Authorization", "Bearer "+bearer)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		res, err := w.env.HTTP.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	if res := call("GET", items, "", "", "made-up"); res.StatusCode != 401 {
		t.Fatalf("line items without a token: %d", res.StatusCode)
	}
	// The score scope alone neither lists nor adds line items.
	if res := call("GET", items, "", "", scoreTok.AccessToken); res.StatusCode != 403 {
		t.Fatalf("line items with the score scope: %d %s", res.StatusCode, readAll(t, res))
	}
	if res := call("POST", items, "application/vnd.ims.lis.v2.lineitem+json", `{"label":"Week 1","scoreMaximum":10}`,
		scoreTok.AccessToken); res.StatusCode != 403 {
		t.Fatalf("a line item with the score scope: %d %s", res.StatusCode, readAll(t, res))
	}
	created := call("POST", items, "application/vnd.ims.lis.v2.lineitem+json", `{"label":"Week 1","scoreMaximum":10}`, tok.AccessToken)
	var li lti.LineItem
	if err := json.NewDecoder(created.Body).Decode(&li); err != nil || created.StatusCode != 201 || !strings.HasPrefix(li.ID, items+"/") {
		t.Fatalf("line item: %d %+v", created.StatusCode, li)
	}
	score := `{"userId":"` + strconv.FormatInt(w.studentID, 10) + `","scoreGiven":8,"scoreMaximum":10,` +
		`"activityProgress":"Completed","gradingProgress":"FullyGraded","timestamp":"2026-01-01T00:00:00.000Z"}`
	if res := call("POST", li.ID+"/scores", "application/vnd.ims.lis.v1.score+json", score, tok.AccessToken); res.StatusCode != 204 {
		t.Fatalf("score: %d %s", res.StatusCode, readAll(t, res))
	}
	recA, _ := w.env.Server.Registry.ByHost(context.Background(), "127.0.0.1")
	tenantA, release := w.env.OpenTenant(recA)
	defer release()
	var progress int
	var given float64
	ctx := context.Background()
	if err := tenantA.DB.QueryRowContext(ctx, `SELECT status FROM topic_progress WHERE user_id = $1 AND topic_id = $2`,
		w.studentID, w.topic).Scan(&progress); err != nil || progress != 1 {
		t.Fatalf("topic progress: %d %v", progress, err)
	}
	if err := tenantA.DB.QueryRowContext(ctx, `SELECT score_given FROM lti_scores WHERE user_id = $1`, w.studentID).Scan(&given); err != nil || given != 8 {
		t.Fatalf("score: %v %v", given, err)
	}
	var made int
	if err := tenantA.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM lti_line_items WHERE NOT claimed`).Scan(&made); err != nil || made != 1 {
		t.Fatalf("%d line items of the tool, want the one made with the lineitem scope: %v", made, err)
	}
	return []string{full, scoreOnly, tok.AccessToken, scoreTok.AccessToken}
}

func mustKey(t *testing.T) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// autoPostField is a field of our authorization endpoint's auto-posting
// page: the launch (id_token, state) or an OAuth error (error,
// error_description, state).
var autoPostField = regexp.MustCompile(`name="([a-z_]+)" value="([^"]*)"`)

// autoPost reads the page our authorization endpoint answered: where it
// posts, and what.
func autoPost(t *testing.T, res *http.Response) (action string, fields url.Values) {
	t.Helper()
	body := readAll(t, res)
	m := formAction.FindStringSubmatch(body)
	if res.StatusCode != 200 || m == nil {
		t.Fatalf("authorize: %d %s", res.StatusCode, body)
	}
	fields = url.Values{}
	for _, f := range autoPostField.FindAllStringSubmatch(body, -1) {
		fields.Set(f[1], html.UnescapeString(f[2]))
	}
	return html.UnescapeString(m[1]), fields
}

// launchCookie is the cookie the launch answer sets to bind its login hint
// to the browser.
func launchCookie(t *testing.T, res *http.Response) *http.Cookie {
	t.Helper()
	for _, c := range res.Cookies() {
		if c.Path == lti.AuthorizePath {
			return c
		}
	}
	t.Fatalf("the answer set no cookie for %s: %v", lti.AuthorizePath, res.Header["Set-Cookie"])
	return nil
}

// TestAuthorizeBindsBrowser: the launch answers the tool's login URL and
// sets a one-time cookie for our authorization endpoint in the browser
// that asked; the login URL's way back to us, opened in another browser,
// is refused at the tool's redirect_uri and leaves the hint to the
// learner's browser, which gets the launch by GET or, as here, POST.
func TestAuthorizeBindsBrowser(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newTwoTenants(t, backend)
			req, _ := http.NewRequest("POST", w.env.HTTP.URL+"/api/lti/launches/"+strconv.FormatInt(w.topic, 10), nil)
			req.Host = strings.TrimPrefix(w.originA, "http://")
			req.Header.Set("Authorization", "Bearer "+w.student)
			res, err := w.browser.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var start struct{ Data client.ToolLaunch }
			if err := json.NewDecoder(res.Body).Decode(&start); err != nil || res.StatusCode != 200 {
				t.Fatalf("launch: %d %v", res.StatusCode, err)
			}
			res.Body.Close()
			c := launchCookie(t, res)
			if !c.HttpOnly || c.Secure || c.SameSite != http.SameSiteLaxMode || c.MaxAge != int(lti.HintLifetime/time.Second) || c.Value == "" {
				t.Fatalf("the launch's cookie over http: %s", res.Header.Get("Set-Cookie"))
			}
			login := w.browse(t, "GET", start.Data.URL, "")
			authorize, _ := url.Parse(login.Header.Get("Location"))
			if login.StatusCode != http.StatusFound || authorize.Path != lti.AuthorizePath {
				t.Fatalf("tool login: %d %s", login.StatusCode, authorize)
			}
			state := authorize.Query().Get("state")

			action, fields := autoPost(t, newBrowser(w.env).do(t, "GET", authorize.String(), ""))
			if action != w.originB+lti.LaunchPath || fields.Get("error") != "login_required" || fields.Get("state") != state ||
				fields.Has("id_token") {
				t.Fatalf("another browser got %s %v", action, fields)
			}
			page := w.browse(t, "POST", w.originA+lti.AuthorizePath, authorize.RawQuery)
			action, fields = autoPost(t, page)
			if action != w.originB+lti.LaunchPath || fields.Get("id_token") == "" || fields.Get("state") != state {
				t.Fatalf("the learner's browser got %s %v", action, fields)
			}
			if c := launchCookie(t, page); c.MaxAge >= 0 {
				t.Fatalf("the cookie stays after the launch: %v", page.Header["Set-Cookie"])
			}
			if landing := w.browse(t, "POST", action, fields.Encode()); landing.StatusCode != http.StatusSeeOther {
				t.Fatalf("tool launch: %d %s", landing.StatusCode, readAll(t, landing))
			}
			_, fields = autoPost(t, w.browse(t, "GET", authorize.String(), ""))
			if fields.Get("error") != "login_required" {
				t.Fatalf("the hint again: %v", fields)
			}
		})
	}
}

// TestPlatformAuthorizeRefusals: a request that names no registered tool
// and redirect URI is refused where it stands (400); any other refusal is
// an OAuth error posted to the tool's redirect URI with the state, and a
// refusal leaves the hint unused.
func TestPlatformAuthorizeRefusals(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newTwoTenants(t, backend)
			authorize := w.launchToAuthorize(t)
			u, _ := url.Parse(authorize)
			changed := func(key, value string) string {
				q := u.Query()
				q.Set(key, value)
				c := *u
				c.RawQuery = q.Encode()
				return c.String()
			}
			for _, tc := range []struct {
				name   string
				url    string
				status int
			}{
				{"unknown client", changed("client_id", "nobody"), 400},
				{"unregistered redirect", changed("redirect_uri", "https://evil.example/launch"), 400},
				{"the hint at the tool's tenant", strings.Replace(authorize, w.originA, w.originB, 1), 400},
			} {
				if res := w.browse(t, "GET", tc.url, ""); res.StatusCode != tc.status || res.Header.Get("Location") != "" {
					t.Errorf("%s: %d, want %d", tc.name, res.StatusCode, tc.status)
				}
			}
			for _, tc := range []struct{ name, url, error string }{
				{"no nonce", changed("nonce", ""), "invalid_request"},
				{"no openid scope", changed("scope", "profile"), "invalid_scope"},
				{"code flow", changed("response_type", "code"), "unsupported_response_type"},
				{"other message hint", changed("lti_message_hint", "999"), "invalid_request"},
				{"made-up hint", changed("login_hint", "made-up"), "login_required"},
			} {
				action, fields := autoPost(t, w.browse(t, "GET", tc.url, ""))
				if action != w.originB+lti.LaunchPath || fields.Get("error") != tc.error || fields.Get("error_description") == "" ||
					fields.Get("state") != u.Query().Get("state") || fields.Has("id_token") {
					t.Errorf("%s: posts %v to %s, want error %s", tc.name, fields, action, tc.error)
				}
			}
			// None of the refusals used the hint up.
			if _, fields := w.authorizeForm(t, authorize); fields.Get("id_token") == "" {
				t.Fatalf("the launch after the refusals: %v", fields)
			}
			// The hint expires after two minutes.
			authorize = w.launchToAuthorize(t)
			w.env.Clock.Advance(lti.HintLifetime + time.Second)
			if _, fields := autoPost(t, w.browse(t, "GET", authorize, "")); fields.Get("error") != "login_required" {
				t.Fatalf("expired hint: %v", fields)
			}
			// Only learners of the course launch; nobody anonymous.
			_, err := w.clientA("").PostLTILaunchesID(context.Background(), w.topic)
			apitest.Refused(t, err, 401)
			recA, _ := w.env.Server.Registry.ByHost(context.Background(), "127.0.0.1")
			if err := w.env.Server.AddUser(context.Background(), recA, "outsider@a.test", "secret-password", "student"); err != nil {
				t.Fatal(err)
			}
			outsider, _ := w.env.Login("127.0.0.1", "outsider@a.test", "secret-password")
			_, err = w.clientA(outsider).PostLTILaunchesID(context.Background(), w.topic)
			apitest.Refused(t, err, 403)
			// The admin's page of our URLs names the token endpoint too.
			urls := apitest.Must(w.clientA(w.adminA).GetAdminLTIPlatform(context.Background()))(t)
			if urls.TokenURL != w.originA+lti.TokenPath || urls.AuthorizationURL != w.originA+lti.AuthorizePath {
				t.Fatalf("platform URLs: %+v", urls)
			}
		})
	}
}

// TestLaunchClaimsOmitEmpty: the name and e-mail claims the tool's privacy
// settings allow are sent when the learner has them, and left out, not
// sent empty, when not.
func TestLaunchClaimsOmitEmpty(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newTwoTenants(t, backend)
			ctx := context.Background()
			apitest.Must(w.clientA(w.adminA).PutAdminLTIToolsID(ctx, w.tool.ID, client.ToolInput{Name: w.tool.Name,
				LoginURL: w.tool.LoginURL, TargetLinkURI: w.tool.TargetLinkURI, RedirectUris: w.tool.RedirectUris,
				JwksURL: ptrTo(w.originB + lti.JWKSPath), ShareName: ptrTo(true), ShareEmail: ptrTo(true)}))(t)
			claims := func() jwt.MapClaims {
				t.Helper()
				_, fields := w.authorizeForm(t, w.launchToAuthorize(t))
				c := jwt.MapClaims{}
				if _, _, err := jwt.NewParser().ParseUnverified(fields.Get("id_token"), c); err != nil {
					t.Fatal(err)
				}
				return c
			}
			// The learner was added with an e-mail and no name.
			c := claims()
			for _, k := range []string{"name", "given_name", "family_name"} {
				if v, ok := c[k]; ok {
					t.Errorf("claim %s: %q, want none", k, v)
				}
			}
			if c["email"] != "learner@a.test" {
				t.Errorf("email: %v", c["email"])
			}
			recA, _ := w.env.Server.Registry.ByHost(ctx, "127.0.0.1")
			tenant, release := w.env.OpenTenant(recA)
			defer release()
			if _, err := tenant.DB.ExecContext(ctx, `UPDATE users SET first_name = 'Ada', last_name = '', email = '' WHERE id = $1`,
				w.studentID); err != nil {
				t.Fatal(err)
			}
			c = claims()
			if c["name"] != "Ada" || c["given_name"] != "Ada" {
				t.Errorf("name claims: %v %v", c["name"], c["given_name"])
			}
			for _, k := range []string{"family_name", "email"} {
				if v, ok := c[k]; ok {
					t.Errorf("claim %s: %q, want none", k, v)
				}
			}
		})
	}
}

func readAll(t *testing.T, res *http.Response) string {
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTokenAssertionReplay: a client assertion gets one service token; the
// same assertion again is refused until it expires (its jti is kept that
// long), an assertion without jti is refused, and a refusal issues
// nothing.
func TestTokenAssertionReplay(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newTwoTenants(t, backend)
			keyB, kidB := w.keyOfB(t)
			recA, _ := w.env.Server.Registry.ByHost(context.Background(), "127.0.0.1")
			tenantA, releaseA := w.env.OpenTenant(recA)
			defer releaseA()
			count := func(table string) int {
				var n int
				if err := tenantA.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM `+table).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			clientID := w.tool.ClientID
			assertion := func(jti string) string {
				now := w.env.Clock.Now()
				claims := jwt.MapClaims{"iss": clientID, "sub": clientID, "aud": w.originA + lti.TokenPath,
					"iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
				if jti != "" {
					claims["jti"] = jti
				}
				return sign(t, claims, kidB, keyB)
			}
			ask := func(a string) (int, string) {
				form := url.Values{"grant_type": {"client_credentials"},
					"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
					"client_assertion":      {a}, "scope": {lti.ScopeScore}}
				res := w.browse(t, "POST", w.originA+lti.TokenPath, form.Encode())
				var body struct {
					Error   string `json:"error"`
					Message string `json:"message"`
				}
				json.NewDecoder(res.Body).Decode(&body)
				return res.StatusCode, body.Error + ": " + body.Message
			}
			first := assertion("jti-1")
			if status, msg := ask(first); status != 200 {
				t.Fatalf("first use: %d %s", status, msg)
			}
			tokens := count("lti_service_tokens")
			if status, msg := ask(first); status != 401 || !strings.HasPrefix(msg, "invalid_client: ") || !strings.Contains(msg, "jti") {
				t.Fatalf("replayed assertion: %d %s", status, msg)
			}
			if n := count("lti_service_tokens"); n != tokens {
				t.Fatalf("a refused replay issued a token: %d, was %d", n, tokens)
			}
			if status, msg := ask(assertion("")); status != 401 {
				t.Fatalf("assertion without jti: %d %s", status, msg)
			}
			if status, msg := ask(assertion("jti-2")); status != 200 {
				t.Fatalf("a fresh jti: %d %s", status, msg)
			}
			// The jtis are kept until their assertions expire (with the
			// clock's leeway), then dropped: the table does not grow.
			if n := count("lti_assertion_jtis"); n != 2 {
				t.Fatalf("%d jtis kept, want 2", n)
			}
			w.env.Clock.Advance(3 * time.Minute)
			if status, msg := ask(first); status != 401 {
				t.Fatalf("the expired assertion: %d %s", status, msg)
			}
			if status, msg := ask(assertion("jti-3")); status != 200 {
				t.Fatalf("a fresh jti later: %d %s", status, msg)
			}
			if n := count("lti_assertion_jtis"); n != 1 {
				t.Fatalf("%d jtis kept after expiry, want 1", n)
			}
		})
	}
}

// TestToolGradesPlatform is both roles of ours at once, with nothing made
// by hand: tenant A launches tenant B from an lti topic; the learner
// finishes B's course; B, as a tool, posts the score on the line item the
// launch claims (the one A keeps for the topic's resource link) with a
// token for its client assertion; A's topic is then complete for A's
// learner.
func TestToolGradesPlatform(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newTwoTenants(t, backend)
			action, fields := w.authorizeForm(t, w.launchToAuthorize(t))
			landing := w.browse(t, "POST", action, fields.Encode())
			loc, err := url.Parse(landing.Header.Get("Location"))
			if err != nil || landing.StatusCode != http.StatusSeeOther {
				t.Fatalf("tool launch: %d %s", landing.StatusCode, readAll(t, landing))
			}
			ctx := context.Background()
			tokenB := apitest.Must(w.clientB("").PostLTIToolExchange(ctx, client.ExchangeInputBody{Code: loc.Query().Get("code")}))(t).Token
			apitest.Must(w.clientB(tokenB).PatchCoursesProgressID(ctx, w.courseB,
				client.WriteInputBody{Progress: []client.ProgressWrite{{TopicID: w.topicB, Status: 1}}}))(t)

			// B's outbox delivers the score after the commit: A's progress
			// is read until it shows it.
			learnerA := w.clientA(w.student)
			for deadline := time.Now().Add(time.Minute); ; {
				res := apitest.Must(learnerA.GetCoursesProgressID(ctx, w.courseA))(t)
				if len(res.Topics) == 1 && res.Topics[0].Status == 1 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("A's topic is not complete: %+v", res)
				}
				time.Sleep(50 * time.Millisecond)
			}
			recA, _ := w.env.Server.Registry.ByHost(context.Background(), "127.0.0.1")
			tenantA, release := w.env.OpenTenant(recA)
			defer release()
			var label string
			var given float64
			if err := tenantA.DB.QueryRowContext(context.Background(), `SELECT i.label, s.score_given FROM lti_scores s
				JOIN lti_line_items i ON i.id = s.line_item_id WHERE s.user_id = $1`, w.studentID).Scan(&label, &given); err != nil ||
				label != "External" || given != 1 {
				t.Fatalf("A's score: %q %v %v", label, given, err)
			}
		})
	}
}
