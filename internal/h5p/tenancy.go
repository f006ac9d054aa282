package h5p

import (
	"context"
	"net"
	"net/http"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

var (
	errUnknownTenant = apperr.New(apperr.NotFound, "Unknown tenant.")
	errInternalToken = apperr.New(apperr.Unauthorized, "Invalid internal token.")
)

// resolveTenant finds the tenant serving host: the platform host and
// tenant hosts directly, and sub-hosts of a tenant host by stripping
// leftmost labels ("h5p.school.test" is served by "school.test").
func (s *Service) resolveTenant(ctx context.Context, host string) (*platform.Tenant, func(), error) {
	host = platform.NormalizeHost(host)
	if host == "" {
		return nil, nil, errUnknownTenant
	}
	for {
		t, release, err := s.tenants.Resolve(ctx, host)
		if err == nil {
			return t, release, nil
		}
		if !apperr.Is(err, apperr.NotFound) {
			return nil, nil, err
		}
		// IP addresses have no parent host; a name is tried down to its
		// last label, so sub-hosts of a single-label platform host
		// ("localhost") resolve too.
		_, parent, more := strings.Cut(host, ".")
		if !more || parent == "" || net.ParseIP(host) != nil {
			return nil, nil, errUnknownTenant
		}
		host = parent
	}
}

// isLoopback reports whether host names this machine (localhost,
// 127.0.0.0/8, ::1).
func isLoopback(host string) bool {
	host = platform.NormalizeHost(host)
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tenancy checks the internal token, resolves the tenant and holds it open
// for the request. A request carrying a wrong internal token is refused
// before anything else. Routes that serve loopback hosts without a tenant
// (the health check) see a nil tenant there instead of a 404.
func (s *Service) tenancy(loopbackOK bool, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Internal-Token") != "" && !httpx.InternalTokenValid(r, s.internalKey) {
			writeError(w, r, errInternalToken)
			return
		}
		host := httpx.RequestHost(r, s.trustProxy, s.internalKey)
		t, release, err := s.resolveTenant(r.Context(), host)
		if err != nil {
			if apperr.Is(err, apperr.NotFound) && loopbackOK && isLoopback(host) {
				next.ServeHTTP(w, r)
				return
			}
			writeError(w, r, err)
			return
		}
		defer release()
		next.ServeHTTP(w, r.WithContext(httpx.WithTenant(r.Context(), t)))
	})
}
