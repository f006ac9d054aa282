package tokens_test

import (
	"reflect"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestScopedTokensOnH5P: the H5P service asks the API about a scoped
// token, needs h5p:read for reads, and drops it at once when it is
// revoked.
func TestScopedTokensOnH5P(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		tutor := env.NewUser("tutor")
		id, reader := create(t, env, tutor.Token, map[string]any{"name": "h5p", "scopes": []string{"h5p:read"}})
		_, courses := create(t, env, tutor.Token, map[string]any{"name": "courses", "scopes": []string{"courses:read"}})
		list := func(token string) int {
			return env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents", Token: token}).Status
		}
		if got := list(tutor.Token); got != 200 {
			t.Fatalf("tutor's signed token: %d", got)
		}
		if got := list(reader); got != 200 {
			t.Fatalf("h5p:read token: %d", got)
		}
		if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents?_token=" + reader}); res.Status == 200 {
			t.Fatal("a scoped token in the URL is accepted")
		}
		if got := list(courses); got == 200 {
			t.Fatal("a token without an h5p scope lists H5P contents")
		}
		if got := list(reader[:len(reader)-1]); got == 200 {
			t.Fatal("a truncated token lists H5P contents")
		}
		// Reading does not allow writing.
		res := env.Do(apitest.Request{Method: "POST", Path: "/h5p/contents", Token: reader, Body: map[string]any{}})
		if res.Status >= 200 && res.Status < 300 {
			t.Fatalf("h5p:read token wrote: %d %s", res.Status, res.Body)
		}
		// Its calls are in the agent audit with the H5P route pattern.
		audit := waitAudit(t, env, "token_id="+id+"&route="+urlQuery("GET /h5p/contents")+"&status=200", 1)
		if audit.Number("data.0.user_id") != float64(tutor.ID) {
			t.Fatalf("audit of an H5P call: %s", audit.Body)
		}
		env.Call(t, 200, "DELETE", "/api/auth/tokens/"+id, tutor.Token, nil)
		// The token's own limit holds on /h5p too; the service's profile
		// lookup (at most once a minute) is one of its calls.
		_, limited := create(t, env, tutor.Token, map[string]any{"name": "l", "scopes": []string{"h5p:read"}, "rate_limit_per_minute": 3})
		if first, second := list(limited), list(limited); first != 200 || second != 200 {
			t.Fatal("limited token refused early")
		}
		res = env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents", Token: limited})
		want := map[string]any{"success": false, "message": "This token exceeded its rate limit.", "error": "rate_limited"}
		if res.Status != 429 || !reflect.DeepEqual(res.JSON, want) || res.Header.Get("Retry-After") == "" {
			t.Fatalf("over the limit on /h5p: %d %s", res.Status, res.Body)
		}
		if got := list(reader); got == 200 {
			t.Fatal("a revoked token still lists H5P contents")
		}
	})
}
