package h5p

import (
	"net/http"
	"strconv"

	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/tokens"
)

// scopedCaller turns a scoped token (lms_pat_...) into the caller. The
// service cannot verify one itself, so it asks the API (GET
// /api/profile/me, which every scoped token may call) with the same cache
// and revocation notices as for signed tokens. A malformed secret is
// anonymous without asking, and so is one sent in the query string. On
// /h5p reads need h5p:read and writes h5p:write (scopeOf, which the
// service's operations declare too); a token without the scope is anonymous, and its
// permissions are those its scopes keep. Its rate limit and the agent
// audit apply through Options.Scoped.
func (s *Service) scopedCaller(r *http.Request, t *platform.Tenant, raw string) *User {
	id, ok := tokens.ParseSecret(raw)
	// Only from the Authorization header: a secret in a URL (the _token
	// parameter the H5P library adds) would reach logs and histories.
	if !ok || r.Header.Get("Authorization") == "" {
		return Anonymous()
	}
	news := s.newsOf(t)
	if news.revoked(id) {
		return Anonymous()
	}
	key := profileKey(t, raw)
	// Noted before the API is asked, so a revocation heard meanwhile drops
	// what is cached; noted again with the user once the profile names it.
	news.saw(id, "", key)
	entry := s.cachedProfile(r.Context(), t, raw, "token "+id, s.clock.Now().Add(ProfileTTL))
	if entry.Profile == nil || entry.Profile.Token == nil {
		// Refused by the API, or the API unreachable: no user to act as.
		return Anonymous()
	}
	tok := entry.Profile.Token
	subject := strconv.FormatInt(entry.Profile.ID, 10)
	news.saw(id, subject, key)
	if !tokens.Has(tok.Scopes, string(scopeOf(r.Method))) {
		return Anonymous()
	}
	u := userOf(subject, entry)
	u.tokenID, u.scopes, u.rateLimit = id, tok.Scopes, tok.RateLimitPerMinute
	return u
}

// scopeOf is the scope a scoped token needs on an H5P route: h5p:read to
// read, h5p:write to change.
func scopeOf(method string) httpx.Scope {
	if method == http.MethodGet || method == http.MethodHead {
		return tokens.H5PRead
	}
	return tokens.H5PWrite
}
