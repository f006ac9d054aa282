// Package limit counts requests in fixed one-minute (or other) windows, in
// process or in Redis, behind one interface.
package limit

import (
	"context"
	"time"
)

// Decision is the outcome of one counted request.
type Decision struct {
	Allowed   bool
	Limit     int
	Remaining int
	// RetryAfter is the time until the window resets, but at least a second
	// so that callers rounding it to whole seconds never say 0; set only when
	// not allowed.
	RetryAfter time.Duration
}

// Limiter counts a hit against key in the current fixed window of the given
// length and allows it while the count is at most limit.
type Limiter interface {
	Allow(ctx context.Context, key string, limit int, window time.Duration) (Decision, error)
}

var (
	_ Limiter = (*Memory)(nil)
	_ Limiter = (*Redis)(nil)
)
