package lti_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/kinds/lti"
)

const (
	issuer   = "https://moodle.example.edu"
	clientID = "tool-client-1"
	deploy   = "deployment-1"
)

// testPlatform is an LTI platform of the tests: it publishes its own keys
// and signs the id_tokens the tests shape, good and bad. Its grade
// services take our scores: a token for a client assertion signed with
// toolKey, and scores posted with that token, passed on to scores.
type testPlatform struct {
	srv     *httptest.Server
	mu      sync.Mutex
	keys    map[string]*rsa.PrivateKey
	fetches atomic.Int32
	toolKey *rsa.PublicKey
	scores  chan postedScore
	// unavailable, when set and true, makes the token service answer 503;
	// tokenCalls counts its requests.
	unavailable func() bool
	tokenCalls  atomic.Int32
	// now, when set, is the platform's clock for client assertions.
	now func() time.Time
}

// postedScore is a score the platform received on a line item.
type postedScore struct {
	path, query string
	score       map[string]any
}

// platformToken is the access token of the test platform's grade services.
const platformToken = "platform-service-token"

func newTestPlatform(t *testing.T) *testPlatform {
	p := &testPlatform{keys: map[string]*rsa.PrivateKey{}, scores: make(chan postedScore, 16)}
	p.addKey(t, "platform-key-1")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /jwks", func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		doc := lti.JWKS{}
		for kid, k := range p.keys {
			doc.Keys = append(doc.Keys, jwk(kid, &k.PublicKey))
		}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		json.NewEncoder(w).Encode(doc)
	})
	mux.HandleFunc("POST /token", p.token)
	mux.HandleFunc("POST /lineitems/{item}/scores", func(w http.ResponseWriter, r *http.Request) {
		var score map[string]any
		if r.Header.Get("Authorization") != "Bearer "+platformToken {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		if r.Header.Get("Content-Type") != "application/vnd.ims.lis.v1.score+json" || json.NewDecoder(r.Body).Decode(&score) != nil {
			http.Error(w, "not a score", http.StatusBadRequest)
			return
		}
		p.scores <- postedScore{path: r.URL.Path, query: r.URL.RawQuery, score: score}
		w.WriteHeader(http.StatusNoContent)
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

// token is the platform's token endpoint: a client assertion of our
// tool, signed with our key, for the score scope.
func (p *testPlatform) token(w http.ResponseWriter, r *http.Request) {
	p.tokenCalls.Add(1)
	p.mu.Lock()
	key, down, now := p.toolKey, p.unavailable, p.now
	p.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	if down != nil && down() {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
		return
	}
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(r.FormValue("client_assertion"), claims, func(*jwt.Token) (any, error) { return key, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(clientID), jwt.WithSubject(clientID),
		jwt.WithAudience(p.srv.URL+"/token"), jwt.WithExpirationRequired(), jwt.WithIssuedAt(), jwt.WithTimeFunc(now))
	if key == nil || err != nil || claims["jti"] == nil || r.FormValue("grant_type") != "client_credentials" ||
		r.FormValue("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer" {
		http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
		return
	}
	if r.FormValue("scope") != lti.ScopeScore {
		http.Error(w, `{"error":"invalid_scope"}`, http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(lti.ServiceToken{AccessToken: platformToken, TokenType: "Bearer", ExpiresIn: 3600, Scope: lti.ScopeScore})
}

func jwk(kid string, pub *rsa.PublicKey) lti.JWK { return lti.KeyJWK(kid, pub) }

func (p *testPlatform) addKey(t *testing.T, kid string) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.keys[kid] = k
	p.mu.Unlock()
	return k
}

func (p *testPlatform) key(kid string) *rsa.PrivateKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys[kid]
}

// sign signs claims with RS256 and the kid's key.
func sign(t *testing.T, claims jwt.MapClaims, kid string, key *rsa.PrivateKey) string {
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// world is a server with one tenant whose admin registered the test
// platform, and a course launches land in.
type world struct {
	env      *apitest.Env
	platform *testPlatform
	courseID int64
	regID    int64
	log      *syncBuffer
}

// syncBuffer is a server log the tests read while the server writes it.
type syncBuffer struct {
	mu sync.Mutex
	bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Buffer.String()
}

func newWorld(t *testing.T, backend string) *world {
	log := &syncBuffer{}
	env := apitest.New(t, backend, apitest.Options{Log: log, Configure: func(c *config.Config) {
		c.FetchAllowPrivate = true
		c.WebURL = "https://{host}"
	}})
	w := &world{env: env, platform: newTestPlatform(t), log: log}
	ctx := context.Background()
	admin := env.ClientAs("admin")
	published := "published"
	w.courseID = apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Launched", Status: &published}))(t).ID
	w.regID = apitest.Must(admin.PostAdminLTIRegistrations(ctx, client.RegistrationInput{Name: "Moodle", Issuer: issuer,
		ClientID: clientID, AuthLoginURL: issuer + "/mod/lti/auth.php", JwksURL: w.platform.srv.URL + "/jwks",
		DeploymentIDs: []string{deploy}, CourseID: &w.courseID}))(t).ID
	return w
}

// gradesTo gives the registration the test platform's token URL, so that
// grades go back to it.
func (w *world) gradesTo(t *testing.T) {
	t.Helper()
	apitest.Must(w.env.ClientAs("admin").PutAdminLTIRegistrationsID(context.Background(), w.regID, client.RegistrationInput{
		Name: "Moodle", Issuer: issuer, ClientID: clientID, AuthLoginURL: issuer + "/mod/lti/auth.php",
		JwksURL: w.platform.srv.URL + "/jwks", TokenURL: ptrTo(w.platform.srv.URL + "/token"), DeploymentIDs: []string{deploy},
		CourseID: &w.courseID}))(t)
}

// textTopic adds a lesson with a text topic to the launched course.
func (w *world) textTopic(t *testing.T) (lesson, topic int64) {
	t.Helper()
	ctx := context.Background()
	admin := w.env.ClientAs("admin")
	lesson = apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: w.courseID}))(t).ID
	topic = apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Read me",
		Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, Markdown: ptrTo("Some text.")}))(t).ID
	return lesson, topic
}

