package lock

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/apperr"
)

// KeyPrefix starts every Redis key the locker writes.
const KeyPrefix = "lms:lk:"

// releaseScript deletes the lock only if it still holds the caller's token;
// as one script, nobody can take the lock between the check and the delete.
const releaseScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0
`

// Redis is a Locker whose locks hold across every replica using the same
// Redis. Locks expire by Redis's clock.
type Redis struct {
	rdb     redis.UniversalClient
	release *redis.Script
}

// NewRedis returns a locker keeping its locks in rdb.
func NewRedis(rdb redis.UniversalClient) *Redis {
	return &Redis{rdb: rdb, release: redis.NewScript(releaseScript)}
}

func (r *Redis) TryAcquire(ctx context.Context, name string, ttl time.Duration) (Unlock, error) {
	unlock, _, err := r.try(ctx, name, ttl)
	return unlock, err
}

func (r *Redis) Acquire(ctx context.Context, name string, ttl time.Duration) (Unlock, error) {
	return acquire(ctx, name, func() (Unlock, <-chan struct{}, error) { return r.try(ctx, name, ttl) })
}

func (r *Redis) try(ctx context.Context, name string, ttl time.Duration) (Unlock, <-chan struct{}, error) {
	if ttl <= 0 {
		return nil, nil, errTTL
	}
	// Redis counts whole milliseconds; round up rather than let the client
	// truncate.
	ttl = (ttl + time.Millisecond - 1).Truncate(time.Millisecond)
	key := KeyPrefix + name
	// The token is random rather than counted so that holders in different
	// processes never share one.
	token := rand.Text()
	ok, err := r.rdb.SetNX(ctx, key, token, ttl).Result()
	if err != nil {
		// Locks fail closed: without Redis nobody may hold one, and the
		// caller answers 503 rather than run unguarded.
		return nil, nil, apperr.Wrap(apperr.Unavailable, fmt.Errorf("lock: take %q: %w", name, err),
			"The lock service is unavailable; try again shortly.")
	}
	if !ok {
		return nil, nil, ErrNotAcquired
	}
	return func(ctx context.Context) error {
		if err := r.release.Run(ctx, r.rdb, []string{key}, token).Err(); err != nil {
			return fmt.Errorf("lock: release %q: %w", name, err)
		}
		return nil
	}, nil, nil
}
