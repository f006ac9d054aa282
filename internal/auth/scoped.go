package auth

import (
	"context"
	"crypto/subtle"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/tokens"
)

// ScopedPrincipal turns a scoped token's secret into the caller: its user
// with the permissions its scopes keep. A malformed secret (wrong length,
// characters or checksum) is refused before any read; a known one is
// checked against its stored hash in constant time. Nothing is written:
// an unknown, revoked or expired token costs at most one read.
//
// The principal is cached by token id in the same cache as signed tokens'
// and dropped by the same change notices (the token revoked, its user
// changed, the tenant recreated). The hash of each id's secret is kept
// beside it: it never changes, so it needs no invalidation.
func ScopedPrincipal(ctx context.Context, t *platform.Tenant, now time.Time, raw string) (*access.Principal, error) {
	id, ok := tokens.ParseSecret(raw)
	if !ok {
		return nil, tokens.Refused()
	}
	hash := tokens.HashSecret(raw)
	hashes := secretHashes(t)
	cache := state(t).principals
	p, gen, hit := cache.get(id, now)
	if known, ok := hashes.get(id); ok {
		if subtle.ConstantTimeCompare([]byte(known), []byte(hash)) != 1 {
			return nil, tokens.Refused()
		}
		if hit {
			return p, nil
		}
	}
	rec, err := tokens.Load(ctx, t.DB, id)
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(rec.SecretHash), []byte(hash)) != 1 {
		return nil, tokens.Refused()
	}
	hashes.put(id, rec.SecretHash)
	if err := rec.Usable(now); err != nil {
		return nil, err
	}
	if p, err = scopedUser(ctx, t, rec); err != nil {
		return nil, err
	}
	expires := now.Add(principalTTL)
	if rec.ExpiresAt != nil && rec.ExpiresAt.Before(expires) {
		expires = *rec.ExpiresAt
	}
	if !hit {
		cache.put(id, p, gen, expires)
	}
	return p, nil
}

// scopedUser is the token's user as a principal narrowed to its scopes.
func scopedUser(ctx context.Context, t *platform.Tenant, rec tokens.Record) (*access.Principal, error) {
	u, err := accounts.ByID(ctx, t.DB, rec.UserID)
	if apperr.Is(err, apperr.NotFound) {
		return nil, tokens.Refused()
	}
	if err != nil {
		return nil, err
	}
	p, err := userPrincipal(t, u)
	if err != nil {
		return nil, err
	}
	p.TokenID, p.Scopes, p.RateLimit = rec.ID, rec.Scopes, rec.RateLimit
	p.Permissions = tokens.Narrow(p.Permissions, rec.Scopes)
	return p, nil
}

// hashCache maps token ids to their secrets' hashes. It is bounded: when
// full it starts over.
type hashCache struct {
	mu   sync.RWMutex
	byID map[string]string
}

const maxHashes = 4096

type hashesKey struct{}

func secretHashes(t *platform.Tenant) *hashCache {
	return t.Local(hashesKey{}, func() any { return &hashCache{byID: map[string]string{}} }).(*hashCache)
}

func (c *hashCache) get(id string) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	h, ok := c.byID[id]
	return h, ok
}

func (c *hashCache) put(id, hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.byID) >= maxHashes {
		c.byID = map[string]string{}
	}
	c.byID[id] = hash
}
