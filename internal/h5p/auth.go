package h5p

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// Leeway is the clock tolerance for a token's exp and nbf.
const Leeway = 30 * time.Second

// User is the caller of an H5P request.
type User struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Email       string   `json:"email"`
	Roles       []string `json:"roles"`
	Permissions []string `json:"permissions"`
	// System is the other parts of the platform calling with the internal
	// token: it holds every permission.
	System bool `json:"system"`
	// Anonymous callers may play content; nothing is saved for them.
	Anonymous bool `json:"anonymous"`
}

// Can reports whether the user holds the permission.
func (u *User) Can(perm string) bool {
	if u == nil {
		return false
	}
	return u.System || slices.Contains(u.Permissions, perm)
}

// LoggedIn reports whether the caller is a user (or the system), not
// anonymous.
func (u *User) LoggedIn() bool { return u != nil && !u.Anonymous }

// Anonymous is the caller without a valid token.
func Anonymous() *User {
	return &User{ID: "anonymous", Name: "Anonymous", Email: "", Roles: []string{}, Permissions: []string{}, Anonymous: true}
}

// SystemUser is the caller with a valid internal token.
func SystemUser() *User {
	perms := make([]string, len(access.H5PPermissions))
	for i, p := range access.H5PPermissions {
		perms[i] = string(p)
	}
	return &User{ID: "system", Name: "System", Roles: []string{}, Permissions: perms, System: true}
}

type userKey struct{}

// UserFrom returns the request's caller; anonymous when none was set.
func UserFrom(ctx context.Context) *User {
	if u, ok := ctx.Value(userKey{}).(*User); ok {
		return u
	}
	return Anonymous()
}

func withUser(ctx context.Context, u *User) context.Context {
	ctx = context.WithValue(ctx, userKey{}, u)
	// The request log line carries the user id; the principal holds
	// nothing else and grants nothing.
	if id, err := strconv.ParseInt(u.ID, 10, 64); err == nil {
		ctx = httpx.WithPrincipal(ctx, &access.Principal{UserID: id})
	}
	return ctx
}

// bearerToken is the token of the Authorization header, else of the
// _token query parameter the H5P library adds to its own AJAX calls.
func bearerToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(token)
		}
	}
	return r.URL.Query().Get("_token")
}

// authenticate sets the caller of the request. It never refuses a
// request: routes decide what an anonymous caller may do.
func (s *Service) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := httpx.TenantFrom(r.Context())
		u := s.identify(r, t)
		next.ServeHTTP(w, r.WithContext(withUser(r.Context(), u)))
	})
}

func (s *Service) identify(r *http.Request, t *platform.Tenant) *User {
	if httpx.InternalTokenValid(r, s.internalKey) {
		return SystemUser()
	}
	raw := bearerToken(r)
	if raw == "" || t == nil {
		return Anonymous()
	}
	claims, err := auth.Parse(t, s.clock.Now(), raw, Leeway)
	if err != nil || claims.Subject == "" {
		return Anonymous()
	}
	return s.profile(r.Context(), t, raw, claims)
}
