package h5p

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

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
	Token *struct {
		Scopes             []string `json:"scopes"`
		RateLimitPerMinute int      `json:"rate_limit_per_minute,omitempty"`
	} `json:"token,omitempty"`
}

// errDenied is the API refusing the token (401 or 403).
var errDenied = errors.New("h5p: the API refused the token")

// APIClient calls the API the way another machine would: over HTTP, with
// the caller's token and the tenant's host.
type APIClient struct {
	mu   sync.RWMutex
	base string
	http *http.Client
}

// NewAPIClient calls the API at base; a nil client gets a short timeout.
func NewAPIClient(base string, client *http.Client) *APIClient {
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	return &APIClient{base: strings.TrimRight(base, "/"), http: client}
}

// SetBaseURL points the client at the API, for servers whose address is
// known only once they listen (tests).
func (c *APIClient) SetBaseURL(base string) {
	c.mu.Lock()
	c.base = strings.TrimRight(base, "/")
	c.mu.Unlock()
}

// SetHTTPClient replaces the HTTP client (tests count calls with it).
func (c *APIClient) SetHTTPClient(client *http.Client) {
	c.mu.Lock()
	c.http = client
	c.mu.Unlock()
}

func (c *APIClient) get() (string, *http.Client) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.base, c.http
}

// Profile fetches GET /api/profile/me for the token on the tenant's host.
// It returns errDenied when the API answers 401 or 403, and another error
// when the API cannot be reached or fails.
func (c *APIClient) Profile(ctx context.Context, host, token string) (Profile, error) {
	base, client := c.get()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/profile/me", nil)
	if err != nil {
		return Profile{}, fmt.Errorf("h5p: profile request: %w", err)
	}
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	res, err := client.Do(req)
	if err != nil {
		// The error names the URL, which never carries the token.
		return Profile{}, fmt.Errorf("h5p: call the API: %w", err)
	}
	defer res.Body.Close()
	switch {
	case res.StatusCode == http.StatusUnauthorized || res.StatusCode == http.StatusForbidden:
		return Profile{}, errDenied
	case res.StatusCode != http.StatusOK:
		return Profile{}, fmt.Errorf("h5p: the API answered %d to profile/me", res.StatusCode)
	}
	var body struct {
		Data Profile `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&body); err != nil {
		return Profile{}, fmt.Errorf("h5p: decode profile: %w", err)
	}
	return body.Data, nil
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

// BaseURL is the API base URL the client calls, for other parts that call
// the deployment at the same address.
func (c *APIClient) BaseURL() string {
	base, _ := c.get()
	return base
}