// finish marks the topic of the launched course complete for token's
// learner.
func (w *world) finish(t *testing.T, token string, topic int64) {
	t.Helper()
	apitest.Must(w.env.Client("", token).PatchCoursesProgressID(context.Background(), w.courseID,
		client.WriteInputBody{Progress: []client.ProgressWrite{{TopicID: topic, Status: 1}}}))(t)
}

// noFollow sends a request and returns the answer without following a
// redirect.
func (w *world) noFollow(t *testing.T, method, host, path, ctype, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, w.env.HTTP.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	c := *w.env.HTTP.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// login runs the OIDC initiation and returns the state and nonce the tool
// sent to the platform.
func (w *world) login(t *testing.T) (state, nonce string) {
	t.Helper()
	q := url.Values{"iss": {issuer}, "login_hint": {"user-7"}, "target_link_uri": {"https://tool/launch"},
		"lti_message_hint": {"msg"}, "client_id": {clientID}}
	res := w.noFollow(t, "GET", w.env.Host, "/api/lti/tool/login?"+q.Encode(), "", "")
	if res.StatusCode != http.StatusFound {
		t.Fatalf("login: %d", res.StatusCode)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	got := loc.Query()
	if !strings.HasPrefix(loc.String(), issuer+"/mod/lti/auth.php?") || got.Get("client_id") != clientID ||
		got.Get("login_hint") != "user-7" || got.Get("lti_message_hint") != "msg" || got.Get("response_mode") != "form_post" ||
		got.Get("scope") != "openid" || got.Get("redirect_uri") != "http://"+w.env.Host+"/api/lti/tool/launch" {
		t.Fatalf("login redirect: %s", loc)
	}
	return got.Get("state"), got.Get("nonce")
}

// claims are the claims of a valid launch with nonce.
func (w *world) claims(nonce, sub string, roles ...string) jwt.MapClaims {
	now := w.env.Clock.Now()
	if roles == nil {
		roles = []string{lti.RoleLearner}
	}
	return jwt.MapClaims{
		"iss": issuer, "aud": clientID, "sub": sub, "nonce": nonce,
		"iat": now.Unix(), "exp": now.Add(5 * time.Minute).Unix(),
		"given_name": "Ada", "family_name": "Lovelace", "email": "admin@school.test",
		lti.ClaimMessageType:  lti.MessageResourceReq,
		lti.ClaimVersion:      lti.Version,
		lti.ClaimDeploymentID: deploy,
		lti.ClaimTargetLink:   "https://tool/launch",
		lti.ClaimResourceLink: map[string]any{"id": "link-1", "title": "Week 1"},
		lti.ClaimRoles:        roles,
		lti.ClaimContext:      map[string]any{"id": "ctx-1"},
	}
}

type launchResult struct {
	status int
	code   string // the error code of a refusal
	loc    *url.URL
}

func (w *world) launch(t *testing.T, host, idToken, state string) launchResult {
	t.Helper()
	form := url.Values{"id_token": {idToken}, "state": {state}}.Encode()
	res := w.noFollow(t, "POST", host, "/api/lti/tool/launch", "application/x-www-form-urlencoded", form)
	out := launchResult{status: res.StatusCode}
	if res.StatusCode == http.StatusSeeOther {
		out.loc, _ = url.Parse(res.Header.Get("Location"))
		return out
	}
	var body struct {
		Error string `json:"error"`
	}
	json.NewDecoder(res.Body).Decode(&body)
	out.code = body.Error
	return out
}

// goodLaunch launches sub with roles and returns the landing URL.
func (w *world) goodLaunch(t *testing.T, sub string, roles ...string) *url.URL {
	t.Helper()
	state, nonce := w.login(t)
	r := w.launch(t, w.env.Host, sign(t, w.claims(nonce, sub, roles...), "platform-key-1", w.platform.key("platform-key-1")), state)
	if r.status != http.StatusSeeOther {
		t.Fatalf("launch of %s: %d %s", sub, r.status, r.code)
	}
	return r.loc
}

// exchange trades a launch's one-time code for a token.
func (w *world) exchange(code string) (*client.Issued, error) {
	return w.env.Client("", "").PostLTIToolExchange(context.Background(), client.ExchangeInputBody{Code: code})
}

// tokenFor is the token a launch's code is exchanged for.
func (w *world) tokenFor(t *testing.T, code string) string {
	t.Helper()
	ex := apitest.Must(w.exchange(code))(t)
	if ex.Token == "" {
		t.Fatalf("exchange: no token in %+v", ex)
	}
	return ex.Token
}

func TestToolLaunch(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			env := w.env
			loc := w.goodLaunch(t, "sub-learner")
			code := loc.Query().Get("code")
			if loc.Scheme+"://"+loc.Host+loc.Path != "https://school.test/lti/launch" || code == "" ||
				loc.Query().Get("course") != strconv.FormatInt(w.courseID, 10) {
				t.Fatalf("landing: %s", loc)
			}
			token := w.tokenFor(t, code)
			ctx := context.Background()
			me := apitest.Must(env.Client("", token).GetProfileMe(ctx))(t)
			if !slices.Equal(me.Roles, []string{"student"}) {
				t.Fatalf("roles: %v", me.Roles)
			}
			if strings.Contains(me.Email, "admin@") {
				t.Fatal("the e-mail claim was used")
			}
			// The learner has access to the course.
			apitest.Must(env.Client("", token).GetCoursesIDProgram(ctx, w.courseID))(t)
			// The code is single use.
			_, err := w.exchange(code)
			if e := apitest.Refused(t, err, 401); e.Code != "invalid_code" {
				t.Fatalf("reused code: %v (%s)", e, e.Code)
			}
			// The same (issuer, sub) is the same user, now an instructor:
			// a tutor, never an admin.
			firstID := me.ID
			loc = w.goodLaunch(t, "sub-learner", "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant",
				"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator")
			token = w.tokenFor(t, loc.Query().Get("code"))
			me = apitest.Must(env.Client("", token).GetProfileMe(ctx))(t)
			if me.ID != firstID || !slices.Equal(me.Roles, []string{"tutor"}) {
				t.Fatalf("second launch: %+v", me)
			}
			loc = w.goodLaunch(t, "sub-admin", "http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator",
				"Administrator")
			token = w.tokenFor(t, loc.Query().Get("code"))
			me = apitest.Must(env.Client("", token).GetProfileMe(ctx))(t)
			if !slices.Equal(me.Roles, []string{"student"}) {
				t.Fatalf("administrator of the platform: %+v", me)
			}
			if n := env.Count(t, `SELECT COUNT(*) FROM lti_launches`); n != 3 {
				t.Fatalf("%d launches recorded", n)
			}
			// An expired code.
			loc = w.goodLaunch(t, "sub-late")
			env.Clock.Advance(lti.CodeLifetime + time.Second)
			_, err = w.exchange(loc.Query().Get("code"))
			apitest.Refused(t, err, 401)
			// No secret of the protocol reached the log.
			for _, secret := range []string{code, token} {
				if strings.Contains(w.log.String(), secret) {
					t.Fatal("a code or token reached the log")
				}
			}
		})
	}
}

