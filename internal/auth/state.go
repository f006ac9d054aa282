package auth

import (
	"context"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// tenantState is auth's per-tenant state, kept on the tenant handle.
type tenantState struct {
	verified   *tokenCache
	principals *principalCache
	// tokenRows is the coalesced read of token rows on PostgreSQL
	// (tokenRowOf).
	tokenRows *sqldb.Coalescer[string, tokenRow]
}

type stateKey struct{}

func state(t *platform.Tenant) *tenantState {
	return t.Local(stateKey{}, func() any {
		s := &tenantState{verified: newTokenCache(4096), principals: newPrincipalCache(4096),
			tokenRows: sqldb.NewCoalescer(func(ctx context.Context, ids []string) (map[string]tokenRow, error) {
				return tokenRowsOf(ctx, t, ids)
			})}
		t.Watch(s.principals.changed)
		return s
	}).(*tenantState)
}

// tokenCache remembers token strings whose signature verified, so a client
// sending the same token again skips the RSA check. It only ever holds
// verified tokens and is bounded: when full it starts over.
type tokenCache struct {
	mu   sync.RWMutex
	max  int
	seen map[string]*Claims
}

func newTokenCache(max int) *tokenCache {
	return &tokenCache{max: max, seen: make(map[string]*Claims)}
}

func (c *tokenCache) get(raw string) (*Claims, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	claims, ok := c.seen[raw]
	return claims, ok
}

func (c *tokenCache) put(raw string, claims *Claims) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.seen) >= c.max {
		c.seen = make(map[string]*Claims)
	}
	c.seen[raw] = claims
}

// principalTTL bounds how long a cached principal is used. Every change
// that affects a principal drops it at once in every process that shares
// the change feed (access.UserKey, access.TokenKey, access.TenantKey); the
// time to live only bounds changes made by a process that shares none with
// this one, such as a command run on the same SQLite files without Redis.
const principalTTL = 5 * time.Second

// principalCache keeps the principal of each token id, read-only and
// shared by the requests carrying that token, so that an authenticated
// request costs no query. It is bounded: when full it starts over.
type principalCache struct {
	mu  sync.Mutex
	max int
	// gen counts the changes heard; a principal loaded while one arrived
	// may predate it and is not kept.
	gen     uint64
	byToken map[string]cachedPrincipal
}

type cachedPrincipal struct {
	p       *access.Principal
	expires time.Time
}

func newPrincipalCache(max int) *principalCache {
	return &principalCache{max: max, byToken: make(map[string]cachedPrincipal)}
}

// get returns the token's cached principal and true, or the generation to
// pass to put with the principal loaded from the database.
func (c *principalCache) get(tokenID string, now time.Time) (*access.Principal, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byToken[tokenID]
	if ok && now.Before(e.expires) {
		return e.p, 0, true
	}
	return nil, c.gen, false
}

func (c *principalCache) put(tokenID string, p *access.Principal, gen uint64, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.byToken) >= c.max {
		c.byToken = make(map[string]cachedPrincipal)
	}
	c.byToken[tokenID] = cachedPrincipal{p: p, expires: expires}
}

// changed drops the principals that the changed data was part of.
func (c *principalCache) changed(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, k := range keys {
		if k == access.TenantKey {
			clear(c.byToken)
		} else if id, ok := access.RevokedToken(k); ok {
			delete(c.byToken, id)
		} else {
			for id, e := range c.byToken {
				if access.UserKey(e.p.UserID) == k {
					delete(c.byToken, id)
				}
			}
		}
	}
}
