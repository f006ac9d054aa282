package web

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/clock"
)

// publicCache keeps public API data (the catalogue, course pages, the
// tenant's name, demo mode) per tenant host and path. An entry is fresh
// for `fresh`; after that it is still served, up to `stale`, while exactly
// one refresh runs in the background. A missing (or too old) entry is
// loaded once however many requests want it at the same moment: the
// others wait for that load. A failed refresh keeps the old value and is
// retried after retryAfter, so an API outage is not met with a refresh
// per request.
type publicCache struct {
	clock      clock.Clock
	fresh      time.Duration
	stale      time.Duration
	retryAfter time.Duration
	maxEntries int
	load       func(ctx context.Context, host, path string) (status int, body []byte, err error)

	mu      sync.Mutex
	entries map[cacheKey]*cacheEntry
	// running counts background refreshes, so tests can wait for them.
	running sync.WaitGroup

	stats cacheStats
}

type cacheKey struct{ host, path string }

// cached is one stored API answer: its status (2xx, 403 or 404 are kept)
// and the value decoded from it once, when it was loaded.
type cached struct {
	status  int
	message string
	value   any
	meta    *client.PageMeta
}

// decoder turns an answer into what the cache keeps; an error is not
// kept (the old value, if any, stays).
type decoder func(status int, body []byte) (*cached, error)

type cacheEntry struct {
	val        *cached
	loadedAt   time.Time
	failedAt   time.Time
	refreshing bool
	decode     decoder
	// loading is closed when a load that others wait for ends.
	loading chan struct{}
	err     error
}

// cacheStats are counters for tests and benchmarks.
type cacheStats struct {
	hits, staleHits, loads, waits, refreshes atomic.Int64
}

const (
	defaultFresh  = 45 * time.Second
	minFresh      = 5 * time.Second
	staleFor      = 30 * time.Minute
	defaultMaxKey = 20000
	// failMemo is how long a failed first load answers its error to the
	// next requests instead of asking the API again.
	failMemo = time.Second
)

func newPublicCache(clk clock.Clock, fresh time.Duration, load func(ctx context.Context, host, path string) (int, []byte, error)) *publicCache {
	if fresh == 0 {
		fresh = defaultFresh
	}
	fresh = max(fresh, minFresh)
	return &publicCache{clock: clk, fresh: fresh, stale: staleFor, retryAfter: minFresh, maxEntries: defaultMaxKey,
		load: load, entries: map[cacheKey]*cacheEntry{}}
}

// get returns the cached answer for host and path, loading it when there
// is none young enough to serve.
func (c *publicCache) get(ctx context.Context, host, path string, decode decoder) (*cached, error) {
	key := cacheKey{host, path}
	now := c.clock.Now()
	c.mu.Lock()
	e := c.entries[key]
	if e != nil && e.val != nil {
		val, age := e.val, now.Sub(e.loadedAt)
		if age < c.fresh {
			c.mu.Unlock()
			c.stats.hits.Add(1)
			return val, nil
		}
		if age < c.stale {
			if !e.refreshing && e.loading == nil && now.Sub(e.failedAt) >= c.retryAfter {
				e.refreshing = true
				c.running.Add(1)
				go c.refresh(key, e)
			}
			c.mu.Unlock()
			c.stats.staleHits.Add(1)
			return val, nil
		}
	}
	if e != nil && e.val == nil && e.err != nil && e.loading == nil && now.Sub(e.failedAt) < failMemo {
		err := e.err
		c.mu.Unlock()
		return nil, err
	}
	if e != nil && e.loading != nil {
		ch := e.loading
		c.mu.Unlock()
		c.stats.waits.Add(1)
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		c.mu.Lock()
		val, err := e.val, e.err
		c.mu.Unlock()
		if val == nil && err == nil {
			err = errUnreachable
		}
		if err != nil {
			return nil, err
		}
		return val, nil
	}
	if e == nil {
		if len(c.entries) >= c.maxEntries {
			c.evict(now)
		}
		e = &cacheEntry{decode: decode}
		c.entries[key] = e
	}
	ch := make(chan struct{})
	e.loading = ch
	c.mu.Unlock()

	// The load outlives a caller who goes away: others may wait for it.
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	val, err := c.fetch(lctx, key, decode)
	cancel()
	c.stats.loads.Add(1)
	c.mu.Lock()
	e.loading = nil
	if err == nil {
		e.val, e.loadedAt, e.err = val, c.clock.Now(), nil
	} else {
		// A value too old to serve is dropped with the failure.
		e.val, e.err, e.failedAt = nil, err, c.clock.Now()
	}
	close(ch)
	c.mu.Unlock()
	return val, err
}

func (c *publicCache) fetch(ctx context.Context, key cacheKey, decode decoder) (*cached, error) {
	status, body, err := c.load(ctx, key.host, key.path)
	if err != nil {
		return nil, err
	}
	return decode(status, body)
}

// refresh reloads a stale entry in the background.
func (c *publicCache) refresh(key cacheKey, e *cacheEntry) {
	defer c.running.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	val, err := c.fetch(ctx, key, e.decode)
	cancel()
	c.stats.refreshes.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	e.refreshing = false
	if err != nil {
		e.failedAt = c.clock.Now()
		return
	}
	e.val, e.loadedAt = val, c.clock.Now()
}

// evict makes room: entries too old to serve go first, then any entry
// not being loaded. Called with c.mu held.
func (c *publicCache) evict(now time.Time) {
	for k, e := range c.entries {
		if e.loading == nil && !e.refreshing && (e.val == nil || now.Sub(e.loadedAt) >= c.stale) {
			delete(c.entries, k)
		}
	}
	for k, e := range c.entries {
		if len(c.entries) < c.maxEntries*3/4 {
			break
		}
		if e.loading == nil && !e.refreshing {
			delete(c.entries, k)
		}
	}
}

// wait blocks until the background refreshes started so far have ended.
func (c *publicCache) wait() { c.running.Wait() }
