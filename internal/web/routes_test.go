package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/demo"
	"github.com/lms-platform/lms/internal/server"
)

func TestHealthz(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	before := s.api.total()
	r := s.must(req{path: "/healthz"}, http.StatusOK)
	if r.text() != "ok\n" || r.header.Get("Cache-Control") != "no-store" {
		t.Fatalf("healthz: %q, Cache-Control %q", r.body, r.header.Get("Cache-Control"))
	}
	if s.api.total() != before {
		t.Fatal("healthz must not call the API")
	}
	// Still ok with the API gone.
	s.api.srv.Close()
	s.must(req{path: "/healthz"}, http.StatusOK)
}

// TestEveryAnswerSaysNosniff checks the frontend's answers of every kind:
// pages, errors, JSON, the proxied H5P service and assets.
func TestEveryAnswerSaysNosniff(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	for _, c := range []struct {
		q      req
		status int
	}{
		{req{path: "/"}, http.StatusOK},
		{req{path: "/healthz"}, http.StatusOK},
		{req{path: "/courses"}, http.StatusOK},
		{req{path: "/no-such-page"}, http.StatusNotFound},
		{req{path: "/bff/api/profile/me"}, http.StatusUnauthorized},
		{req{path: "/h5p/health"}, http.StatusNotFound},
		{req{path: "/h5p/health", content: true}, http.StatusOK},
		{req{path: "/h5p/no-such-route", content: true}, http.StatusNotFound},
		{req{method: "POST", path: "/login", headers: map[string]string{"Origin": "http://evil.test",
			"Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden},
	} {
		r := s.must(c.q, c.status)
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options %q, want nosniff", c.q.method, c.q.path, got)
		}
	}
}

// TestBFF checks the backend-for-frontend route against the real API:
// the allow-list, the session cookie, the cross-site check, no-store, and
// 502 once the API is stopped.
func TestBFF(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "BFF course")
		learner := s.env.NewUser("student")
		progress := "/bff/api/courses/progress/" + id(c.course)
		cases := []struct {
			name    string
			q       req
			status  int
			check   func(t *testing.T, r *resp)
			noStore bool
		}{
			{name: "outside the allow-list", q: req{path: "/bff/api/admin/users", token: admin}, status: 404},
			{name: "allowed path, other method", q: req{method: "DELETE", path: "/bff/api/profile/me", token: admin}, status: 404},
			{name: "encoded traversal", q: req{path: "/bff/api/courses/progress/..%2F..%2Fadmin%2Fusers", token: admin}, status: 404},
			{name: "not an id", q: req{path: "/bff/api/courses/progress/01", token: admin}, status: 404},
			{name: "unknown prefix", q: req{path: "/bff/api/demo/login", method: "POST", token: admin}, status: 404},
			{name: "no session cookie", q: req{path: "/bff/api/profile/me"}, status: 401, noStore: true},
			{name: "profile", q: req{path: "/bff/api/profile/me", token: learner.Token}, status: 200, noStore: true,
				check: func(t *testing.T, r *resp) {
					if r.get("data.email") != learner.Email {
						t.Fatalf("profile of %v, want %s", r.get("data.email"), learner.Email)
					}
				}},
			{name: "ping", q: req{method: "PUT", path: "/bff/api/courses/progress/" + id(c.reading) + "/ping", token: learner.Token},
				status: 200, noStore: true, check: func(t *testing.T, r *resp) {
					if r.get("data.status") != float64(statusStarted) {
						t.Fatalf("ping: %s", r.body)
					}
				}},
			{name: "write progress", q: req{method: "PATCH", path: progress, token: learner.Token,
				json: map[string]any{"progress": []map[string]any{{"topic_id": c.reading, "status": 1}}}},
				status: 200, noStore: true, check: func(t *testing.T, r *resp) {
					if r.get("data.finished_topics") != float64(1) {
						t.Fatalf("progress: %s", r.body)
					}
				}},
			{name: "read progress with query", q: req{path: "/bff/api/courses/progress?status=started", token: learner.Token},
				status: 200, noStore: true, check: func(t *testing.T, r *resp) {
					if r.get("data.0.course.id") != float64(c.course) {
						t.Fatalf("progress list: %s", r.body)
					}
				}},
			{name: "cross-site origin", q: req{method: "PATCH", path: progress, token: learner.Token,
				headers: map[string]string{"Sec-Fetch-Site": "", "Origin": "http://evil.test"}}, status: 403},
			{name: "cross-site fetch metadata", q: req{method: "PATCH", path: progress, token: learner.Token,
				headers: map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": ""}}, status: 403},
			{name: "same-site is another tenant", q: req{method: "PUT", path: "/bff/api/courses/progress/" + id(c.reading) + "/ping",
				token: learner.Token, headers: map[string]string{"Sec-Fetch-Site": "same-site"}}, status: 403},
			{name: "null origin", q: req{method: "PUT", path: "/bff/api/courses/progress/" + id(c.reading) + "/ping",
				token: learner.Token, headers: map[string]string{"Sec-Fetch-Site": "", "Origin": "null"}}, status: 403},
			{name: "API 401 of a revoked token", q: req{path: "/bff/api/profile/me", token: "not-a-token"}, status: 401,
				noStore: true, check: func(t *testing.T, r *resp) {
					if c := r.cookie(sessionCookie); c == nil || c.MaxAge >= 0 {
						t.Fatalf("a rejected session must be cleared: %v", r.header["Set-Cookie"])
					}
				}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				s.front.t = t
				r := s.must(tc.q, tc.status)
				if tc.noStore && r.header.Get("Cache-Control") != "no-store" {
					t.Fatalf("Cache-Control %q, want no-store", r.header.Get("Cache-Control"))
				}
				if tc.check != nil {
					tc.check(t, r)
				}
			})
		}
		s.front.t = t
		// The API stopped: 502, and no-store.
		s.api.srv.Close()
		r := s.must(req{path: "/bff/api/profile/me", token: learner.Token}, http.StatusBadGateway)
		if r.header.Get("Cache-Control") != "no-store" || r.get("success") != false {
			t.Fatalf("502: %v %s", r.header, r.body)
		}
	})
}

