package sqldb

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Coalesced point reads. A read that every request of a hot path makes
// (the counters a kept answer is checked against) costs, on PostgreSQL, a
// round trip and a statement's fixed work in the server, far more than the
// rows it reads. Under load many such reads wait at the same time; a
// Coalescer asks for the keys of all that arrived while its last query ran
// in one query, so the fixed cost is paid once per batch and not per read.
//
// A read still sees every commit made before it was asked: its key goes
// into a query that starts after it arrived, never into one in flight. As
// with group commit (group.go), no goroutine waits idle for a batch: a
// caller either finds its batch answered or takes the lead and runs it.
type Coalescer[K comparable, V any] struct {
	query func(ctx context.Context, keys []K) (map[K]V, error)
	// lead is held (one value in a channel of one) by the caller running
	// a query.
	lead chan struct{}

	mu      sync.Mutex
	next    *readBatch[K, V]
	queries int // queries run, for tests
}

// readBatch is the keys asked for while a query was in flight, and, once
// done is closed, their values.
type readBatch[K comparable, V any] struct {
	keys   []K
	asked  map[K]bool
	values map[K]V
	err    error
	done   chan struct{}
}

// NewCoalescer returns a Coalescer whose batches query runs. query returns
// a value for every key it is given; a key it leaves out is an error for
// its callers.
func NewCoalescer[K comparable, V any](query func(ctx context.Context, keys []K) (map[K]V, error)) *Coalescer[K, V] {
	return &Coalescer[K, V]{query: query, lead: make(chan struct{}, 1)}
}

// Get returns key's value as a query started after the call reads it.
func (c *Coalescer[K, V]) Get(ctx context.Context, key K) (V, error) {
	c.mu.Lock()
	b := c.next
	if b == nil {
		b = &readBatch[K, V]{asked: map[K]bool{}, done: make(chan struct{})}
		c.next = b
	}
	if !b.asked[key] {
		b.asked[key] = true
		b.keys = append(b.keys, key)
	}
	c.mu.Unlock()
	for {
		// Answered batches go first: a caller whose batch is done has no
		// reason to run the next one.
		select {
		case <-b.done:
			return b.value(key)
		default:
		}
		select {
		case <-b.done:
			return b.value(key)
		case <-ctx.Done():
			var zero V
			return zero, ctx.Err()
		case c.lead <- struct{}{}:
			c.run(ctx)
			<-c.lead
		}
	}
}

// batchTimeout bounds a batch's query, which does not end with the request
// of the caller running it.
const batchTimeout = 30 * time.Second

// run queries the keys asked so far, if any. The query outlives the
// caller that runs it: the others of its batch wait for it too.
func (c *Coalescer[K, V]) run(ctx context.Context) {
	c.mu.Lock()
	b := c.next
	c.next = nil
	if b != nil {
		c.queries++
	}
	c.mu.Unlock()
	if b == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	defer cancel()
	b.values, b.err = c.query(ctx, b.keys)
	close(b.done)
}

func (b *readBatch[K, V]) value(key K) (V, error) {
	if b.err != nil {
		var zero V
		return zero, b.err
	}
	v, ok := b.values[key]
	if !ok {
		return v, fmt.Errorf("sqldb: coalesced read: no value for %v", key)
	}
	return v, nil
}
