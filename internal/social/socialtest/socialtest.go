// Package socialtest runs a real OpenID Connect provider for tests of
// social login: panva's oidc-provider (npm, pinned in
// internal/social/testdata/op, installed by `make test`), in node.
package socialtest

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// Dir is the provider's node project.
func Dir() string { return filepath.Join(apitest.RepoRoot(), "internal", "social", "testdata", "op") }

// Need answers node's path; it skips the test where node or the
// installed oidc-provider is missing, or fails it under CI=true.
func Need(t testing.TB) string {
	t.Helper()
	skip := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatal("OpenID provider: " + why)
		}
		t.Skip("OpenID provider: " + why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(Dir(), "node_modules", "oidc-provider", "package.json")); err != nil {
		skip("oidc-provider is not installed: run `npm ci --prefix internal/social/testdata/op` (make test does)")
	}
	return node
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
	cmd := exec.Command(node, "op.mjs")
	cmd.Dir = Dir()
	cmd.Env = append(os.Environ(), "OP_CLIENTS="+string(list))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	// Closing stdin stops the provider; the kill is for one that hangs.
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		var ev struct{ Event, Issuer string }
		if json.Unmarshal(lines.Bytes(), &ev) == nil && ev.Event == "listening" {
			go io.Copy(io.Discard, stdout)
			return ev.Issuer
		}
	}
	t.Fatalf("the provider stopped before listening: %v", lines.Err())
	return ""
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
