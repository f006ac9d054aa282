package settings

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// server serves the settings routes for one tenant. Until the API test
// harness exists, the caller's role comes from the X-Test-Role header
// instead of a token.
func server(t *testing.T, tn *platform.Tenant) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	api := httpx.NewAPI(mux, httpx.Info{Title: "test", Version: "test"})
	api.UseMiddleware(httpx.Guard(api, nil))
	Routes(api, New(nil, clock.NewFake(epoch)))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := httpx.WithTenant(r.Context(), tn)
		if role := r.Header.Get("X-Test-Role"); role != "" {
			ctx = httpx.WithPrincipal(ctx, &access.Principal{UserID: 1, Roles: []string{role}})
		}
		mux.ServeHTTP(w, r.WithContext(ctx))
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	Success bool                `json:"success"`
	Message string              `json:"message"`
	Data    map[string]any      `json:"data"`
	Errors  map[string][]string `json:"errors"`
}

func call(t *testing.T, srv *httptest.Server, method, path, role, body string) (int, reply) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if role != "" {
		req.Header.Set("X-Test-Role", role)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, r
}

func TestRoutes(t *testing.T) {
	for name, open := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tn := open(t)
			srv := server(t, tn)

			status, r := call(t, srv, "GET", "/api/config", "", "")
			if status != 200 || !r.Success || r.Data["lms_auth"].(map[string]any)["registration"] != "enabled" {
				t.Fatalf("anonymous config: %d %+v", status, r)
			}
			if _, ok := r.Data["lms_gift_quiz"]; ok {
				t.Fatal("private key shown to anonymous caller")
			}
			if _, r = call(t, srv, "GET", "/api/config", "student", ""); r.Data["lms_gift_quiz"] != nil {
				t.Fatal("private key shown to student")
			}
			if _, r = call(t, srv, "GET", "/api/config", "admin", ""); r.Data["lms_gift_quiz"] == nil {
				t.Fatal("private key hidden from admin")
			}

			body := `{"config": [{"key": "lms_auth.registration", "value": "disabled"},
				{"key": "lms_auth.socialite.google.client_id", "value": null},
				{"key": "lms_gift_quiz.max_quiz_time", "value": 15}]}`
			if status, _ := call(t, srv, "POST", "/api/admin/config", "", body); status != 401 {
				t.Fatalf("anonymous update: %d", status)
			}
			if status, r := call(t, srv, "POST", "/api/admin/config", "tutor", body); status != 403 ||
				r.Message != "This action is unauthorized." {
				t.Fatalf("tutor update: %d %+v", status, r)
			}
			status, r = call(t, srv, "POST", "/api/admin/config", "admin", body)
			if status != 200 || r.Data["lms_auth"].(map[string]any)["registration"] != "disabled" ||
				r.Data["lms_gift_quiz"].(map[string]any)["max_quiz_time"] != 15.0 {
				t.Fatalf("admin update: %d %+v", status, r)
			}
			if _, r = call(t, srv, "GET", "/api/config", "", ""); r.Data["lms_auth"].(map[string]any)["registration"] != "disabled" {
				t.Fatal("update not seen by GET")
			}

			status, r = call(t, srv, "POST", "/api/admin/config", "admin",
				`{"config": [{"key": "lms_auth.registration", "value": "enabled"}, {"key": "lms_demo.enabled", "value": true}]}`)
			if status != 422 || r.Errors["lms_demo.enabled"][0] != "The lms_demo.enabled setting is read-only." {
				t.Fatalf("read-only update: %d %+v", status, r)
			}
			if _, r = call(t, srv, "GET", "/api/config", "", ""); r.Data["lms_auth"].(map[string]any)["registration"] != "disabled" {
				t.Fatal("refused update was partly written")
			}
			for _, bad := range []string{`{"config": []}`, `{}`, `{"config": [{"value": 1}]}`,
				`{"config": [{"key": "lms_auth.registration"}]}`} {
				if status, _ := call(t, srv, "POST", "/api/admin/config", "admin", bad); status != 422 {
					t.Errorf("%s: %d", bad, status)
				}
			}
		})
	}
}
