package tokens_test

import (
	"reflect"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestScopedTokensOnH5P: the H5P service asks the API about a scoped
// token, needs h5p:read for reads, and drops it at once when it is
// revoked.
func TestScopedTokensOnH5P(t *testing.T) {
	each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		tutor := env.NewUser("tutor")
		owner := env.UserClient(tutor)
		id, reader := create(t, owner, client.CreateInputBody{Name: "h5p", Scopes: []string{"h5p:read"}})
		_, courses := create(t, owner, client.CreateInputBody{Name: "courses", Scopes: []string{"courses:read"}})
		list := func(token string) error {
			_, err := env.Client("", token).GetH5PContents(ctx, client.GetH5PContentsParams{})
			return err
		}
		if err := list(tutor.Token); err != nil {
			t.Fatalf("tutor's signed token: %v", err)
		}
		if err := list(reader); err != nil {
			t.Fatalf("h5p:read token: %v", err)
		}
		// Raw: the token travels in the URL, which no client call does.
		if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents?_token=" + reader}); res.Status == 200 {
			t.Fatal("a scoped token in the URL is accepted")
		}
		if list(courses) == nil {
			t.Fatal("a token without an h5p scope lists H5P contents")
		}
		if list(reader[:len(reader)-1]) == nil {
			t.Fatal("a truncated token lists H5P contents")
		}
		// Reading does not allow writing.
		if saved, err := env.Client("", reader).PostH5PContents(ctx, client.ContentBody{}); err == nil {
			t.Fatalf("h5p:read token wrote: %+v", saved)
		}
		// Its calls are in the agent audit with the H5P route pattern.
		audit := waitAudit(t, env, client.GetAdminAgentAuditParams{TokenID: &id, Route: client.Ptr("GET /h5p/contents"),
			Status: client.Ptr(int64(200))}, 1)
		if audit.Items[0].UserID != tutor.ID {
			t.Fatalf("audit of an H5P call: %+v", audit.Items)
		}
		apitest.OK(t, owner.DeleteAuthTokensID(ctx, id))
		// The token's own limit holds on /h5p too; the service's profile
		// lookup (at most once a minute) is one of its calls.
		_, limited := create(t, owner, client.CreateInputBody{Name: "l", Scopes: []string{"h5p:read"},
			RateLimitPerMinute: client.Ptr(int64(3))})
		if first, second := list(limited), list(limited); first != nil || second != nil {
			t.Fatal("limited token refused early")
		}
		// Raw: the refusal's exact envelope and header.
		res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/contents", Token: limited})
		want := map[string]any{"success": false, "message": "This token exceeded its rate limit.", "error": "rate_limited"}
		if res.Status != 429 || !reflect.DeepEqual(res.JSON, want) || res.Header.Get("Retry-After") == "" {
			t.Fatalf("over the limit on /h5p: %d %s", res.Status, res.Body)
		}
		if list(reader) == nil {
			t.Fatal("a revoked token still lists H5P contents")
		}
	})
}
