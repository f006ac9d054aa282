package server_test

import (
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestEveryAnswerIsTheEnvelope checks, through the real server, that what
// no route answers is still the JSON envelope under /api and /h5p, on the
// tenant host and the platform host: an unknown path is 404, a known path
// under another method is 405 naming the methods in Allow, and every
// answer, served or not, says nosniff.
func TestEveryAnswerIsTheEnvelope(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		cases := []struct {
			name, method, path string
			token              string
			status             int
			message            string
			allow              string
		}{
			{name: "unknown API route", method: "GET", path: "/api/no-such-route", status: 404, message: "Not found."},
			{name: "unknown API route with a token", method: "GET", path: "/api/no-such-route", token: admin.Token,
				status: 404, message: "Not found."},
			{name: "outside /api and /h5p", method: "GET", path: "/", status: 404, message: "Not found."},
			// Served by the shared pattern of the overlapping course routes
			// (internal/httpx/mux.go), which none of them matches.
			{name: "unknown route beside overlapping ones", method: "GET", path: "/api/admin/courses/1/nothing",
				token: admin.Token, status: 404, message: "Not found."},
			{name: "API route, other method", method: "DELETE", path: "/api/health", status: 405,
				message: "Method not allowed.", allow: "GET, HEAD"},
			{name: "API route with a parameter, other method", method: "PUT", path: "/api/admin/courses/1/access",
				token: admin.Token, status: 405, message: "Method not allowed.", allow: "GET, HEAD, POST"},
			{name: "unknown H5P route", method: "GET", path: "/h5p/no-such-route", status: 404, message: "Not found."},
			{name: "H5P route, other method", method: "DELETE", path: "/h5p/health", status: 405,
				message: "Method not allowed.", allow: "GET, HEAD"},
			{name: "H5P AJAX route, other method", method: "PUT", path: "/h5p/ajax", token: admin.Token, status: 405,
				message: "Method not allowed.", allow: "GET, HEAD, POST"},
		}
		for _, host := range []string{env.Host, "platform.test"} {
			for _, c := range cases {
				t.Run(host+" "+c.name, func(t *testing.T) {
					res := env.Do(apitest.Request{Method: c.method, Path: c.path, Host: host, Token: c.token})
					if res.Status != c.status || res.Get("success") != false || res.String("message") != c.message ||
						!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
						t.Fatalf("%s %s: %d %s %q, want %d %q in the envelope", c.method, c.path, res.Status,
							res.Header.Get("Content-Type"), res.Body, c.status, c.message)
					}
					if got := res.Header.Get("Allow"); got != c.allow {
						t.Errorf("Allow = %q, want %q", got, c.allow)
					}
					if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
						t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
					}
				})
			}
		}

		// A host that names no tenant is refused before any route is
		// looked up, by the API and the H5P service alike.
		for _, path := range []string{"/api/no-such-route", "/api/health", "/h5p/no-such-route", "/h5p/contents"} {
			res := env.Do(apitest.Request{Method: "GET", Path: path, Host: "nobody.test"})
			if res.Status != 404 || res.Get("success") != false || res.String("message") != "Unknown tenant." ||
				res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s on an unknown host: %d %s %q", path, res.Status, res.Header, res.Body)
			}
		}

		// Served answers carry nosniff too, and the ServeMux's redirect to
		// a cleaned path stays a redirect.
		for _, path := range []string{"/api/health", "/h5p/health", "/api/openapi.json"} {
			if res := env.Do(apitest.Request{Method: "GET", Path: path}); res.Status != 200 ||
				res.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("GET %s: %d, X-Content-Type-Options %q", path, res.Status, res.Header.Get("X-Content-Type-Options"))
			}
		}
		res := env.Do(apitest.Request{Method: "GET", Path: "/api/x/../health"})
		if res.Status != 200 || res.Get("success") != true {
			t.Errorf("GET /api/x/../health after the redirect: %d %q", res.Status, res.Body)
		}
	})
}
