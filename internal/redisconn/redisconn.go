// Package redisconn opens the Redis client shared by the limiter, the cache
// and the lock when the service runs on more than one replica.
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// Open connects to the Redis server named by a redis://, rediss:// or unix://
// URL and checks that it answers, so a wrong address fails at start-up rather
// than on the first request.
func Open(ctx context.Context, rawURL string) (*redis.Client, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		// A url.Error repeats the whole URL, password included; keep only the
		// reason so the error is safe to log.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("redisconn: parse url: %w", err)
	}
	rdb := redis.NewClient(opts)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redisconn: ping %s: %w", opts.Addr, err)
	}
	return rdb, nil
}
