package lock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Polling starts fast, so a lock that is released quickly is handed on
// quickly, and slows down so that many waiters do not flood the store.
const (
	firstPoll = 2 * time.Millisecond
	maxPoll   = 100 * time.Millisecond
)

var errTTL = errors.New("lock: ttl must be positive")

// attempt tries once to take a lock. When the lock is held it returns
// ErrNotAcquired and, if it can, a channel closed when the holder lets go.
type attempt func() (Unlock, <-chan struct{}, error)

// acquire calls try until it takes the lock, fails otherwise, or ctx ends.
func acquire(ctx context.Context, name string, try attempt) (Unlock, error) {
	wait := firstPoll
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		unlock, released, err := try()
		if !errors.Is(err, ErrNotAcquired) {
			return unlock, err
		}
		// Jitter keeps waiters that started together from polling together.
		timer.Reset(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock: acquire %q: %w", name, ctx.Err())
		case <-released:
		case <-timer.C:
		}
		wait = min(2*wait, maxPoll)
	}
}
