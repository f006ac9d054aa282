package auth

import (
	"net/http"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/httpx"
)

// ScopedTokenPrefix marks personal scoped tokens, checked by their own
// verifier (a later capability) instead of as signed access tokens.
const ScopedTokenPrefix = "lms_pat_"

// Authenticate reads the bearer token, if any, and stores the caller in the
// request context. A refused token leaves the caller anonymous with the
// reason recorded, so routes that need a user answer 401 with it.
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
			if strings.HasPrefix(raw, ScopedTokenPrefix) {
				ctx = httpx.WithAuthError(ctx, apperr.New(apperr.Unauthorized, "Scoped tokens are not enabled on this server."))
				next.ServeHTTP(w, r.WithContext(ctx))
				return
			}
			now := clk.Now()
			claims, err := Parse(t, now, raw, 0)
			if err == nil {
				p, perr := LoadPrincipal(ctx, t, now, claims)
				if perr == nil {
					next.ServeHTTP(w, r.WithContext(httpx.WithPrincipal(ctx, p)))
					return
				}
				err = perr
			}
			if !apperr.Is(err, apperr.Unauthorized) {
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
