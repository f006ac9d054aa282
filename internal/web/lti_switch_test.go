package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// TestLTILaunchAsksBeforeSwitching: a launch link opened where another
// user is signed in does not swap the session silently (login CSRF): it
// asks, keeping the launch's token in a SameSite=Strict cookie until the
// learner chooses. The same user, or a dead session, goes straight on.
// The API is a stub of the two routes the launch calls.
func TestLTILaunchAsksBeforeSwitching(t *testing.T) {
	users := map[string]string{"tok-alice": `{"id":1,"name":"Alice","email":"alice@school.test"}`,
		"tok-bob": `{"id":2,"name":"Bob","email":"bob@school.test","roles":["tutor"],"permissions":["course_update_authored"]}`}
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/api/lti/tool/exchange":
			var in struct{ Code string }
			json.NewDecoder(r.Body).Decode(&in)
			if _, ok := users["tok-"+in.Code]; !ok {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"success":false,"message":"The launch code is invalid or has expired."}`))
				return
			}
			w.Write([]byte(`{"success":true,"message":"","data":{"token":"tok-` + in.Code + `","expires_at":"2099-01-01T00:00:00Z"}}`))
		case r.Method == http.MethodGet && r.URL.Path == "/api/profile/me":
			u, ok := users[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
			if !ok {
				w.WriteHeader(http.StatusUnauthorized)
				w.Write([]byte(`{"success":false,"message":"Unauthenticated."}`))
				return
			}
			w.Write([]byte(`{"success":true,"message":"","data":` + u + `}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer stub.Close()
	f := newFront(t, stub.URL, "platform.test", frontOptions{})
	f.host = "school.test"

	// Nobody signed in: straight to the course.
	r := f.must(req{path: "/lti/launch?code=bob&course=7"}, http.StatusSeeOther)
	if c := r.cookie(sessionCookie); c == nil || c.Value != "tok-bob" || r.header.Get("Location") != "/learn/7" {
		t.Fatalf("launch without a session: %v %v", r.header.Get("Location"), r.header["Set-Cookie"])
	}
	// The same user signed in, or a session the API no longer accepts:
	// straight on too.
	for _, current := range []string{"tok-bob", "dead-token"} {
		r = f.must(req{path: "/lti/launch?code=bob&course=7", token: current}, http.StatusSeeOther)
		if c := r.cookie(sessionCookie); c == nil || c.Value != "tok-bob" {
			t.Fatalf("launch over session %s: %v", current, r.header["Set-Cookie"])
		}
	}

	// Alice signed in opens Bob's link: she is asked, and still Alice.
	r = f.must(req{path: "/lti/launch?code=bob&course=7", token: "tok-alice"}, http.StatusOK)
	if r.cookie(sessionCookie) != nil || !strings.Contains(r.text(), "Alice (alice@school.test)") ||
		!strings.Contains(r.text(), "Bob (bob@school.test)") || !strings.Contains(r.text(), `action="/lti/launch/confirm"`) {
		t.Fatalf("switch page: %v %.600s", r.header["Set-Cookie"], r.body)
	}
	pending := r.cookie("lms_lti_pending")
	if pending == nil || pending.Value != "tok-bob" || !pending.HttpOnly || pending.SameSite != http.SameSiteStrictMode ||
		pending.Path != "/lti/" || pending.MaxAge <= 0 || pending.MaxAge > 600 {
		t.Fatalf("pending cookie: %v", r.header["Set-Cookie"])
	}
	if cc := r.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("switch page Cache-Control %q", cc)
	}
	keep := []*http.Cookie{{Name: "lms_lti_pending", Value: pending.Value}}

	// Another site cannot answer for her.
	f.must(req{method: "POST", path: "/lti/launch/confirm", token: "tok-alice", cookies: keep,
		form: url.Values{"choice": {"switch"}, "course": {"7"}}, headers: map[string]string{"Sec-Fetch-Site": "cross-site",
			"Origin": "https://evil.example"}}, http.StatusForbidden)
	// Without the pending cookie (it is Strict: a cross-site form never
	// carries it) there is nothing to confirm.
	r = f.must(req{method: "POST", path: "/lti/launch/confirm", token: "tok-alice",
		form: url.Values{"choice": {"switch"}, "course": {"7"}}}, http.StatusBadRequest)
	if r.cookie(sessionCookie) != nil {
		t.Fatal("a confirmation without a pending launch set a session")
	}
	// Staying keeps Alice and drops the pending token.
	r = f.must(req{method: "POST", path: "/lti/launch/confirm", token: "tok-alice", cookies: keep,
		form: url.Values{"choice": {"stay"}}}, http.StatusSeeOther)
	if r.cookie(sessionCookie) != nil || r.header.Get("Location") != "/my" {
		t.Fatalf("stay: %v %v", r.header.Get("Location"), r.header["Set-Cookie"])
	}
	if c := r.cookie("lms_lti_pending"); c == nil || c.MaxAge >= 0 {
		t.Fatalf("stay must drop the pending token: %v", r.header["Set-Cookie"])
	}
	// Switching makes Bob's token the session and lands on the course.
	r = f.must(req{method: "POST", path: "/lti/launch/confirm", token: "tok-alice", cookies: keep,
		form: url.Values{"choice": {"switch"}, "course": {"7"}}}, http.StatusSeeOther)
	c := r.cookie(sessionCookie)
	if c == nil || c.Value != "tok-bob" || !c.HttpOnly || c.MaxAge != 8*3600 || r.header.Get("Location") != "/learn/7" {
		t.Fatalf("switch: %v %v", r.header.Get("Location"), r.header["Set-Cookie"])
	}
	if c := r.cookie("lms_lti_pending"); c == nil || c.MaxAge >= 0 {
		t.Fatalf("switch must drop the pending token: %v", r.header["Set-Cookie"])
	}
	// The header's links follow the launched user's profile: Bob, a
	// tutor, sees Teaching; Alice, a learner, does not; neither is an
	// admin.
	for tok, teach := range map[string]bool{"tok-bob": true, "tok-alice": false} {
		page := f.must(req{path: "/profile", token: tok}, http.StatusOK).text()
		if strings.Contains(page, `<a href="/teach">`) != teach || strings.Contains(page, `href="/admin"`) {
			t.Fatalf("%s's header: %.1500s", tok, page)
		}
	}
}
