package auth

import (
	"context"
	"database/sql"
	"sync"

	"github.com/lms-platform/lms/internal/platform"
)

// tenantState is auth's per-tenant state, kept on the tenant handle.
type tenantState struct {
	verified *tokenCache

	mu        sync.Mutex
	principal *sql.Stmt
}

type stateKey struct{}

func state(t *platform.Tenant) *tenantState {
	return t.Local(stateKey{}, func() any { return &tenantState{verified: newTokenCache(4096)} }).(*tenantState)
}

// principalStmt prepares the principal query once per tenant: preparing
// costs as much as running it on SQLite.
func (s *tenantState) principalStmt(ctx context.Context, t *platform.Tenant) (*sql.Stmt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.principal != nil {
		return s.principal, nil
	}
	stmt, err := t.DB.PrepareContext(ctx, `SELECT u.id, u.email, u.is_active, t.revoked_at, t.expires_at,
		t.impersonator_id, r.name
		FROM access_tokens t JOIN users u ON u.id = t.user_id
		LEFT JOIN user_roles ur ON ur.user_id = u.id LEFT JOIN roles r ON r.id = ur.role_id
		WHERE t.id = $1 ORDER BY r.name`)
	if err != nil {
		return nil, err
	}
	s.principal = stmt
	return stmt, nil
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