// TestToolLaunchRefusals sends every failure of the list; each names its
// check and none leaves anything behind.
func TestToolLaunchRefusals(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			env := w.env
			users := env.Count(t, `SELECT COUNT(*) FROM users`)
			good := w.platform.key("platform-key-1")
			other := env.AddTenant("other.test")
			otherTenant, release := env.OpenTenant(other)
			otherKey, otherKid := otherTenant.Keys.Private, otherTenant.Keys.ID
			release()
			impostor, _ := rsa.GenerateKey(rand.Reader, 2048)

			cases := []struct {
				name   string
				status int
				code   string
				token  func(nonce string) string
				state  func(state string) string
				host   string
			}{
				{name: "unknown state", status: 401, code: "invalid_state", state: func(string) string { return "made-up" }},
				{name: "another tenant's state", status: 401, code: "invalid_state", host: "other.test"},
				{name: "not a JWT", status: 401, code: "invalid_token", token: func(string) string { return "a.b" }},
				{name: "alg none", status: 401, code: "invalid_alg", token: func(n string) string {
					tok := jwt.NewWithClaims(jwt.SigningMethodNone, w.claims(n, "s"))
					s, _ := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
					return s
				}},
				{name: "alg HS256 keyed with the public key", status: 401, code: "invalid_alg", token: func(n string) string {
					tok := jwt.NewWithClaims(jwt.SigningMethodHS256, w.claims(n, "s"))
					tok.Header["kid"] = "platform-key-1"
					s, _ := tok.SignedString(good.PublicKey.N.Bytes())
					return s
				}},
				{name: "alg RS512", status: 401, code: "invalid_alg", token: func(n string) string {
					tok := jwt.NewWithClaims(jwt.SigningMethodRS512, w.claims(n, "s"))
					tok.Header["kid"] = "platform-key-1"
					s, _ := tok.SignedString(good)
					return s
				}},
				{name: "another tenant's key", status: 401, code: "unknown_key", token: func(n string) string {
					return sign(t, w.claims(n, "s"), otherKid, otherKey)
				}},
				{name: "impostor key under the platform's kid", status: 401, code: "invalid_signature", token: func(n string) string {
					return sign(t, w.claims(n, "s"), "platform-key-1", impostor)
				}},
				{name: "wrong issuer", status: 401, code: "invalid_issuer", token: w.with(t, func(c jwt.MapClaims) { c["iss"] = "https://evil.example" })},
				{name: "wrong aud", status: 401, code: "invalid_audience", token: w.with(t, func(c jwt.MapClaims) { c["aud"] = "someone-else" })},
				{name: "several aud without azp", status: 401, code: "invalid_audience", token: w.with(t, func(c jwt.MapClaims) {
					c["aud"] = []string{clientID, "someone-else"}
				})},
				{name: "azp of another client", status: 401, code: "invalid_audience", token: w.with(t, func(c jwt.MapClaims) { c["azp"] = "x" })},
				{name: "expired", status: 401, code: "expired", token: w.with(t, func(c jwt.MapClaims) {
					c["exp"] = env.Clock.Now().Add(-2 * time.Minute).Unix()
				})},
				{name: "issued in the future", status: 401, code: "invalid_iat", token: w.with(t, func(c jwt.MapClaims) {
					c["iat"] = env.Clock.Now().Add(10 * time.Minute).Unix()
				})},
				{name: "other nonce", status: 401, code: "invalid_nonce", token: w.with(t, func(c jwt.MapClaims) { c["nonce"] = "other" })},
				{name: "unknown deployment", status: 403, code: "unknown_deployment", token: w.with(t, func(c jwt.MapClaims) {
					c[lti.ClaimDeploymentID] = "deployment-2"
				})},
				{name: "message type", status: 422, code: "invalid_message_type", token: w.with(t, func(c jwt.MapClaims) {
					c[lti.ClaimMessageType] = "LtiSubmissionReviewRequest"
				})},
				{name: "version", status: 422, code: "invalid_version", token: w.with(t, func(c jwt.MapClaims) { c[lti.ClaimVersion] = "1.1" })},
				{name: "no sub", status: 422, code: "missing_claim", token: w.with(t, func(c jwt.MapClaims) { delete(c, "sub") })},
				{name: "no roles", status: 422, code: "missing_claim", token: w.with(t, func(c jwt.MapClaims) { delete(c, lti.ClaimRoles) })},
				{name: "no resource link", status: 422, code: "missing_claim", token: w.with(t, func(c jwt.MapClaims) {
					delete(c, lti.ClaimResourceLink)
				})},
				{name: "unknown course", status: 404, code: "unknown_course", token: w.with(t, func(c jwt.MapClaims) {
					c[lti.ClaimCustom] = map[string]any{"course_id": "999999"}
				})},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					state, nonce := w.login(t)
					tok := sign(t, w.claims(nonce, "s"), "platform-key-1", good)
					if tc.token != nil {
						tok = tc.token(nonce)
					}
					if tc.state != nil {
						state = tc.state(state)
					}
					host := env.Host
					if tc.host != "" {
						host = tc.host
					}
					r := w.launch(t, host, tok, state)
					if r.status != tc.status || r.code != tc.code {
						t.Fatalf("got %d %q, want %d %q", r.status, r.code, tc.status, tc.code)
					}
				})
			}

			// Replays: the same form again is refused at its used state; the
			// same id_token with a fresh login at its nonce.
			state, nonce := w.login(t)
			tok := sign(t, w.claims(nonce, "replayed"), "platform-key-1", good)
			if r := w.launch(t, env.Host, tok, state); r.status != 303 {
				t.Fatalf("first launch: %d %s", r.status, r.code)
			}
			if r := w.launch(t, env.Host, tok, state); r.status != 401 || r.code != "invalid_state" {
				t.Fatalf("replayed form: %d %s", r.status, r.code)
			}
			state2, _ := w.login(t)
			if r := w.launch(t, env.Host, tok, state2); r.status != 401 || r.code != "invalid_nonce" {
				t.Fatalf("replayed id_token: %d %s", r.status, r.code)
			}
			// An expired state.
			state, nonce = w.login(t)
			env.Clock.Advance(11 * time.Minute)
			if r := w.launch(t, env.Host, sign(t, w.claims(nonce, "s"), "platform-key-1", good), state); r.code != "invalid_state" {
				t.Fatalf("expired state: %d %s", r.status, r.code)
			}

			// Only the one good launch left anything.
			if n := env.Count(t, `SELECT COUNT(*) FROM users`); n != users+1 {
				t.Fatalf("users: %d, want %d", n, users+1)
			}
			for table, want := range map[string]int{"lti_users": 1, "lti_launches": 1, "lti_codes": 1, "lti_nonces": 1} {
				if n := env.Count(t, `SELECT COUNT(*) FROM `+table); n != want {
					t.Errorf("%s: %d rows, want %d", table, n, want)
				}
			}
			if strings.Contains(w.log.String(), tok) {
				t.Fatal("an id_token reached the log")
			}
		})
	}
}

