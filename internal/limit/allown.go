package limit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/redisconn"
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

// AllowN counts n hits at once.
func (m *Memory) AllowN(_ context.Context, key string, n, limit int, window time.Duration) (Decision, error) {
	if err := checkArgs(limit, window); err != nil {
		return Decision{}, err
	}
	if n < 1 {
		return Decision{}, errors.New("limit: n must be positive")
	}
	now := m.clk.Now()
	number, end := fixedWindow(now, window)
	k := counterKey{key, window}

	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.counters[k]
	if !ok || c.window != number {
		if !ok && len(m.counters) >= m.sweepAt {
			m.sweep(now)
		}
		c = counter{window: number, end: end}
	}
	c.count += int64(n)
	m.counters[k] = c
	return decide(c.count, limit, now, end), nil
}

// countByScript adds ARGV[2] hits, setting the counter's expiry on its
// first hits as countScript does.
const countByScript = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then
	redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n
`

var countBy = redis.NewScript(countByScript)

// AllowN counts n hits at once, in Redis (in this process while Redis is
// down, as Allow does).
func (r *Redis) AllowN(ctx context.Context, key string, n, limit int, window time.Duration) (Decision, error) {
	if err := checkArgs(limit, window); err != nil {
		return Decision{}, err
	}
	if n < 1 {
		return Decision{}, errors.New("limit: n must be positive")
	}
	now := r.clk.Now()
	number, end := fixedWindow(now, window)
	rkey := KeyPrefix + key + ":" + strconv.FormatInt(int64(window), 10) + ":" + strconv.FormatInt(number, 10)
	ttl := end.Sub(now) + clockSkew
	count, err := countBy.Run(ctx, r.rdb, []string{rkey}, ttl.Milliseconds(), n).Int64()
	if redisconn.Down(err) && ctx.Err() == nil {
		return r.local.AllowN(ctx, key, n, limit, window)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("limit: count %q: %w", key, err)
	}
	return decide(count, limit, now, end), nil
}
