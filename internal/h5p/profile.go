package h5p

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/platform"
)

// ProfileTTL is how long a caller's profile is cached, never past the
// token's expiry.
const ProfileTTL = 60 * time.Second

// Profile is what the API tells about the caller of a token.
type Profile struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Email       string   `json:"email"`
	Roles       []string `json:"roles"`
	Permissions []string `json:"permissions"`
	// Token describes a scoped token; nil for a signed token.
	Token *ProfileToken `json:"token,omitempty"`
}

// ProfileToken is what a profile tells about a scoped token.
type ProfileToken struct {
	Scopes             []string `json:"scopes"`
	RateLimitPerMinute int      `json:"rate_limit_per_minute,omitempty"`
}

// errDenied is the API refusing the token (401 or 403).
var errDenied = errors.New("h5p: the API refused the token")

// APIClient calls the API the way another machine would: over HTTP, with
// the caller's token and the tenant's host, through the typed client.
type APIClient struct {
	mu   sync.RWMutex
	base string
	api  *client.Client
	doer client.Doer
}

// NewAPIClient calls the API at base; a nil doer is an HTTP client with a
// short timeout.
func NewAPIClient(base string, doer client.Doer) *APIClient {
	if doer == nil {
		doer = &http.Client{Timeout: 10 * time.Second}
	}
	c := &APIClient{doer: doer}
	c.SetBaseURL(base)
	return c
}

// SetBaseURL points the client at the API, for servers whose address is
// known only once they listen (the demo, the test harness).
func (c *APIClient) SetBaseURL(base string) {
	base = strings.TrimRight(base, "/")
	// An unusable address leaves no client: every call then fails as if
	// the API were unreachable.
	api, _ := client.New(base, c.doer)
	c.mu.Lock()
	c.base, c.api = base, api
	c.mu.Unlock()
}

// BaseURL is the API base URL the client calls, for other parts that call
// the deployment at the same address.
func (c *APIClient) BaseURL() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.base
}

func (c *APIClient) current() (*client.Client, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.api == nil {
		return nil, fmt.Errorf("h5p: no API address (%q)", c.base)
	}
	return c.api, nil
}

// Profile fetches GET /api/profile/me for the token on the tenant's host.
// It returns errDenied when the API answers 401 or 403, and another error
// when the API cannot be reached or fails.
func (c *APIClient) Profile(ctx context.Context, host, token string) (Profile, error) {
	api, err := c.current()
	if err != nil {
		return Profile{}, err
	}
	me, err := api.WithHost(host).WithToken(token).GetProfileMe(ctx)
	switch status := client.StatusOf(err); {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return Profile{}, errDenied
	case err != nil:
		// The error names the URL, which never carries the token.
		return Profile{}, fmt.Errorf("h5p: profile from the API: %w", err)
	}
	return profileOf(me), nil
}

// profileOf keeps of the API's profile what the service uses.
func profileOf(me *client.Profile) Profile {
	p := Profile{ID: me.ID, Name: me.Name, Email: me.Email, Roles: me.Roles, Permissions: me.Permissions}
	if me.Token != nil {
		p.Token = &ProfileToken{Scopes: me.Token.Scopes}
		if me.Token.RateLimitPerMinute != nil {
			p.Token.RateLimitPerMinute = int(*me.Token.RateLimitPerMinute)
		}
	}
	return p
}

// cachedProfile is a cache entry: the profile, or the API's refusal.
type cachedProfile struct {
	Denied  bool     `json:"denied,omitempty"`
	Profile *Profile `json:"profile,omitempty"`
}

// profileKey names a token's profile in the tenant's cache space. It holds
// a hash of the token, never the token.
func profileKey(t *platform.Tenant, token string) string {
	sum := sha256.Sum256([]byte(token))
	return fmt.Sprintf("h5p:%d:profile:%s", t.ID, hex.EncodeToString(sum[:]))
}

// profile turns a verified token into the user, with the profile from the
// cache or the API. The API refusing the token makes the caller
// anonymous; the API unreachable leaves the id without permissions.
func (s *Service) profile(ctx context.Context, t *platform.Tenant, token string, claims *auth.Claims) *User {
	return userOf(claims.Subject, s.cachedProfile(ctx, t, token, claims.Subject, claims.ExpiresAt.Time))
}

// cachedProfile is the token's profile from the cache or the API, cached
// for ProfileTTL and never past expires. subject only names the caller in
// the log.
func (s *Service) cachedProfile(ctx context.Context, t *platform.Tenant, token, subject string, expires time.Time) cachedProfile {
	key := profileKey(t, token)
	var entry cachedProfile
	if b, ok, err := s.cache.Get(ctx, key); err == nil && ok && json.Unmarshal(b, &entry) == nil &&
		(entry.Denied || entry.Profile != nil) {
		return entry
	}
	p, err := s.API.Profile(ctx, t.PrimaryHost(), token)
	switch {
	case errors.Is(err, errDenied):
		entry = cachedProfile{Denied: true}
	case err != nil:
		s.log.Warn("h5p: profile unavailable", "tenant", t.ID, "user", subject, "error", err)
		return cachedProfile{}
	default:
		entry = cachedProfile{Profile: &p}
	}
	// Never cache past the token's expiry.
	ttl := min(ProfileTTL, expires.Sub(s.clock.Now()))
	if ttl > 0 {
		if b, err := json.Marshal(entry); err == nil {
			// The cache only saves calls: a failed write is harmless.
			_ = s.cache.Set(ctx, key, b, ttl)
		}
	}
	return entry
}

// userOf is the caller a profile entry describes: anonymous when the API
// refused the token, the id without permissions when it could not be
// asked (an empty entry).
func userOf(id string, e cachedProfile) *User {
	if e.Denied {
		return Anonymous()
	}
	if e.Profile == nil {
		return &User{ID: id, Roles: []string{}, Permissions: []string{}}
	}
	u := &User{ID: id, Name: e.Profile.Name, Email: e.Profile.Email, Roles: e.Profile.Roles,
		Permissions: e.Profile.Permissions}
	if u.Roles == nil {
		u.Roles = []string{}
	}
	if u.Permissions == nil {
		u.Permissions = []string{}
	}
	return u
}