// with signs the valid claims changed by fn.
func (w *world) with(t *testing.T, fn func(jwt.MapClaims)) func(string) string {
	return func(nonce string) string {
		c := w.claims(nonce, "s")
		fn(c)
		return sign(t, c, "platform-key-1", w.platform.key("platform-key-1"))
	}
}

// TestToolKeySet checks the key set cache: kept as its Cache-Control
// says, fetched again for an unknown kid (a rotated key).
func TestToolKeySet(t *testing.T) {
	w := newWorld(t, "sqlite")
	w.goodLaunch(t, "a")
	w.goodLaunch(t, "b")
	if n := w.platform.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for two launches with a cached set", n)
	}
	rotated := w.platform.addKey(t, "platform-key-2")
	w.env.Clock.Advance(15 * time.Second)
	state, nonce := w.login(t)
	if r := w.launch(t, w.env.Host, sign(t, w.claims(nonce, "c"), "platform-key-2", rotated), state); r.status != 303 {
		t.Fatalf("launch with a rotated key: %d %s", r.status, r.code)
	}
	if n := w.platform.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after a rotation", n)
	}
	// Past max-age the set is fetched again.
	w.env.Clock.Advance(6 * time.Minute)
	w.goodLaunch(t, "d")
	if n := w.platform.fetches.Load(); n != 3 {
		t.Fatalf("%d fetches after max-age", n)
	}
}