// TestCrossSitePages: the check covers every state-changing route, not
// only /bff/.
func TestCrossSitePages(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	for _, p := range []string{"/login", "/logout", "/login/demo", "/profile", "/device/approve", "/device/deny", "/h5p/contents"} {
		s.must(req{method: "POST", path: p, form: url.Values{"email": {"x"}},
			headers: map[string]string{"Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden)
		s.must(req{method: "POST", path: p, form: url.Values{"email": {"x"}},
			headers: map[string]string{"Sec-Fetch-Site": "", "Origin": "https://attacker.example"}}, http.StatusForbidden)
	}
	// A form posted by the user from this very site passes the check
	// (and fails on its content).
	s.must(req{method: "POST", path: "/login", form: url.Values{"email": {"x@y.z"}, "password": {"nope"}}}, http.StatusUnprocessableEntity)
}

// TestDemoRelogin checks the one retry after an API 401 in a demo student
// session, against a stub of the demo routes (which the demo tests cover
// on the real API).
func TestDemoRelogin(t *testing.T) {
	var mu sync.Mutex
	logins, profileCalls := 0, 0
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/demo":
			w.Write([]byte(`{"success":true,"message":"","data":{"enabled":true,"users":[{"role":"student","email":"s@demo"}]}}`))
		case "/api/demo/login":
			logins++
			w.Write([]byte(`{"success":true,"message":"","data":{"token":"fresh-token","expires_at":"2099-01-01T00:00:00Z"}}`))
		case "/api/profile/me":
			profileCalls++
			if r.Header.Get("Authorization") != "Bearer fresh-token" {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"success":false,"message":"Unauthenticated."}`))
				return
			}
			w.Write([]byte(`{"success":true,"message":"","data":{"email":"s@demo"}}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer stub.Close()
	f := newFront(t, stub.URL, "platform.test", frontOptions{})
	f.host = "demo.test"
	demo := &http.Cookie{Name: demoCookie, Value: "student"}
	r := f.must(req{path: "/bff/api/profile/me", token: "reset-token", cookies: []*http.Cookie{demo}}, http.StatusOK)
	if c := r.cookie(sessionCookie); c == nil || c.Value != "fresh-token" || !c.HttpOnly || c.SameSite != http.SameSiteLaxMode {
		t.Fatalf("the new demo session must be set: %v", r.header["Set-Cookie"])
	}
	if logins != 1 || profileCalls != 2 {
		t.Fatalf("logins %d, profile calls %d: want one re-login and one retry", logins, profileCalls)
	}
	// Not a demo student session: no re-login, the 401 passes.
	f.must(req{path: "/bff/api/profile/me", token: "other-token"}, http.StatusUnauthorized)
	if logins != 1 {
		t.Fatal("only demo student sessions are logged in again")
	}
	// Still 401 after the one retry: no second re-login.
	logins = 0
	stub.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/demo":
			w.Write([]byte(`{"success":true,"message":"","data":{"enabled":true}}`))
		case "/api/demo/login":
			logins++
			w.Write([]byte(`{"success":true,"message":"","data":{"token":"x","expires_at":"2099-01-01T00:00:00Z"}}`))
		default:
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"success":false,"message":"Unauthenticated."}`))
		}
	})
	f.must(req{path: "/bff/api/profile/me", token: "reset-token", cookies: []*http.Cookie{demo}}, http.StatusUnauthorized)
	if logins != 1 {
		t.Fatalf("%d re-logins, want exactly one", logins)
	}
}

// TestLanding: the platform landing in three languages on the platform
// host only; tenant hosts show their catalogue at / and 404 elsewhere.
func TestLanding(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	for path, want := range map[string][]string{
		"/":    {`<html lang="en">`, "A learning platform that gets out of the way", `hreflang="pl"`},
		"/pl/": {`<html lang="pl">`, "Platforma do nauki, która nie przeszkadza w nauce", "Przeglądaj kursy"},
		"/zh/": {`<html lang="zh">`, "专心学习，不被平台打扰", "浏览课程"},
	} {
		r := s.must(req{path: path, host: "platform.test"}, http.StatusOK)
		for _, w := range want {
			if !strings.Contains(r.text(), w) {
				t.Fatalf("%s on the platform host lacks %q", path, w)
			}
		}
	}
	// The platform host with a port is still the platform host.
	s.must(req{path: "/zh/", host: "platform.test:3000"}, http.StatusOK)
	s.must(req{path: "/pl", host: "platform.test"}, http.StatusMovedPermanently)
	for _, p := range []string{"/pl/", "/zh/", "/pl"} {
		s.must(req{path: p, host: s.env.Host}, http.StatusNotFound)
	}
	admin := s.env.As("admin").Token
	seedCourse(t, s.env, s.env.Host, admin, "Tenant course")
	r := s.must(req{path: "/", host: s.env.Host}, http.StatusOK)
	if !strings.Contains(r.text(), "Tenant course") || strings.Contains(r.text(), "gets out of the way") {
		t.Fatal("a tenant host shows its catalogue at /")
	}
	// The catalogue is at /courses on every host.
	s.must(req{path: "/courses", host: "platform.test"}, http.StatusOK)
	s.must(req{path: "/courses", host: s.env.Host}, http.StatusOK)
	// An unknown host is an unknown tenant.
	s.must(req{path: "/courses", host: "nobody.test"}, http.StatusNotFound)
}

// TestLTILaunch runs the launch against a stub of the one API route it
// calls (the LTI issue brings the real one).
func TestLTILaunch(t *testing.T) {
	var gotHost, gotCode string
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/lti/tool/exchange" {
			http.NotFound(w, r)
			return
		}
		var in struct{ Code string }
		json.NewDecoder(r.Body).Decode(&in)
		gotHost, gotCode = r.Host, in.Code
		w.Header().Set("Content-Type", "application/json")
		if in.Code != "good-code" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"success":false,"message":"Invalid or expired code."}`))
			return
		}
		w.Write([]byte(`{"success":true,"message":"","data":{"token":"lti-token","expires_at":"2099-01-01T00:00:00Z"}}`))
	}))
	defer stub.Close()
	f := newFront(t, stub.URL, "platform.test", frontOptions{trustProxy: true})
	f.host = "school.test"

	r := f.must(req{path: "/lti/launch?course=7"}, http.StatusBadRequest)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") {
		t.Fatalf("400 content type %q", r.header.Get("Content-Type"))
	}
	r = f.must(req{path: "/lti/launch?code=bad-code&course=7"}, http.StatusUnauthorized)
	if !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") || !strings.Contains(r.text(), "expired") ||
		r.cookie(sessionCookie) != nil {
		t.Fatalf("bad code: %s %v", r.body, r.header)
	}
	r = f.must(req{path: "/lti/launch?code=good-code&course=7"}, http.StatusSeeOther)
	c := r.cookie(sessionCookie)
	if r.header.Get("Location") != "/learn/7" || c == nil || c.Value != "lti-token" || !c.HttpOnly ||
		c.SameSite != http.SameSiteLaxMode || c.MaxAge != 8*3600 || c.Secure {
		t.Fatalf("launch: %v %v", r.header.Get("Location"), r.header["Set-Cookie"])
	}
	if gotHost != "school.test" || gotCode != "good-code" {
		t.Fatalf("exchange called with host %q code %q", gotHost, gotCode)
	}
	// Behind a TLS-terminating proxy the cookie is Secure.
	r = f.must(req{path: "/lti/launch?code=good-code&course=7", headers: map[string]string{"X-Forwarded-Proto": "https"}},
		http.StatusSeeOther)
	if c := r.cookie(sessionCookie); c == nil || !c.Secure {
		t.Fatalf("cookie over HTTPS must be Secure: %v", r.header["Set-Cookie"])
	}
	stub.Close()
	f.must(req{path: "/lti/launch?code=good-code&course=7"}, http.StatusBadGateway)
}

