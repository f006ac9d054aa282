package lmsctl_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// proxied is a session logged in to env's tenant, with a token of its
// admin holding scopes, through a proxy: each request goes to intercept
// first, which answers it itself (true) or lets it through (false). It
// stands for the network between lmsctl and the server.
func proxied(t *testing.T, env *apitest.Env, intercept func(w http.ResponseWriter, r *http.Request) bool, scopes ...string) *session {
	t.Helper()
	target, err := url.Parse(env.HTTP.URL)
	if err != nil {
		t.Fatal(err)
	}
	forward := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		pr.SetURL(target)
		// The Host header names the tenant.
		pr.Out.Host = pr.In.Host
	}}
	server := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !intercept(w, r) {
			forward.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(server.Close)
	s := newSession(t, false)
	s.loginAt(server.URL, env.Host, adminToken(t, env, scopes...))
	return s
}

// dropConnection closes a request's connection without an answer, as a
// network failure or a server going away would.
func dropConnection(t *testing.T, w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		t.Error(err)
		return
	}
	conn.Close()
}