// TestRegistrations checks the admin routes' rules.
func TestRegistrations(t *testing.T) {
	w := newWorld(t, "sqlite")
	env := w.env
	ctx := context.Background()
	admin, student := env.ClientAs("admin"), env.ClientAs("student")
	body := client.RegistrationInput{Name: "Canvas", Issuer: "https://canvas.instructure.com", ClientID: "1000",
		AuthLoginURL: "https://sso.canvaslms.com/api/lti/authorize_redirect", JwksURL: "https://sso.canvaslms.com/api/lti/security/jwks",
		DeploymentIDs: []string{"1:abc"}}
	_, err := student.PostAdminLTIRegistrations(ctx, body)
	apitest.Refused(t, err, 403)
	_, err = student.GetAdminLTIRegistrations(ctx)
	apitest.Refused(t, err, 403)
	_, err = student.GetAdminLTITool(ctx)
	apitest.Refused(t, err, 403)
	created := apitest.Must(admin.PostAdminLTIRegistrations(ctx, body))(t)
	if len(created.CourseIDs) != 0 {
		t.Fatalf("a registration without a course opens %v", created.CourseIDs)
	}
	_, err = admin.PostAdminLTIRegistrations(ctx, body)
	apitest.Refused(t, err, 422)
	missing := int64(424242)
	_, err = admin.PostAdminLTIRegistrations(ctx, client.RegistrationInput{Name: "x", Issuer: "x", ClientID: "y",
		AuthLoginURL: "ftp://x", JwksURL: "nope", DeploymentIDs: []string{"has space"}, CourseID: &missing,
		CourseIDs: []int64{missing}})
	e := apitest.Refused(t, err, 422)
	for _, field := range []string{"auth_login_url", "jwks_url", "deployment_ids.0", "course_id", "course_ids.0"} {
		if e.Errors[field] == nil {
			t.Errorf("no error on %s: %v", field, e.Errors)
		}
	}
	body.Name = "Canvas Cloud"
	if got := apitest.Must(admin.PutAdminLTIRegistrationsID(ctx, created.ID, body))(t); got.Name != "Canvas Cloud" {
		t.Fatalf("update: %+v", got)
	}
	if list := apitest.Must(admin.GetAdminLTIRegistrations(ctx))(t); len(list) != 2 {
		t.Fatalf("%d registrations", len(list))
	}
	apitest.Refused(t, student.DeleteAdminLTIRegistrationsID(ctx, created.ID), 403)
	apitest.OK(t, admin.DeleteAdminLTIRegistrationsID(ctx, created.ID))
	apitest.Refused(t, admin.DeleteAdminLTIRegistrationsID(ctx, created.ID), 404)
	urls := apitest.Must(admin.GetAdminLTITool(ctx))(t)
	if urls.LoginURL != "http://school.test/api/lti/tool/login" || urls.JwksURL != "http://school.test/api/lti/jwks" {
		t.Fatalf("tool URLs: %+v", urls)
	}
	// The key set is public, the tenant's own, and differs per tenant.
	env.AddTenant("other.test")
	jwks := env.Do(apitest.Request{Method: "GET", Path: "/api/lti/jwks"})
	other := env.Do(apitest.Request{Method: "GET", Path: "/api/lti/jwks", Host: "other.test"})
	if jwks.Status != 200 || jwks.String("keys.0.kty") != "RSA" || jwks.String("keys.0.alg") != "RS256" ||
		other.String("keys.0.kid") == jwks.String("keys.0.kid") {
		t.Fatalf("jwks: %s / %s", jwks.Body, other.Body)
	}
}