// TestSecureCookieNeedsTrustProxy: X-Forwarded-Proto counts only from a
// trusted proxy.
func TestSecureCookieNeedsTrustProxy(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	u := s.env.NewUser("student")
	r := s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {u.Password}},
		headers: map[string]string{"X-Forwarded-Proto": "https"}}, http.StatusSeeOther)
	if c := r.cookie(sessionCookie); c == nil || c.Secure || !c.HttpOnly {
		t.Fatalf("cookie: %v", r.header["Set-Cookie"])
	}
}

// TestH5PProxy checks the content origin's /h5p/ proxy on the real H5P
// service: no session reaches it (cookies and tokens other than a play
// grant are dropped, and so are the parts' credentials), bytes pass
// unchanged (ranges too), the embed page talks to the frontend only, and
// the frontend's own origin serves no H5P at all.
func TestH5PProxy(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		learner := s.env.NewUser("student")
		for _, q := range []req{
			{path: "/h5p/whoami", token: learner.Token, content: true},
			{path: "/h5p/whoami", content: true, headers: map[string]string{"Authorization": "Bearer " + learner.Token}},
			{path: "/h5p/whoami", content: true, headers: map[string]string{"X-Internal-Token": s.env.Server.Config.InternalKey}},
		} {
			if r := s.must(q, http.StatusOK); r.get("data.id") != "anonymous" {
				t.Fatalf("the content origin must forward no session nor token: %v %s", q.headers, r.body)
			}
		}
		// The frontend's origin serves no H5P: no embed page, no content,
		// no library, no API of the service, with or without a session.
		for _, p := range []string{"/h5p/whoami", "/h5p/embed/play/1", "/h5p/contents", "/h5p/contents/1/play",
			"/h5p/content/1/content.json", "/h5p/libraries/H5P.Foo-1.0/foo.js", "/h5p/embed/assets/protocol.js"} {
			s.must(req{path: p, token: learner.Token}, http.StatusNotFound)
		}

		// The embed page's allowed origins are narrowed to the frontend's
		// origin the link names, if it is the tenant's host.
		// (An unknown content id answers the page's 404 shell, with the
		// same headers.)
		front := "http://" + s.env.Host + ":3000"
		r := s.do(req{path: "/h5p/embed/play/1?contextId=topic-1&lms_front=" + url.QueryEscape(front), content: true})
		if csp := r.header.Values("Content-Security-Policy"); len(csp) == 0 || csp[0] != "frame-ancestors 'self' "+front {
			t.Fatalf("embed page CSP %q", csp)
		}
		if r.header.Get("Referrer-Policy") != "no-referrer" || r.header.Get("X-Frame-Options") != "" {
			t.Fatalf("the embed page's own framing headers pass: %v", r.header)
		}
		r = s.do(req{path: "/h5p/embed/play/1?lms_front=" + url.QueryEscape("http://evil.test"), content: true})
		if csp := strings.Join(r.header.Values("Content-Security-Policy"), ", "); strings.Contains(csp, "evil.test") {
			t.Fatalf("another site named as the frontend: %q", csp)
		}

		// Bytes unchanged: the same file through the proxy and directly.
		path := "/h5p/embed/assets/protocol.js"
		direct := s.env.Do(apitest.Request{Method: "GET", Path: path})
		if direct.Status != 200 {
			t.Skipf("the H5P embed assets are not served yet: %d", direct.Status)
		}
		r = s.must(req{path: path, content: true}, http.StatusOK)
		if string(r.body) != string(direct.Body) || r.header.Get("Content-Type") != direct.Header.Get("Content-Type") {
			t.Fatal("the proxy must pass bytes and type unchanged")
		}
		// Compressed answers are not unpacked on the way.
		r = s.must(req{path: path, content: true, headers: map[string]string{"Accept-Encoding": "gzip"}}, http.StatusOK)
		direct = s.env.Do(apitest.Request{Method: "GET", Path: path, Headers: map[string]string{"Accept-Encoding": "gzip"}})
		if string(r.body) != string(direct.Body) || r.header.Get("Content-Encoding") != direct.Header.Get("Content-Encoding") {
			t.Fatal("encoded bodies must pass unchanged")
		}
	})
}

