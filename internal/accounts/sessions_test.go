package accounts_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// Changing one's own password ends every other session (someone who knew
// the old password may hold one) but keeps the caller's.
func TestOwnPasswordChangeEndsOtherSessions(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.NewUser("student")
		other, _ := env.Login(env.Host, u.Email, u.Password)
		caller := env.UserClient(u)
		apitest.OK(t, caller.PutProfilePassword(ctx, client.PasswordInputBody{CurrentPassword: u.Password,
			NewPassword: "changed-password", NewPasswordConfirmation: "changed-password"}))
		if _, err := caller.GetProfileMe(ctx); err != nil {
			t.Fatalf("the caller's session: %v, want 200", err)
		}
		if _, err := env.Client("", other).GetProfileMe(ctx); client.StatusOf(err) != 401 {
			t.Fatalf("another session: %v, want 401", err)
		}
	})
}
