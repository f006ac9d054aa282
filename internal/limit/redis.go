package limit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/redisconn"
)

// KeyPrefix starts every Redis key the limiter writes.
const KeyPrefix = "lms:rl:"

// clockSkew keeps a window's counter alive a little past the window's end, so
// a replica whose clock lags still finds the count instead of starting over.
const clockSkew = 5 * time.Second

// countScript adds ARGV[2] hits and, on the first hits of a window, sets
// when the counter goes away; as one script, no counter can be left
// without expiry.
const countScript = `
local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then
	redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return n
`

// Redis is a Limiter whose counts are shared by every replica using the same
// Redis. The window a hit falls in comes from the injected clock, not from
// Redis, so tests can move between windows; Redis's clock only decides when
// an old counter is deleted.
//
// While Redis is down the limiter counts in this process instead: limits
// still hold, per replica, rather than refusing every limited route or
// letting it run unlimited.
type Redis struct {
	rdb   redis.UniversalClient
	clk   clock.Clock
	count *redis.Script
	local *Memory
}

// NewRedis returns a limiter keeping its counters in rdb.
func NewRedis(rdb redis.UniversalClient, clk clock.Clock) *Redis {
	return &Redis{rdb: rdb, clk: clk, count: redis.NewScript(countScript), local: NewMemory(clk)}
}

func (r *Redis) Allow(ctx context.Context, key string, limit int, window time.Duration) (Decision, error) {
	return r.AllowN(ctx, key, 1, limit, window)
}

// AllowN counts n hits at once, in Redis (in this process while Redis is
// down).
func (r *Redis) AllowN(ctx context.Context, key string, n, limit int, window time.Duration) (Decision, error) {
	if err := checkArgs(limit, window); err != nil {
		return Decision{}, err
	}
	if n < 1 {
		return Decision{}, errors.New("limit: n must be positive")
	}
	now := r.clk.Now()
	number, end := fixedWindow(now, window)
	// The key ends with two numbers, so reading it from the right tells the
	// caller's key apart even when that key contains colons.
	rkey := KeyPrefix + key + ":" + strconv.FormatInt(int64(window), 10) + ":" + strconv.FormatInt(number, 10)
	ttl := end.Sub(now) + clockSkew
	count, err := r.count.Run(ctx, r.rdb, []string{rkey}, ttl.Milliseconds(), n).Int64()
	if redisconn.Down(err) && ctx.Err() == nil {
		return r.local.AllowN(ctx, key, n, limit, window)
	}
	if err != nil {
		return Decision{}, fmt.Errorf("limit: count %q: %w", key, err)
	}
	return decide(count, limit, now, end), nil
}