// TestH5PProxyLocation checks the Location rewrite and the headers the
// content origin's proxy sends, on a stub (the H5P service answers no
// redirect of its own).
func TestH5PProxyLocation(t *testing.T) {
	var got http.Header
	var gotHost string
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, gotHost = r.Header.Clone(), r.Host
		switch r.URL.Path {
		case "/h5p/elsewhere":
			w.Header().Set("Location", "https://other.example/page")
		case "/h5p/relative":
			w.Header().Set("Location", "/h5p/contents/7")
		}
		w.WriteHeader(http.StatusFound)
	}))
	defer stub.Close()
	f := newFront(t, stub.URL, "platform.test", frontOptions{})
	f.host = "school.test"
	for path, want := range map[string]string{
		"/h5p/elsewhere": "https://other.example/page",
		"/h5p/relative":  "/h5p/contents/7",
	} {
		r := f.must(req{path: path + "?lms_front=http%3A%2F%2Fschool.test%3A3000", content: true, token: "session-token",
			headers: map[string]string{"Authorization": "Bearer page-token", "X-Forwarded-Host": "evil.test"}}, http.StatusFound)
		if loc := r.header.Get("Location"); loc != want {
			t.Fatalf("%s: Location %q, want %q", path, loc, want)
		}
	}
	if got.Get("Authorization") != "" || got.Get("Cookie") != "" ||
		got.Get("X-Lms-Session-Proxy") != "1" || got.Get("X-Lms-Embed-Origin") != "http://school.test:3000" ||
		got.Get("X-Forwarded-Host") != "" || gotHost != "school.test" {
		t.Fatalf("proxied request: host %q headers %v", gotHost, got)
	}
	// A play grant passes, and nothing else of the page's.
	f.must(req{path: "/h5p/relative", content: true, headers: map[string]string{"Authorization": "Bearer lms_h5pplay.1.2.3-4-x"}},
		http.StatusFound)
	if got.Get("Authorization") != "Bearer lms_h5pplay.1.2.3-4-x" || got.Get("X-Lms-Embed-Origin") != "" {
		t.Fatalf("Authorization %q, embed origin %q", got.Get("Authorization"), got.Get("X-Lms-Embed-Origin"))
	}
}

