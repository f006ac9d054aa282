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
	// builds are the values Load is building, by key and version.
	builds map[built[K]]*build[V]
}

type built[K comparable] struct {
	key     K
	version int64
}

// build is a value under construction; done closes when it is ready
// (ok) or failed.
type build[V any] struct {
	done  chan struct{}
	value V
	ok    bool
}

type entry[V any] struct {
	version int64
	expires time.Time
	value   V
}

// New returns an empty cache of at most max entries.
func New[K comparable, V any](max int) *Cache[K, V] {
	return &Cache[K, V]{max: max, entries: map[K]entry[V]{}, builds: map[built[K]]*build[V]{}}
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
	c.put(k, version, expires, now, v)
}

func (c *Cache[K, V]) put(k K, version int64, expires, now time.Time, v V) {
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

// Load returns the value kept for k at version, or builds it with fill
// (the value and when it expires) and keeps it. Callers that miss the same
// key and version while it is being built wait for that one build: a class
// opening a course whose program just changed would otherwise build it
// once per learner, all at once. When the build fails (its caller's
// context may have ended), each waiter builds for itself.
func (c *Cache[K, V]) Load(k K, version int64, now time.Time, fill func() (V, time.Time, error)) (V, error) {
	c.mu.Lock()
	if e, ok := c.entries[k]; ok && e.version == version && now.Before(e.expires) {
		c.mu.Unlock()
		return e.value, nil
	}
	id := built[K]{key: k, version: version}
	if b, ok := c.builds[id]; ok {
		c.mu.Unlock()
		<-b.done
		if b.ok {
			return b.value, nil
		}
		v, expires, err := fill()
		if err == nil {
			c.Put(k, version, expires, now, v)
		}
		return v, err
	}
	b := &build[V]{done: make(chan struct{})}
	c.builds[id] = b
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.builds, id)
		c.mu.Unlock()
		close(b.done)
	}()
	v, expires, err := fill()
	if err != nil {
		return v, err
	}
	c.Put(k, version, expires, now, v)
	b.value, b.ok = v, true
	return v, nil
}
