package limit

import (
	"context"
	"errors"
	"time"
)

// Counter is a Limiter that counts several hits in one step.
type Counter interface {
	AllowN(ctx context.Context, key string, n, limit int, window time.Duration) (Decision, error)
}

var (
	_ Counter = (*Memory)(nil)
	_ Counter = (*Redis)(nil)
)

// AllowN counts n hits against key (a request carrying n items, each of
// which counts): in one step when l is a Counter, else hit by hit up to
// the first refusal. The decision is the last hit's.
func AllowN(ctx context.Context, l Limiter, key string, n, limit int, window time.Duration) (Decision, error) {
	if n < 1 {
		return Decision{}, errors.New("limit: n must be positive")
	}
	if c, ok := l.(Counter); ok {
		return c.AllowN(ctx, key, n, limit, window)
	}
	var d Decision
	var err error
	for range n {
		if d, err = l.Allow(ctx, key, limit, window); err != nil || !d.Allowed {
			return d, err
		}
	}
	return d, nil
}