// waitFor polls cond (for background work that takes no clock time).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestTokenRefresh: a token past half its lifetime is renewed once, even
// for parallel requests holding it, and the new one replaces the cookie.
func TestTokenRefresh(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	u := s.env.NewUser("student")
	// Young token: no refresh.
	r := s.must(req{path: "/bff/api/profile/me", token: u.Token}, http.StatusOK)
	if r.cookie(sessionCookie) != nil || s.api.count("/api/auth/refresh") != 0 {
		t.Fatal("a young token is not refreshed")
	}
	s.clock.Advance(3 * time.Minute) // past half of the default 5 minutes
	const n = 6
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.do(req{path: "/bff/api/profile/me", token: u.Token})
			if r.status != http.StatusOK {
				t.Errorf("status %d: %s", r.status, r.body)
			}
			if c := r.cookie(sessionCookie); c != nil {
				got[i] = c.Value
			}
		}()
	}
	wg.Wait()
	if s.api.count("/api/auth/refresh") != 1 {
		t.Fatalf("%d refreshes, want one", s.api.count("/api/auth/refresh"))
	}
	for _, v := range got {
		if v == "" || v != got[0] || v == u.Token {
			t.Fatalf("every request gets the one new token: %v", got)
		}
	}
	// The old token was revoked by the refresh; the new one works.
	if res := s.env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: u.Token}); res.Status != 401 {
		t.Fatalf("old token: %d", res.Status)
	}
	s.must(req{path: "/bff/api/profile/me", token: got[0]}, http.StatusOK)
}

