package httpx_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

func TestIdempotencyKey(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		body := map[string]any{"email": u.Email}
		key := map[string]string{"Idempotency-Key": "forgot-1"}
		first := apitest.RunOne(t, env, apitest.Scenario{Name: "first", Method: "POST", Path: "/api/auth/password/forgot",
			Body: body, Headers: key, Status: 200, Events: []string{"ForgotPassword"}})
		second := apitest.RunOne(t, env, apitest.Scenario{Name: "retry replays", Method: "POST", Path: "/api/auth/password/forgot",
			Body: body, Headers: key, Status: 200, Events: []string{}})
		if string(first.Body) != string(second.Body) || second.Header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay differs: %s vs %s", first.Body, second.Body)
		}
		apitest.RunOne(t, env, apitest.Scenario{Name: "same key, other body", Method: "POST", Path: "/api/auth/password/forgot",
			Body: map[string]any{"email": "other@school.test"}, Headers: key, Status: 422, Events: []string{}})
		env.Clock.Advance(25 * time.Hour)
		apitest.RunOne(t, env, apitest.Scenario{Name: "expired key runs again", Method: "POST", Path: "/api/auth/password/forgot",
			Body: body, Headers: key, Status: 200, Events: []string{"ForgotPassword"}})
	})
}

// A login answer holds a live token: kept for a day it would be handed to
// anyone replaying the key after the token's revocation.
func TestIdempotencyKeepsNoCredentials(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		key := map[string]string{"Idempotency-Key": "login-1"}
		login := func() *apitest.Response {
			return apitest.RunOne(t, env, apitest.Scenario{Name: "login", Method: "POST", Path: "/api/auth/login",
				Body: map[string]any{"email": u.Email, "password": u.Password}, Headers: key, Status: 200})
		}
		first, second := login(), login()
		if second.Header.Get("Idempotent-Replayed") != "" || first.String("data.token") == second.String("data.token") {
			t.Fatalf("login answer replayed: %s", second.Body)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM idempotency_keys`); n != 0 {
			t.Fatalf("%d idempotency rows kept after logins, want none", n)
		}
		for _, path := range []string{"/api/profile/password", "/api/profile/me-auth"} {
			env.Call(t, 422, "PUT", path, second.String("data.token"), map[string]any{"current_password": "wrong"})
		}
		apitest.RunOne(t, env, apitest.Scenario{Name: "register", Method: "POST", Path: "/api/auth/register",
			Headers: key, Status: 201, Body: map[string]any{"email": "idem@school.test", "password": "long-enough",
				"first_name": "I", "last_name": "D"}})
		if n := env.Count(t, `SELECT COUNT(*) FROM idempotency_keys`); n != 0 {
			t.Fatalf("%d idempotency rows kept after credential routes, want none", n)
		}
	})
}

// The stored request hash is keyed with the tenant's secret: a plain
// SHA-256 of a body holding a password could be checked against guesses.
func TestIdempotencyHashIsKeyed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		body := map[string]any{"email": "someone@school.test"}
		apitest.RunOne(t, env, apitest.Scenario{Name: "forgot", Method: "POST", Path: "/api/auth/password/forgot",
			Body: body, Headers: map[string]string{"Idempotency-Key": "k"}, Status: 200})
		raw, _ := json.Marshal(body)
		plain := sha256.Sum256(append([]byte("POST /api/auth/password/forgot\napplication/json\n"), raw...))
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		var stored string
		if err := tenant.DB.QueryRowContext(context.Background(), `SELECT request_hash FROM idempotency_keys WHERE key = 'k'`).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if len(stored) != 64 || stored == hex.EncodeToString(plain[:]) {
			t.Fatalf("request hash %q is an unkeyed SHA-256 of the request", stored)
		}
	})
}
