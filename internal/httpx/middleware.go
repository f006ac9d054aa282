package httpx

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// Middleware wraps a handler.
type Middleware func(http.Handler) http.Handler

// Chain applies middleware so that the first listed runs first.
func Chain(h http.Handler, mws ...Middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

var requestIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Observe gives each request an id, recovers panics as 500 envelopes and
// writes one log line per request. The line carries tenant, user, route,
// status and duration, never headers or bodies, so no token reaches a log.
// Every answer says nosniff: browsers must take API and H5P bodies as the
// type they are sent with, never guess a script or a page from content.
func Observe(log *slog.Logger, trustProxy bool) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get("X-Request-Id")
			if !requestIDPattern.MatchString(id) {
				b := make([]byte, 8)
				rand.Read(b)
				id = hex.EncodeToString(b)
			}
			info := &requestInfo{id: id, ip: clientIP(r, trustProxy), origin: requestOrigin(r, trustProxy), logger: log,
				acceptEncoding: r.Header.Get("Accept-Encoding")}
			r = r.WithContext(contextWithInfo(r.Context(), info))
			w.Header().Set("X-Request-Id", id)
			w.Header().Set("X-Content-Type-Options", "nosniff")
			rec := newRecorder(w)
			defer func() {
				if p := recover(); p != nil {
					log.Error("panic", "request_id", id, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
					if !rec.sent {
						rec.reset()
						WriteError(rec, r, fmt.Errorf("panic: %v", p))
					}
				}
				rec.finish(r)
				route := info.route
				if route == "" {
					route = r.Pattern
				}
				log.LogAttrs(r.Context(), slog.LevelInfo, "request",
					slog.String("request_id", id),
					slog.String("method", r.Method),
					slog.String("route", route),
					slog.Int("status", rec.status),
					slog.Int("bytes", rec.size),
					slog.Int64("tenant", info.tenantID),
					slog.Int64("user", info.userID),
					slog.String("ip", info.ip),
					slog.Duration("duration", time.Since(start)),
				)
			}()
			next.ServeHTTP(rec, r)
		})
	}
}

// InternalTokenValid compares the X-Internal-Token header in constant time.
func InternalTokenValid(r *http.Request, internalToken string) bool {
	got := r.Header.Get("X-Internal-Token")
	return internalToken != "" && got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(internalToken)) == 1
}

// RequestHost is the host that selects the tenant: X-Forwarded-Host only
// from a trusted proxy or with the internal token, else Host.
func RequestHost(r *http.Request, trustProxy bool, internalToken string) string {
	if fwd := r.Header.Get("X-Forwarded-Host"); fwd != "" && (trustProxy || InternalTokenValid(r, internalToken)) {
		return fwd
	}
	return r.Host
}

// Tenancy resolves the tenant from the request host and holds it open for
// the request. Unknown hosts answer 404 "Unknown tenant.".
func Tenancy(ts *platform.Tenants, trustProxy bool, internalToken string) Middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			t, release, err := ts.Resolve(r.Context(), RequestHost(r, trustProxy, internalToken))
			if err != nil {
				if apperr.Is(err, apperr.NotFound) {
					err = apperr.New(apperr.NotFound, "Unknown tenant.")
				}
				WriteError(w, r, err)
				return
			}
			defer release()
			next.ServeHTTP(w, r.WithContext(WithTenant(r.Context(), t)))
		})
	}
}