func TestHelpers(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		ok           bool
	}{
		{"GET", "/api/profile/me", true},
		{"PUT", "/api/courses/progress/12/ping", true},
		{"GET", "/api/courses/progress/12/ping", false},
		{"POST", "/api/courses/progress/12/h5p", true},
		{"PATCH", "/api/courses/progress/007", false},
		{"PATCH", "/api/courses/progress/1%32", false},
		{"GET", "/api/courses/progress/", false},
		{"GET", "/api/admin/courses", false},
		{"GET", "/api/profile/me/", false},
		{"POST", "/api/quiz-attempts/3/answer", true},
	} {
		if got := bffAllowed(tc.method, tc.path); got != tc.ok {
			t.Errorf("%s %s: %v", tc.method, tc.path, got)
		}
	}
	for in, want := range map[string]string{"/my": "/my", "": "/x", "//evil": "/x", "/\\evil": "/x",
		"https://evil": "/x", "/a\r\nb": "/x"} {
		if got := localPath(in, "/x"); got != want {
			t.Errorf("localPath(%q) = %q", in, got)
		}
	}
}

func TestVideoEmbed(t *testing.T) {
	for in, want := range map[string]string{
		"https://www.youtube.com/watch?v=aqz-KE-bpKQ": "https://www.youtube-nocookie.com/embed/aqz-KE-bpKQ",
		"https://youtu.be/aqz-KE-bpKQ":                "https://www.youtube-nocookie.com/embed/aqz-KE-bpKQ",
		"https://vimeo.com/76979871":                  "https://player.vimeo.com/video/76979871",
		"https://www.youtube.com/watch?v=<script>":    "",
		"javascript:alert(1)":                         "",
		"https://example.com/video.mp4":               "",
	} {
		if got := videoEmbed(in); got != want {
			t.Errorf("videoEmbed(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDemoSessionSurvivesReset: on the real API, a demo student session
// opened with the one-click button keeps working after a demo reset ends
// every token of the tenant: the first call after it logs the demo
// student in again, once, and retries.
func TestDemoSessionSurvivesReset(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.Demo = config.Demo{Enabled: true, StudentEmail: "student@demo.test", TutorEmail: "tutor@demo.test",
			AdminEmail: "admin@demo.test"}
	}})
	if env.Server.Demo == nil {
		t.Skip("demo mode is not built yet")
	}
	ctx := context.Background()
	rec, _, err := env.Server.AddTenant(ctx, server.NewTenant{Host: "demo.test", AdminEmail: "admin@demo.test",
		AdminPassword: "admin-password", Demo: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Server.Demo.Seed(ctx, rec); err != nil {
		t.Fatal(err)
	}
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	f.host = "demo.test"

	r := f.must(req{method: "POST", path: "/login/demo", form: url.Values{"role": {"student"}}}, http.StatusSeeOther)
	sess, mark := r.cookie(sessionCookie), r.cookie(demoCookie)
	if sess == nil || mark == nil || mark.Value != "student" || !mark.HttpOnly {
		t.Fatalf("demo login cookies: %v", r.header["Set-Cookie"])
	}
	if r.header.Get("Location") != "/my" {
		t.Fatalf("the demo student lands on %s", r.header.Get("Location"))
	}
	f.must(req{path: "/bff/api/profile/me", token: sess.Value, cookies: []*http.Cookie{mark}}, http.StatusOK)

	if _, err := env.Server.Demo.Reset(ctx, rec, demo.ResetOptions{}); err != nil {
		t.Fatalf("demo reset: %v", err)
	}
	if res := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Host: "demo.test", Token: sess.Value}); res.Status != 401 {
		t.Fatalf("the reset must end the old token: %d", res.Status)
	}
	logins := api.count("/api/demo/login")
	r = f.must(req{path: "/bff/api/profile/me", token: sess.Value, cookies: []*http.Cookie{mark}}, http.StatusOK)
	if r.get("data.email") != "student@demo.test" || api.count("/api/demo/login") != logins+1 {
		t.Fatalf("after the reset: %s (%d logins)", r.body, api.count("/api/demo/login")-logins)
	}
	if c := r.cookie(sessionCookie); c == nil || c.Value == sess.Value {
		t.Fatal("the new demo token replaces the cookie")
	}
	// A tutor's demo session is not logged in again.
	r = f.must(req{method: "POST", path: "/login/demo", form: url.Values{"role": {"tutor"}}}, http.StatusSeeOther)
	if c := r.cookie(demoCookie); c == nil || c.MaxAge >= 0 {
		t.Fatalf("a tutor session is not a demo student session: %v", r.header["Set-Cookie"])
	}
	// The demo's tutor and admin land on their dashboard, which every
	// page's header links, as it links Admin for the admin; no cookie
	// carries either, the profile the frontend remembers does.
	for _, role := range []string{"tutor", "admin"} {
		r = f.must(req{method: "POST", path: "/login/demo", form: url.Values{"role": {role}}}, http.StatusSeeOther)
		if r.header.Get("Location") != "/teach" {
			t.Fatalf("the demo %s lands on %s: %v", role, r.header.Get("Location"), r.header["Set-Cookie"])
		}
		for _, c := range r.header["Set-Cookie"] {
			if strings.HasPrefix(c, "lms_teach=") {
				t.Fatalf("the demo %s got the retired cookie: %s", role, c)
			}
		}
		tok := r.cookie(sessionCookie).Value
		page := f.must(req{path: "/teach", token: tok}, http.StatusOK)
		if !strings.Contains(page.text(), `<a href="/teach" aria-current="page">Teaching</a>`) {
			t.Fatalf("the demo %s's dashboard: %.1500s", role, page.body)
		}
		page = f.must(req{path: "/my", token: tok}, http.StatusOK)
		if !strings.Contains(page.text(), `<a href="/teach">Teaching</a>`) {
			t.Fatalf("the demo %s's courses page links no dashboard: %.1500s", role, page.body)
		}
		if admin := strings.Contains(page.text(), `<a href="/admin"`); admin != (role == "admin") {
			t.Fatalf("the demo %s's header links Admin: %v", role, admin)
		}
	}
	// A learner's header links neither.
	r = f.must(req{method: "POST", path: "/login/demo", form: url.Values{"role": {"student"}}}, http.StatusSeeOther)
	page := f.must(req{path: "/my", token: r.cookie(sessionCookie).Value, cookies: []*http.Cookie{r.cookie(demoCookie)}}, http.StatusOK)
	if strings.Contains(page.text(), `href="/teach"`) || strings.Contains(page.text(), `href="/admin"`) {
		t.Fatalf("the demo student's header: %.1500s", page.body)
	}
}
