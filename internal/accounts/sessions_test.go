package accounts_test

import (
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// Changing one's own password ends every other session (someone who knew
// the old password may hold one) but keeps the caller's.
func TestOwnPasswordChangeEndsOtherSessions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		other, _ := env.Login(env.Host, u.Email, u.Password)
		res := env.Do(apitest.Request{Method: "PUT", Path: "/api/profile/password", Token: u.Token,
			Body: map[string]any{"current_password": u.Password, "new_password": "changed-password",
				"new_password_confirmation": "changed-password"}})
		if res.Status != 200 {
			t.Fatalf("change: %d %s", res.Status, res.Body)
		}
		if got := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: u.Token}).Status; got != 200 {
			t.Fatalf("the caller's session: %d, want 200", got)
		}
		if got := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: other}).Status; got != 401 {
			t.Fatalf("another session: %d, want 401", got)
		}
	})
}
