package redisconn_test

import (
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/redisconn"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

// Once Redis is found down, commands are refused at once (no dial, no
// timeout) until the cooldown has passed; replies of a live server never
// open the breaker.
func TestBreaker(t *testing.T) {
	srv := redisconntest.Start(t)
	clk := clock.NewFake(time.Now())
	ctx := t.Context()
	rdb, err := redisconn.OpenWithClock(ctx, srv.URL, clk)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if err := rdb.Get(ctx, "missing").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("get of a missing key: %v", err)
	}
	if err := rdb.Eval(ctx, "return redis.error_reply('boom')", nil).Err(); err == nil || redisconn.Down(err) {
		t.Fatalf("a script error counts as Redis down: %v", err)
	}
	if err := rdb.Set(ctx, "k", "v", time.Minute).Err(); err != nil {
		t.Fatalf("server replies opened the breaker: %v", err)
	}

	srv.Stop()
	if err := rdb.Get(ctx, "k").Err(); !redisconn.Down(err) {
		t.Fatalf("first command after the crash: %v, want Redis down", err)
	}
	for range 3 {
		if err := rdb.Get(ctx, "k").Err(); !errors.Is(err, redisconn.ErrUnavailable) {
			t.Fatalf("command while the breaker is open: %v, want ErrUnavailable", err)
		}
	}
	clk.Advance(2 * time.Second)
	if err := rdb.Get(ctx, "k").Err(); !redisconn.Down(err) || errors.Is(err, redisconn.ErrUnavailable) {
		t.Fatalf("after the cooldown: %v, want a new attempt that fails", err)
	}
}