// TestToolLogin checks the login initiation: the form post keeps a state
// a launch then uses, as the query does; each refusal, by query or form,
// names its check and keeps no state.
func TestToolLogin(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			env := w.env
			good := url.Values{"iss": {issuer}, "login_hint": {"user-7"}, "target_link_uri": {"https://tool/launch"},
				"lti_deployment_id": {deploy}}
			form := "application/x-www-form-urlencoded"
			res := w.noFollow(t, "POST", env.Host, lti.LoginPath, form, good.Encode())
			loc, err := url.Parse(res.Header.Get("Location"))
			if res.StatusCode != http.StatusFound || err != nil || !strings.HasPrefix(loc.String(), issuer+"/mod/lti/auth.php?") {
				t.Fatalf("form login: %d %s", res.StatusCode, loc)
			}
			q := loc.Query()
			idToken := sign(t, w.claims(q.Get("nonce"), "s"), "platform-key-1", w.platform.key("platform-key-1"))
			if r := w.launch(t, env.Host, idToken, q.Get("state")); r.status != http.StatusSeeOther {
				t.Fatalf("launch after a form login: %d %s", r.status, r.code)
			}

			changed := func(key, value string) url.Values {
				v := url.Values{}
				for k := range good {
					v.Set(k, good.Get(k))
				}
				if value == "" {
					v.Del(key)
				} else {
					v.Set(key, value)
				}
				return v
			}
			refused := func(t *testing.T, v url.Values, status int, code string) {
				t.Helper()
				for _, req := range []apitest.Request{
					{Method: "GET", Path: lti.LoginPath + "?" + v.Encode()},
					{Method: "POST", Path: lti.LoginPath, Body: v.Encode(), Type: form},
				} {
					if res := env.Do(req); res.Status != status || res.String("error") != code {
						t.Errorf("%s: %d %s, want %d %s", req.Method, res.Status, res.Body, status, code)
					}
				}
			}
			states := env.Count(t, `SELECT COUNT(*) FROM lti_states`)
			for _, tc := range []struct {
				name   string
				query  url.Values
				status int
				code   string
			}{
				{"no iss", changed("iss", ""), 400, "invalid_login"},
				{"no login_hint", changed("login_hint", ""), 400, "invalid_login"},
				{"no target_link_uri", changed("target_link_uri", ""), 400, "invalid_login"},
				{"unknown issuer", changed("iss", "https://evil.example"), 400, "unknown_platform"},
				{"unknown client_id", changed("client_id", "someone-else"), 400, "unknown_platform"},
				{"unknown deployment", changed("lti_deployment_id", "deployment-2"), 403, "unknown_deployment"},
			} {
				t.Run(tc.name, func(t *testing.T) { refused(t, tc.query, tc.status, tc.code) })
			}
			// A body that is not a form is refused before it is read.
			if res := env.Do(apitest.Request{Method: "POST", Path: lti.LoginPath, Body: map[string]string{"iss": issuer}}); res.Status != 415 {
				t.Errorf("JSON login: %d %s", res.Status, res.Body)
			}
			// A second registration of the issuer: the login must say
			// which, by client_id.
			apitest.Must(env.ClientAs("admin").PostAdminLTIRegistrations(context.Background(), client.RegistrationInput{
				Name: "Moodle, second site", Issuer: issuer, ClientID: "tool-client-2", AuthLoginURL: issuer + "/mod/lti/auth.php",
				JwksURL: w.platform.srv.URL + "/jwks", DeploymentIDs: []string{deploy}}))(t)
			refused(t, good, 400, "client_id_required")
			if n := env.Count(t, `SELECT COUNT(*) FROM lti_states`); n != states {
				t.Fatalf("refused logins kept %d states", n-states)
			}
			if res := w.noFollow(t, "GET", env.Host, lti.LoginPath+"?"+changed("client_id", "tool-client-2").Encode(), "", ""); res.StatusCode != http.StatusFound ||
				!strings.Contains(res.Header.Get("Location"), "client_id=tool-client-2") {
				t.Fatalf("login naming its client_id: %d %s", res.StatusCode, res.Header.Get("Location"))
			}
		})
	}
}

// TestExchangeIsLimited: the exchange takes 30 calls a minute per IP,
// whatever they answer; the 31st is refused before its code is read (the
// code stays unused), and the next minute opens a new window.
func TestExchangeIsLimited(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			code := w.goodLaunch(t, "sub-patient").Query().Get("code")
			for i := range 30 {
				_, err := w.exchange("made-up")
				if e := apitest.Refused(t, err, 401); e.Code != "invalid_code" {
					t.Fatalf("call %d: %v (%s)", i+1, e, e.Code)
				}
			}
			_, err := w.exchange(code)
			if e := apitest.Refused(t, err, http.StatusTooManyRequests); e.RetryAfter < time.Second || e.RetryAfter > time.Minute {
				t.Fatalf("31st call: Retry-After %v", e.RetryAfter)
			}
			if n := w.env.Count(t, `SELECT COUNT(*) FROM lti_codes WHERE used_at IS NULL`); n != 1 {
				t.Fatalf("%d unused codes after the refused call, want 1", n)
			}
			w.env.Clock.Advance(time.Minute)
			code = w.goodLaunch(t, "sub-patient").Query().Get("code")
			w.tokenFor(t, code)
		})
	}
}

