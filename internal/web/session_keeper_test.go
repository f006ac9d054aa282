package web

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// formSignIn signs u in through the sign-in form and returns the session and
// the marker cookies the browser got.
func formSignIn(t *testing.T, s *stack, u *apitest.User) (session, marker *http.Cookie) {
	t.Helper()
	r := s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {u.Password}}}, http.StatusSeeOther)
	session, marker = r.cookie(sessionCookie), r.cookie(endedCookie)
	if session == nil || marker == nil {
		t.Fatalf("sign in: %v", r.header)
	}
	return session, marker
}

// TestSessionOutlivesItsToken: a learner signs in with a five-minute
// token and comes back after nine minutes with the cookie of then; the
// keeper renewed the token meanwhile (over real HTTP, on the injected
// clock), so the page opens and the browser gets the newest token.
func TestSessionOutlivesItsToken(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		u := s.env.NewUser("student")
		c, _ := formSignIn(t, s, u)
		if c.MaxAge != int(sessionTTL/time.Second) {
			t.Fatalf("the cookie lives %d s, want the session's %v", c.MaxAge, sessionTTL)
		}
		ctx := context.Background()
		s.web.keepSessions(ctx)
		if n := s.api.count("/api/auth/refresh"); n != 0 {
			t.Fatalf("a young token was renewed (%d)", n)
		}
		for range 3 {
			s.clock.Advance(3 * time.Minute)
			s.web.keepSessions(ctx)
		}
		if n := s.api.count("/api/auth/refresh"); n != 3 {
			t.Fatalf("%d renewals in nine minutes, want 3", n)
		}
		r := s.must(req{path: "/my", token: c.Value}, http.StatusOK)
		fresh := r.cookie(sessionCookie)
		if fresh == nil || fresh.Value == c.Value || fresh.MaxAge <= 0 || fresh.MaxAge > int(sessionTTL/time.Second) {
			t.Fatalf("the browser did not get the newest token: %v", fresh)
		}
		if me := apitest.Must(s.env.Client("", fresh.Value).GetProfileMe(t.Context()))(t); me.ID != u.ID {
			t.Fatalf("the new token is %d's", me.ID)
		}
		// The keeper's token is the one the browser holds now: the next
		// request needs no swap.
		r = s.must(req{path: "/my", token: fresh.Value}, http.StatusOK)
		if c := r.cookie(sessionCookie); c != nil {
			t.Fatalf("a second swap: %v", c)
		}
		// A tab left open since before the renewals signs out: the live
		// token is revoked, not only the one the tab holds.
		c2, _ := formSignIn(t, s, u)
		for range 2 {
			s.clock.Advance(3 * time.Minute)
			s.web.keepSessions(ctx)
		}
		live := s.web.keeper.current(c2.Value, s.clock.Now())
		if live == "" || live == c2.Value {
			t.Fatal("the second session was not renewed")
		}
		s.must(req{method: "POST", path: "/logout", token: c2.Value}, http.StatusSeeOther)
		_, err := s.env.Client("", live).GetProfileMe(t.Context())
		apitest.Refused(t, err, http.StatusUnauthorized)
		// Past the session's life the keeper lets go.
		s.clock.Advance(sessionTTL)
		s.web.keepSessions(ctx)
		if cur := s.web.keeper.current(fresh.Value, s.clock.Now()); cur != "" {
			t.Fatal("the keeper still holds an ended session")
		}
	})
}

// TestSessionEndedNotice: a session that really ended (the token expired
// while nothing renewed it, or the user was blocked) sends the browser to
// the sign-in page, which says so once, in the browser's language;
// signing out on purpose says nothing.
func TestSessionEndedNotice(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		u := s.env.NewUser("student")
		c, marker := formSignIn(t, s, u)
		// Nothing renews the token (the keeper's round is not run).
		s.clock.Advance(6 * time.Minute)
		r := s.must(req{path: "/my", token: c.Value, cookies: []*http.Cookie{marker}}, http.StatusSeeOther)
		if loc := r.header.Get("Location"); !strings.HasPrefix(loc, "/login") {
			t.Fatalf("to %q", loc)
		}
		if gone := r.cookie(sessionCookie); gone == nil || gone.MaxAge >= 0 {
			t.Fatal("the dead session's cookie stays")
		}
		for lang, want := range map[string]string{"en": "Your session has ended, please sign in again.",
			"pl": "Twoja sesja wygasła, zaloguj się ponownie.", "zh": "您的会话已结束，请重新登录。"} {
			r = s.must(req{path: "/login?next=/my", cookies: []*http.Cookie{marker},
				headers: map[string]string{"Accept-Language": lang}}, http.StatusOK)
			if !strings.Contains(r.text(), `id="session-ended"`) || !strings.Contains(r.text(), want) {
				t.Fatalf("%s: no notice: %.1500s", lang, r.text())
			}
			if m := r.cookie(endedCookie); m == nil || m.MaxAge >= 0 {
				t.Fatal("the notice is not said once")
			}
		}
		// Without the marker (a new browser), no notice.
		if r = s.must(req{path: "/login"}, http.StatusOK); strings.Contains(r.text(), `id="session-ended"`) {
			t.Fatal("a notice for a browser that had no session")
		}

		// A blocked user: the keeper's renewal is refused and the session
		// ends at once.
		c, marker = formSignIn(t, s, u)
		s.clock.Advance(3 * time.Minute)
		blocked := false
		apitest.Must(s.env.ClientAs("admin").PatchAdminUsersID(t.Context(), u.ID, client.UserChangeBody{IsActive: &blocked}))(t)
		s.web.keepSessions(context.Background())
		if cur := s.web.keeper.current(c.Value, s.clock.Now()); cur != "" {
			t.Fatal("the keeper holds a blocked user's session")
		}
		s.must(req{path: "/my", token: c.Value, cookies: []*http.Cookie{marker}}, http.StatusSeeOther)
		r = s.must(req{path: "/login", cookies: []*http.Cookie{marker}}, http.StatusOK)
		if !strings.Contains(r.text(), `id="session-ended"`) {
			t.Fatal("no notice after blocking")
		}

		// Signing out on purpose: the marker goes too.
		active := true
		apitest.Must(s.env.ClientAs("admin").PatchAdminUsersID(t.Context(), u.ID, client.UserChangeBody{IsActive: &active}))(t)
		c, _ = formSignIn(t, s, u)
		r = s.must(req{method: "POST", path: "/logout", token: c.Value}, http.StatusSeeOther)
		if m := r.cookie(endedCookie); m == nil || m.MaxAge >= 0 {
			t.Fatal("signing out keeps the marker")
		}
		if cur := s.web.keeper.current(c.Value, s.clock.Now()); cur != "" {
			t.Fatal("the keeper holds a signed-out session")
		}
	})
}

// TestRememberedSessionNotKept: a remember-me token (a month) is not the
// keeper's: its cookie lives as long as the token.
func TestRememberedSessionNotKept(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	u := s.env.NewUser("student")
	r := s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {u.Password},
		"remember": {"1"}}}, http.StatusSeeOther)
	c := r.cookie(sessionCookie)
	if c == nil || c.MaxAge < int(29*24*time.Hour/time.Second) {
		t.Fatalf("remembered cookie: %v", c)
	}
	if s.web.keeper.current(c.Value, s.clock.Now()) != "" {
		t.Fatal("the keeper holds a remember-me session")
	}
}
