// Package lock gives named mutual exclusion, in process or across replicas
// through Redis.
package lock

import (
	"context"
	"errors"
	"time"
)

// ErrNotAcquired is returned by TryAcquire when another holder has the lock.
var ErrNotAcquired = errors.New("lock: not acquired")

// Locker hands out named locks. A lock held past ttl expires, so a crashed
// holder cannot block others forever; ttl must therefore be positive.
type Locker interface {
	// Acquire waits until the lock is free or ctx ends.
	Acquire(ctx context.Context, name string, ttl time.Duration) (Unlock, error)
	// TryAcquire takes the lock only if it is free now.
	TryAcquire(ctx context.Context, name string, ttl time.Duration) (Unlock, error)
}

// Unlock releases a lock; releasing an expired lock held by someone else
// does nothing.
type Unlock func(ctx context.Context) error

var (
	_ Locker = (*Memory)(nil)
	_ Locker = (*Redis)(nil)
)
