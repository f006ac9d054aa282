package web

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSignInNextStaysOnSite: the sign-in form's next goes only to a path
// of this site. Anything a browser could read as another host (a tab or
// line break it drops, a backslash it reads as a slash, a second slash,
// the same hidden behind percent-encoding) sends the learner to /my.
func TestSignInNextStaysOnSite(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		u := s.env.NewUser("student")
		for next, want := range map[string]string{
			"/\t/evil.example":       "/my",
			"/%09/evil.example":      "/my",
			"/%2509/evil.example":    "/my",
			"/\n/evil.example":       "/my",
			"/\r\n/evil.example":     "/my",
			"//evil.example":         "/my",
			"/%2F/evil.example":      "/my",
			"/%2fevil.example":       "/my",
			"/\\evil.example":        "/my",
			"/%5Cevil.example":       "/my",
			"\\/evil.example":        "/my",
			"https://evil.example/":  "/my",
			"evil.example":           "/my",
			"/\x7f/evil.example":     "/my",
			"/\u0085/evil.example":   "/my",
			"":                       "/my",
			"/learn/7":               "/learn/7",
			"/my?tab=done#top":       "/my?tab=done#top",
			"/device?code=WDGC-MKPM": "/device?code=WDGC-MKPM",
		} {
			r := s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {u.Password},
				"next": {next}}}, http.StatusSeeOther)
			if got := r.header.Get("Location"); got != want {
				t.Errorf("next %q: Location %q, want %q", next, got, want)
			}
		}
		// The page does not carry a refused next into its form either.
		r := s.must(req{path: "/login?next=" + url.QueryEscape("/\t/evil.example")}, http.StatusOK)
		if strings.Contains(r.text(), "evil.example") {
			t.Errorf("the login page keeps a refused next: %s", r.body)
		}
	})
}
