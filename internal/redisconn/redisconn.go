// Package redisconn opens the Redis client shared by the limiter, the cache
// and the lock when the service runs on more than one replica.
//
// The client fails fast when Redis is down: short dial and read timeouts,
// one retry, and a circuit breaker that, once a command finds Redis
// unreachable, refuses every command at once with ErrUnavailable for a
// second before trying again. Each use decides what an outage means (see
// docs/operators.md: limits fall back to this process, the cache misses,
// locks are refused).
package redisconn

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/clock"
)

// ErrUnavailable is the error of commands refused while the breaker is
// open.
var ErrUnavailable = errors.New("redisconn: redis is unavailable")

const (
	// timeout bounds a dial, a read and a wait for a pooled connection,
	// unless the URL sets its own (dial_timeout, read_timeout...).
	timeout = time.Second
	// cooldown is how long the breaker refuses commands after an outage.
	cooldown = time.Second
	// retryBackoff caps the wait before a retry of a command or a dial.
	retryBackoff = 20 * time.Millisecond
)

// Open connects to the Redis server named by a redis://, rediss:// or unix://
// URL and checks that it answers, so a wrong address fails at start-up rather
// than on the first request.
func Open(ctx context.Context, rawURL string) (*redis.Client, error) {
	return open(ctx, rawURL, clock.System{})
}

func open(ctx context.Context, rawURL string, clk clock.Clock) (*redis.Client, error) {
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
	for _, d := range []*time.Duration{&opts.DialTimeout, &opts.ReadTimeout, &opts.WriteTimeout, &opts.PoolTimeout} {
		if *d == 0 {
			*d = timeout
		}
	}
	// One quick retry replaces a pooled connection that a restarted Redis
	// closed; more would only delay the answer when Redis is gone.
	if opts.MaxRetries == 0 {
		opts.MaxRetries = 1
	}
	if opts.MaxRetryBackoff == 0 {
		opts.MaxRetryBackoff = retryBackoff
	}
	// The pool would try a refused dial five times, 100 ms apart.
	if opts.DialerRetries == 0 {
		opts.DialerRetries = 1
	}
	if opts.DialerRetryTimeout == 0 {
		opts.DialerRetryTimeout = retryBackoff
	}
	rdb := redis.NewClient(opts)
	rdb.AddHook(&breaker{clk: clk})
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("redisconn: ping %s: %w", opts.Addr, err)
	}
	return rdb, nil
}

// breaker is a go-redis hook that stops sending commands to a Redis found
// unreachable, until the cooldown has passed.
type breaker struct {
	clk       clock.Clock
	openUntil atomic.Int64 // unix nanoseconds; 0: closed
}

// DialHook leaves dials alone: the pool has its own fast failure for them.
func (b *breaker) DialHook(next redis.DialHook) redis.DialHook { return next }

func (b *breaker) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := b.allow(); err != nil {
			cmd.SetErr(err)
			return err
		}
		err := next(ctx, cmd)
		b.record(ctx, err)
		return err
	}
}

func (b *breaker) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if err := b.allow(); err != nil {
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		err := next(ctx, cmds)
		b.record(ctx, err)
		return err
	}
}

func (b *breaker) allow() error {
	if until := b.openUntil.Load(); until != 0 && b.clk.Now().UnixNano() < until {
		return ErrUnavailable
	}
	return nil
}

// record opens the breaker on an error that says Redis cannot be reached,
// unless the caller gave up.
func (b *breaker) record(ctx context.Context, err error) {
	if !Down(err) || errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
		return
	}
	b.openUntil.Store(b.clk.Now().Add(cooldown).UnixNano())
}

// Down reports whether err says Redis could not be reached (the breaker's
// ErrUnavailable, a network error, a timeout), rather than being a reply of
// the server such as redis.Nil or a script error, or the caller giving up.
func Down(err error) bool {
	var reply redis.Error
	return err != nil && !errors.As(err, &reply) && !errors.Is(err, context.Canceled)
}
