// Package versioned keeps values in memory that are checked, on every
// read, against a counter the database moves whenever their source
// changes (triggers, see the program and catalogue caches). An entry is
// good only for the counter value it was built at and until it expires:
// the expiry bounds how long a counter that went back (a database restored
// from a backup) can serve an old value, and any time the value depends
// on (signed links, a window opening).
package versioned

import (
	"sync"
	"time"
)

// Cache holds at most max entries by key.
type Cache[K comparable, V any] struct {
	mu      sync.Mutex
	max     int
	entries map[K]entry[V]
}

type entry[V any] struct {
	version int64
	expires time.Time
	value   V
}

// New returns an empty cache of at most max entries.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, entries: map[K]entry[V]{}}
}

// Get returns the value kept for k when it was built at version and has
// not expired at now.
func (c *Cache[K, V]) Get(k K, version int64, now time.Time) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok || e.version != version || !now.Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Put keeps v for k, built at version, until expires. A full cache first
// drops its expired entries, and starts over when none had: keys can be
// unbounded (searches by title), so it never grows past max.
func (c *Cache[K, V]) Put(k K, version int64, expires, now time.Time, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= c.max {
		for key, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, key)
			}
		}
		if len(c.entries) >= c.max {
			clear(c.entries)
		}
	}
	c.entries[k] = entry[V]{version: version, expires: expires, value: v}
}
