package auth

import (
	"net/http"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/tokens"
)

// ScopedTokenPrefix marks personal scoped tokens, checked by
// ScopedPrincipal instead of as signed access tokens.
const ScopedTokenPrefix = tokens.Prefix

// Authenticate reads the bearer token, if any, and stores the caller in the
// request context. A refused signed token leaves the caller anonymous with
// the reason recorded, so routes that need a user answer 401 with it; a
// refused scoped token answers 401 at once.
func Authenticate(clk clock.Clock) httpx.Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, ok := bearer(r)
			t := httpx.TenantFrom(r.Context())
			if !ok || t == nil {
				next.ServeHTTP(w, r)
				return
			}
			ctx := r.Context()
			now := clk.Now()
			var (
				p   *access.Principal
				err error
			)
			if strings.HasPrefix(raw, ScopedTokenPrefix) {
				p, err = ScopedPrincipal(ctx, t, now, raw)
			} else {
				var claims *Claims
				if claims, err = Parse(t, now, raw, 0); err == nil {
					p, err = LoadPrincipal(ctx, t, now, claims)
				}
			}
			if err == nil {
				next.ServeHTTP(w, r.WithContext(httpx.WithPrincipal(ctx, p)))
				return
			}
			// A client that sends a scoped token (a script, an agent) means to
			// use it: a refused one is a 401 on every route rather than a
			// quiet anonymous answer on public ones. A browser's stale
			// session token still falls back to anonymous there.
			if !apperr.Is(err, apperr.Unauthorized) || strings.HasPrefix(raw, ScopedTokenPrefix) {
				httpx.WriteError(w, r, err)
				return
			}
			next.ServeHTTP(w, r.WithContext(httpx.WithAuthError(ctx, err)))
		})
	}
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) < 8 || !strings.EqualFold(h[:7], "bearer ") {
		return "", false
	}
	tok := strings.TrimSpace(h[7:])
	return tok, tok != ""
}

// tokenLifetime is the lifetime of a new token of the class.
func tokenLifetime(remember bool, minutes int) time.Duration {
	if remember {
		return RememberLifetime
	}
	if minutes <= 0 {
		minutes = 5
	}
	return time.Duration(minutes) * time.Minute
}
