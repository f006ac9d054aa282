// Package cache keeps short-lived values in process or in Redis, behind one
// interface.
package cache

import (
	"context"
	"time"
)

// Cache stores byte values with a time to live.
type Cache interface {
	// Get returns the value and true, or nil and false when absent or expired.
	Get(ctx context.Context, key string) ([]byte, bool, error)
	// Set stores value under key for ttl, which must be positive: every
	// entry ends, so the cache cannot fill with forgotten keys.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	Delete(ctx context.Context, keys ...string) error
	// DeletePrefix removes every key starting with prefix (a tenant's keys).
	DeletePrefix(ctx context.Context, prefix string) error
}

var (
	_ Cache = (*Memory)(nil)
	_ Cache = (*Redis)(nil)
)
