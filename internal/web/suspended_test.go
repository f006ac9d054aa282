package web

import (
	"net/http"
	"strings"
	"testing"
)

// A suspended tenant's site says so, with the API's 503, on its pages and
// through the BFF alike.
func TestSuspendedTenant(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		token := s.env.As("admin").Token
		if err := s.env.Server.Tenants.Suspend(t.Context(), s.env.Tenant); err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"/", "/courses"} {
			page := s.do(req{path: path})
			if page.status != http.StatusServiceUnavailable || !strings.Contains(page.text(), "suspended by the platform operator") {
				t.Errorf("%s: %d %.300s", path, page.status, page.text())
			}
		}
		if bff := s.do(req{path: "/bff/api/profile/me", token: token}); bff.status != http.StatusServiceUnavailable {
			t.Errorf("bff: %d %.200s", bff.status, bff.text())
		}
	})
}