// roleCases are roles claims of launches and the role each makes: the
// context role Instructor, short or full or as a sub-role, makes a tutor;
// anything else, administrators of any kind included, a student; nothing
// makes an admin.
var roleCases = []struct {
	name  string
	roles []string
	want  string
}{
	{"short Instructor", []string{"Instructor"}, "tutor"},
	{"full Instructor", []string{lti.RoleInstructor}, "tutor"},
	{"sub-role of Instructor", []string{"http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"}, "tutor"},
	{"Instructor among other roles", []string{lti.RoleLearner, "http://purl.imsglobal.org/vocab/lis/v2/institution/person#Student",
		"Instructor"}, "tutor"},
	{"Learner", []string{lti.RoleLearner}, "student"},
	{"short Learner", []string{"Learner"}, "student"},
	{"Administrator of the context", []string{"http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator"}, "student"},
	{"short Administrator", []string{"Administrator"}, "student"},
	{"Administrator of the institution", []string{"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator"}, "student"},
	{"Administrator of the system", []string{"http://purl.imsglobal.org/vocab/lis/v2/system/person#SysAdmin",
		"http://purl.imsglobal.org/vocab/lis/v2/system/person#Administrator"}, "student"},
	// Canvas sends the institution role of anyone who teaches anywhere,
	// also when they are a learner of this context.
	{"Instructor of the institution", []string{"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"}, "student"},
	{"Instructor of another vocabulary", []string{"http://example.com/vocab/lis/v2/membership/Instructor#TeachingAssistant",
		"http://purl.imsglobal.org/vocab/lis/v2/membership#InstructorX"}, "student"},
	{"no roles", []string{}, "student"},
}

func TestMapRoles(t *testing.T) {
	for _, tc := range roleCases {
		if got := lti.MapRoles(tc.roles); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestLaunchRoles launches a new user with each of roleCases: the user
// holds the mapped role and no other.
func TestLaunchRoles(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			for i, tc := range roleCases {
				t.Run(tc.name, func(t *testing.T) {
					// An empty, non-nil roles list is sent as [], not
					// replaced by the Learner of claims.
					loc := w.goodLaunch(t, "sub-role-"+strconv.Itoa(i), tc.roles...)
					token := w.tokenFor(t, loc.Query().Get("code"))
					me := apitest.Must(w.env.Client("", token).GetProfileMe(context.Background()))(t)
					if !slices.Equal(me.Roles, []string{tc.want}) {
						t.Fatalf("roles %v, want [%s]", me.Roles, tc.want)
					}
				})
			}
		})
	}
}

// TestToolCourseBinding: a registration opens only the courses its admin
// listed (by default its one course): a launch whose custom parameters
// name another course of the tenant, or a topic of one, is refused with
// 403 and creates nothing; once the admin lists the course, it opens.
func TestToolCourseBinding(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			ctx := context.Background()
			admin := w.env.ClientAs("admin")
			regs := apitest.Must(admin.GetAdminLTIRegistrations(ctx))(t)
			if len(regs) != 1 || !slices.Equal(regs[0].CourseIDs, []int64{w.courseID}) {
				t.Fatalf("default courses of the registration: %+v", regs)
			}
			published := "published"
			other := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Not for that platform", Status: &published}))(t).ID
			lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{Title: "L", CourseID: other}))(t).ID
			md := "Secret."
			topic := apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Inside",
				Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, Markdown: &md}))(t).ID
			users := w.env.Count(t, `SELECT COUNT(*) FROM users`)
			naming := func(custom map[string]any) launchResult {
				state, nonce := w.login(t)
				c := w.claims(nonce, "sub-curious")
				c[lti.ClaimCustom] = custom
				return w.launch(t, w.env.Host, sign(t, c, "platform-key-1", w.platform.key("platform-key-1")), state)
			}
			for name, custom := range map[string]map[string]any{
				"course_id":        {"course_id": strconv.FormatInt(other, 10)},
				"topic_id":         {"topic_id": strconv.FormatInt(topic, 10)},
				"numeric topic_id": {"topic_id": float64(topic)},
			} {
				if r := naming(custom); r.status != 403 || r.code != "course_not_allowed" {
					t.Errorf("a launch naming another course by %s: %d %q", name, r.status, r.code)
				}
			}
			if n := w.env.Count(t, `SELECT COUNT(*) FROM users`); n != users {
				t.Fatalf("refused launches made %d users", n-users)
			}
			for _, table := range []string{"lti_users", "lti_launches", "lti_codes", "course_users"} {
				if n := w.env.Count(t, `SELECT COUNT(*) FROM `+table); n != 0 {
					t.Errorf("refused launches left %d rows in %s", n, table)
				}
			}
			// The admin lists the second course: launches may open it now,
			// and the default course still.
			reg := regs[0]
			in := client.RegistrationInput{Name: reg.Name, Issuer: reg.Issuer, ClientID: reg.ClientID, AuthLoginURL: reg.AuthLoginURL,
				JwksURL: reg.JwksURL, DeploymentIDs: reg.DeploymentIDs, CourseID: &w.courseID, CourseIDs: []int64{other}}
			_, err := admin.PutAdminLTIRegistrationsID(ctx, reg.ID, in)
			e := apitest.Refused(t, err, 422)
			if !apitest.Says(e, "one of course_ids") {
				t.Fatalf("a default course outside the list: %v", e)
			}
			in.CourseIDs = []int64{w.courseID, other}
			if got := apitest.Must(admin.PutAdminLTIRegistrationsID(ctx, reg.ID, in))(t); !slices.Equal(got.CourseIDs, []int64{w.courseID, other}) {
				t.Fatalf("saved courses: %v", got.CourseIDs)
			}
			r := naming(map[string]any{"topic_id": strconv.FormatInt(topic, 10)})
			if r.status != 303 || r.loc.Query().Get("course") != strconv.FormatInt(other, 10) {
				t.Fatalf("a launch into a listed course: %d %s", r.status, r.code)
			}
			if r := naming(nil); r.status != 303 || r.loc.Query().Get("course") != strconv.FormatInt(w.courseID, 10) {
				t.Fatalf("a launch into the default course: %d %s", r.status, r.code)
			}
		})
	}
}

