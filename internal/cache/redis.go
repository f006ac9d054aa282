package cache

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/redisconn"
)

// KeyPrefix starts every Redis key the cache writes.
const KeyPrefix = "lms:c:"

// scanBatch is how many keys DeletePrefix asks SCAN for at a time and then
// unlinks in one round trip.
const scanBatch = 500

// Redis is a Cache shared by every replica using the same Redis.
//
// It fails open: while Redis is down a read misses (the caller computes the
// value) and writes and deletions are skipped. Every entry has a time to
// live, so one that a skipped deletion left behind ends with it.
type Redis struct {
	rdb redis.UniversalClient
}

// NewRedis returns a cache keeping its entries in rdb.
func NewRedis(rdb redis.UniversalClient) *Redis {
	return &Redis{rdb: rdb}
}

func (r *Redis) Get(ctx context.Context, key string) ([]byte, bool, error) {
	v, err := r.rdb.Get(ctx, KeyPrefix+key).Bytes()
	if errors.Is(err, redis.Nil) || outage(ctx, err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("cache: get %q: %w", key, err)
	}
	return v, true, nil
}

func (r *Redis) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errTTL
	}
	// Redis counts whole milliseconds; round up rather than let the client
	// truncate, which would turn a ttl under 1ms into none.
	ttl = (ttl + time.Millisecond - 1).Truncate(time.Millisecond)
	if err := r.rdb.Set(ctx, KeyPrefix+key, value, ttl).Err(); err != nil && !outage(ctx, err) {
		return fmt.Errorf("cache: set %q: %w", key, err)
	}
	return nil
}

func (r *Redis) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = KeyPrefix + k
	}
	if err := unlink(ctx, r.rdb, full); err != nil && !outage(ctx, err) {
		return fmt.Errorf("cache: delete: %w", err)
	}
	return nil
}

func (r *Redis) DeletePrefix(ctx context.Context, prefix string) error {
	match := escapeGlob(KeyPrefix+prefix) + "*"
	err := forEachNode(ctx, r.rdb, func(ctx context.Context, node redis.Cmdable) error {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, match, scanBatch).Result()
			if err != nil {
				return err
			}
			if len(keys) > 0 {
				if err := unlink(ctx, node, keys); err != nil {
					return err
				}
			}
			if next == 0 {
				return nil
			}
			cursor = next
		}
	})
	if err != nil && !outage(ctx, err) {
		return fmt.Errorf("cache: delete prefix %q: %w", prefix, err)
	}
	return nil
}

// outage reports an error that says Redis is down, which the cache treats
// as a miss or a skipped write, unless the caller itself gave up.
func outage(ctx context.Context, err error) bool {
	return redisconn.Down(err) && ctx.Err() == nil
}

// unlink removes keys in one round trip. It sends one UNLINK per key because
// a Redis Cluster refuses a multi-key command whose keys live in different
// hash slots.
func unlink(ctx context.Context, c redis.Cmdable, keys []string) error {
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Unlink(ctx, k)
		}
		return nil
	})
	return err
}

// forEachNode calls fn with every node that holds part of the keyspace: the
// client itself, or each master of a cluster or shard of a ring, because
// SCAN only sees the keys of the node it runs on.
func forEachNode(ctx context.Context, rdb redis.UniversalClient, fn func(context.Context, redis.Cmdable) error) error {
	each := func(ctx context.Context, c *redis.Client) error { return fn(ctx, c) }
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, each)
	case *redis.Ring:
		return c.ForEachShard(ctx, each)
	default:
		return fn(ctx, rdb)
	}
}

// escapeGlob quotes the characters SCAN's MATCH treats as a pattern, so a
// prefix matches only itself.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
