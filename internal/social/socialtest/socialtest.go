// Package socialtest runs a real OpenID Connect provider for tests of
// social login: panva's oidc-provider (npm, pinned in
// internal/social/testdata/op, installed by `make test`), in node.
package socialtest

import (
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/nodetest"
)

// Dir is the provider's node project.
func Dir() string { return filepath.Join(fixtures.RepoRoot(), "internal", "social", "testdata", "op") }

// Need answers node's path; it skips the test where node or the
// installed oidc-provider is missing, or fails it under CI=true.
func Need(t testing.TB) string {
	t.Helper()
	return nodetest.Need(t, "OpenID provider", Dir(), "oidc-provider")
}

// Client is a client registered at the provider.
type Client struct {
	ID           string   `json:"client_id"`
	Secret       string   `json:"client_secret"`
	RedirectURIs []string `json:"redirect_uris"`
}

// Start runs the provider with the clients until the test ends and
// answers its issuer.
func Start(t testing.TB, node string, clients []Client) string {
	t.Helper()
	list, _ := json.Marshal(clients)
	op := nodetest.Start(t, node, Dir(), "op.mjs", "OP_CLIENTS="+string(list))
	issuer, _ := op.Next(t, "listening")["issuer"].(string)
	op.Drain()
	return issuer
}

// Person is who signs in at the provider: sub and the claims to tell
// (email, email_verified "true" or "false", given_name, family_name).
type Person = url.Values

// SignIn takes browser (which must not follow redirects) from the
// provider's authorization URL through its sign-in as p, and answers the
// first address outside the provider it is sent to (the callback),
// unopened.
func SignIn(t testing.TB, browser *http.Client, authorize *url.URL, p Person) *url.URL {
	t.Helper()
	next := authorize
	for range 10 {
		if next.Host != authorize.Host {
			return next
		}
		var res *http.Response
		var err error
		if m, _ := filepath.Match("/interaction/*", next.Path); m {
			res, err = browser.PostForm(next.String()+"/login", p)
		} else {
			res, err = browser.Get(next.String())
		}
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		loc := res.Header.Get("Location")
		if loc == "" {
			t.Fatalf("provider: %d at %s", res.StatusCode, next)
		}
		next, _ = next.Parse(loc)
	}
	t.Fatal("the provider never sent the browser back")
	return nil
}
