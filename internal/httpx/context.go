package httpx

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
)

type ctxKey int

const (
	infoKey ctxKey = iota
	tenantKey
	principalKey
)

// requestInfo is filled in as a request passes the layers, and read by the
// log line written when it is done.
type requestInfo struct {
	id       string
	ip       string
	route    string
	origin   string
	tenantID int64
	userID   int64
	logger   *slog.Logger
	// credentials is set for routes marked Route.Credentials.
	credentials bool
	// acceptEncoding is the request's Accept-Encoding header (Body).
	acceptEncoding string
}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(infoKey).(*requestInfo)
	return info
}

// RequestID returns the id of the request in ctx.
func RequestID(ctx context.Context) string {
	if info := infoFrom(ctx); info != nil {
		return info.id
	}
	return ""
}

// ClientIP returns the caller's address as the server sees it.
func ClientIP(ctx context.Context) string {
	if info := infoFrom(ctx); info != nil {
		return info.ip
	}
	return ""
}

// Origin is the scheme and host the caller reached the API at, for links
// the API mails about itself.
func Origin(ctx context.Context) string {
	if info := infoFrom(ctx); info != nil {
		return info.origin
	}
	return ""
}

func requestOrigin(r *http.Request, trustProxy bool) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); trustProxy && (p == "https" || p == "http") {
		scheme = p
	}
	host := r.Host
	if fwd := r.Header.Get("X-Forwarded-Host"); trustProxy && fwd != "" {
		host = fwd
	}
	return scheme + "://" + host
}

// WithTenant stores the request's tenant.
func WithTenant(ctx context.Context, t *platform.Tenant) context.Context {
	if info := infoFrom(ctx); info != nil {
		info.tenantID = t.ID
	}
	return context.WithValue(ctx, tenantKey, t)
}

// TenantFrom returns the request's tenant; every API route has one.
func TenantFrom(ctx context.Context) *platform.Tenant {
	t, _ := ctx.Value(tenantKey).(*platform.Tenant)
	return t
}

// WithPrincipal stores the authenticated caller.
func WithPrincipal(ctx context.Context, p *access.Principal) context.Context {
	if info := infoFrom(ctx); info != nil {
		info.userID = p.UserID
	}
	return context.WithValue(ctx, principalKey, p)
}

// PrincipalFrom returns the authenticated caller, or nil for anonymous.
func PrincipalFrom(ctx context.Context) *access.Principal {
	p, _ := ctx.Value(principalKey).(*access.Principal)
	return p
}

// clientIP is the remote address, or with a trusted proxy the first
// address of X-Forwarded-For.
func clientIP(r *http.Request, trustProxy bool) string {
	if trustProxy {
		if fwd := r.Header.Get("X-Forwarded-For"); fwd != "" {
			first, _, _ := strings.Cut(fwd, ",")
			if ip := net.ParseIP(strings.TrimSpace(first)); ip != nil {
				return ip.String()
			}
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func contextWithInfo(ctx context.Context, info *requestInfo) context.Context {
	return context.WithValue(ctx, infoKey, info)
}

type authErrKey struct{}

// WithAuthError records why a presented token was refused; routes that need
// a user answer 401 with it, public routes treat the caller as anonymous.
func WithAuthError(ctx context.Context, err error) context.Context {
	return context.WithValue(ctx, authErrKey{}, err)
}

// AuthError returns the reason the request's token was refused, if any.
func AuthError(ctx context.Context) error {
	err, _ := ctx.Value(authErrKey{}).(error)
	return err
}
