package auth_test

import (
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestReturnURLStaysOnSite: the return_url that receives the reset token
// or sits in the verification mail must be on the tenant's hosts (or a
// sub-host, the frontend's, or the configured lms_auth.return_url's
// host): anyone may ask for the mail of anyone's address, so another host
// would receive the owner's secret. The check comes before the address
// is looked up, so it tells nothing of which addresses have accounts.
func TestReturnURLStaysOnSite(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		setConfig(t, env, "lms_auth.return_url", "https://app.partner.example/done")
		setConfig(t, env, "lms_auth.registration", "enabled")
		forgot := func(email, returnURL string) map[string]any {
			return map[string]any{"email": email, "return_url": returnURL}
		}
		refused := map[string]any{"errors.return_url": apitest.Present}
		var scenarios []apitest.Scenario
		for _, bad := range []string{"https://evil.example/reset", "https://school.test.evil.example/reset",
			"https://evilschool.test/reset", "https://user@evil.example/", "ftp://school.test/reset"} {
			for _, email := range []string{u.Email, "nobody@school.test"} {
				scenarios = append(scenarios, apitest.Scenario{Name: "forgot " + bad + " " + email, Method: "POST",
					Path: "/api/auth/password/forgot", Body: forgot(email, bad), Status: 422, JSON: refused, Events: []string{}})
			}
		}
		scenarios = append(scenarios,
			apitest.Scenario{Name: "register with a foreign return_url", Method: "POST", Path: "/api/auth/register",
				Body: map[string]any{"email": "new@school.test", "password": "long-enough", "first_name": "A", "last_name": "B",
					"return_url": "https://evil.example/welcome"}, Status: 422, JSON: refused, Events: []string{}},
			apitest.Scenario{Name: "the tenant's host", Method: "POST", Path: "/api/auth/password/forgot",
				Body: forgot(u.Email, "https://school.test/reset"), Status: 200, Events: []string{"ForgotPassword"}},
			apitest.Scenario{Name: "the frontend's sub-host", Method: "POST", Path: "/api/auth/password/forgot",
				Body: forgot(u.Email, "https://front.school.test/reset"), Status: 200, Events: []string{"ForgotPassword"}},
			apitest.Scenario{Name: "the configured return_url's host", Method: "POST", Path: "/api/auth/password/forgot",
				Body: forgot(u.Email, "https://app.partner.example/reset"), Status: 200, Events: []string{"ForgotPassword"}},
		)
		for _, sc := range scenarios {
			apitest.RunOne(t, env, sc)
		}
	})
}