// TestToolKeyRotationAtOnce: a platform that rotates its key and launches
// at once, within the floor between two fetches of its key set, is not
// refused for our cache: the set was fetched before the token was signed,
// so it is fetched once more, also when the platform's clock runs ahead
// of ours. A made-up kid signed before our last fetch, or again in the
// same second, fetches nothing.
func TestToolKeyRotationAtOnce(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend)
			w.goodLaunch(t, "a")
			if n := w.platform.fetches.Load(); n != 1 {
				t.Fatalf("%d fetches for one launch", n)
			}
			w.env.Clock.Advance(2 * time.Second)
			rotated := w.platform.addKey(t, "platform-key-2")
			state, nonce := w.login(t)
			if r := w.launch(t, w.env.Host, sign(t, w.claims(nonce, "b"), "platform-key-2", rotated), state); r.status != 303 {
				t.Fatalf("launch right after a rotation: %d %s", r.status, r.code)
			}
			if n := w.platform.fetches.Load(); n != 2 {
				t.Fatalf("%d fetches after the rotation, want 2", n)
			}
			forged := mustKey(t)
			for name, edit := range map[string]func(jwt.MapClaims){
				"signed before the fetch": func(c jwt.MapClaims) { c["iat"] = w.env.Clock.Now().Add(-30 * time.Second).Unix() },
				"signed in its second":    func(jwt.MapClaims) {},
				"signed in the future":    func(c jwt.MapClaims) { c["iat"] = w.env.Clock.Now().Add(30 * time.Second).Unix() },
			} {
				state, nonce := w.login(t)
				c := w.claims(nonce, "c")
				edit(c)
				if r := w.launch(t, w.env.Host, sign(t, c, "made-up-kid", forged), state); r.status != 401 || r.code != "unknown_key" {
					t.Errorf("made-up kid %s: %d %s", name, r.status, r.code)
				}
			}
			if n := w.platform.fetches.Load(); n != 2 {
				t.Fatalf("made-up kids fetched the set: %d fetches, want 2", n)
			}
			// A platform whose clock runs 20 s ahead of ours (within the
			// tolerance on iat) rotates again and launches at once: its iat
			// is in our future, and the launch is accepted all the same.
			w.env.Clock.Advance(2 * time.Second)
			ahead := w.platform.addKey(t, "platform-key-3")
			state, nonce = w.login(t)
			c := w.claims(nonce, "d")
			c["iat"] = w.env.Clock.Now().Add(20 * time.Second).Unix()
			if r := w.launch(t, w.env.Host, sign(t, c, "platform-key-3", ahead), state); r.status != 303 {
				t.Fatalf("launch of a platform ahead of us, right after a rotation: %d %s", r.status, r.code)
			}
			if n := w.platform.fetches.Load(); n != 3 {
				t.Fatalf("%d fetches after the second rotation, want 3", n)
			}
			// Its future iats buy no more than one fetch in our second.
			state, nonce = w.login(t)
			c = w.claims(nonce, "e")
			c["iat"] = w.env.Clock.Now().Add(40 * time.Second).Unix()
			if r := w.launch(t, w.env.Host, sign(t, c, "made-up-kid", forged), state); r.status != 401 || r.code != "unknown_key" {
				t.Fatalf("made-up kid signed further ahead: %d %s", r.status, r.code)
			}
			if n := w.platform.fetches.Load(); n != 3 {
				t.Fatalf("a made-up kid signed ahead fetched the set: %d fetches, want 3", n)
			}
		})
	}
}
