// Package limittest is the conformance suite every limit.Limiter passes, and
// the list of backends to run it on.
package limittest

import (
	"context"
	"github.com/redis/go-redis/v9"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/limit"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

// Backend opens limiters of one implementation.
type Backend = redisconntest.Backend[limit.Limiter]

// Backends returns the implementations to test: memory always, redis when
// LMS_TEST_REDIS_URL is set (and a failure under CI=true when it is not).
func Backends(t *testing.T) map[string]Backend {
	return redisconntest.Backends(t, func(clk clock.Clock) limit.Limiter { return limit.NewMemory(clk) }, limit.KeyPrefix,
		func(rdb *redis.Client, clk clock.Clock, ns string) limit.Limiter {
			return namespaced{limit.NewRedis(rdb, clk), ns}
		}, false)
}

// namespaced puts a test's namespace in front of every key.
type namespaced struct {
	limit.Limiter
	ns string
}

func (n namespaced) Allow(ctx context.Context, key string, l int, window time.Duration) (limit.Decision, error) {
	return n.Limiter.Allow(ctx, n.ns+key, l, window)
}

func (n namespaced) AllowN(ctx context.Context, key string, hits, l int, window time.Duration) (limit.Decision, error) {
	return limit.AllowN(ctx, n.Limiter, n.ns+key, hits, l, window)
}

// start is aligned to whole hours, so tests know where windows begin.
var start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// Conformance checks that the limiters of b count as the Limiter interface
// promises. Time moves only through the fake clock, which sets the window on
// every backend.
func Conformance(t *testing.T, b Backend) {
	open := func(t *testing.T) (limit.Limiter, *clock.Fake) {
		t.Parallel()
		clk := clock.NewFake(start)
		return b.New(t, clk), clk
	}

	t.Run("AllowsUpToLimitThenDenies", func(t *testing.T) {
		l, clk := open(t)
		clk.Advance(15 * time.Second)
		for i := range 3 {
			d := allow(t, l, "k", 3, time.Minute)
			want := limit.Decision{Allowed: true, Limit: 3, Remaining: 2 - i}
			if d != want {
				t.Fatalf("hit %d: got %+v, want %+v", i+1, d, want)
			}
		}
		for i := range 2 {
			d := allow(t, l, "k", 3, time.Minute)
			want := limit.Decision{Allowed: false, Limit: 3, Remaining: 0, RetryAfter: 45 * time.Second}
			if d != want {
				t.Fatalf("hit %d over the limit: got %+v, want %+v", i+1, d, want)
			}
		}
	})

	t.Run("AllowNCountsSeveralHits", func(t *testing.T) {
		l, clk := open(t)
		clk.Advance(30 * time.Second)
		allowN := func(n int) limit.Decision {
			t.Helper()
			d, err := limit.AllowN(context.Background(), l, "k", n, 5, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		if d := allowN(3); d != (limit.Decision{Allowed: true, Limit: 5, Remaining: 2}) {
			t.Fatalf("3 of 5: %+v", d)
		}
		if d := allowN(3); d.Allowed || d.RetryAfter != 30*time.Second {
			t.Fatalf("6 of 5 allowed: %+v", d)
		}
		clk.Advance(time.Minute)
		if d := allowN(5); d != (limit.Decision{Allowed: true, Limit: 5, Remaining: 0}) {
			t.Fatalf("5 of 5 in the next window: %+v", d)
		}
	})

	t.Run("RetryAfterIsWithinWindow", func(t *testing.T) {
		l, clk := open(t)
		clk.Advance(time.Hour + 59*time.Second + time.Millisecond)
		allow(t, l, "k", 1, 10*time.Minute)
		d := allow(t, l, "k", 1, 10*time.Minute)
		if d.Allowed || d.RetryAfter <= 0 || d.RetryAfter > 10*time.Minute {
			t.Fatalf("got %+v, want denied with RetryAfter in (0, 10m]", d)
		}
		if want := 10*time.Minute - 59*time.Second - time.Millisecond; d.RetryAfter != want {
			t.Errorf("RetryAfter = %v, want %v", d.RetryAfter, want)
		}
	})

	t.Run("RetryAfterIsAtLeastASecond", func(t *testing.T) {
		l, clk := open(t)
		clk.Advance(time.Minute - 100*time.Millisecond)
		allow(t, l, "k", 0, time.Minute)
		if d := allow(t, l, "k", 0, time.Minute); d.RetryAfter != time.Second {
			t.Errorf("100ms before the window ends: got %+v, want RetryAfter 1s", d)
		}
	})

	t.Run("NewWindowResets", func(t *testing.T) {
		l, clk := open(t)
		allow(t, l, "k", 2, time.Minute)
		allow(t, l, "k", 2, time.Minute)
		if d := allow(t, l, "k", 2, time.Minute); d.Allowed {
			t.Fatalf("third hit allowed: %+v", d)
		}
		clk.Advance(time.Minute)
		want := limit.Decision{Allowed: true, Limit: 2, Remaining: 1}
		if d := allow(t, l, "k", 2, time.Minute); d != want {
			t.Fatalf("first hit of the next window: got %+v, want %+v", d, want)
		}
	})

	t.Run("WindowsAlignToEpoch", func(t *testing.T) {
		// A hit in the last millisecond of a window and one in the first
		// millisecond of the next are counted apart, though 2ms apart.
		l, clk := open(t)
		clk.Advance(time.Minute - time.Millisecond)
		allow(t, l, "k", 1, time.Minute)
		clk.Advance(2 * time.Millisecond)
		if d := allow(t, l, "k", 1, time.Minute); !d.Allowed {
			t.Fatalf("hit in the next window denied: %+v", d)
		}
		clk.Advance(time.Minute - 3*time.Millisecond)
		if d := allow(t, l, "k", 1, time.Minute); d.Allowed {
			t.Fatalf("second hit in the same window allowed: %+v", d)
		}
	})

	t.Run("KeysAreIndependent", func(t *testing.T) {
		l, _ := open(t)
		allow(t, l, "a", 1, time.Minute)
		if d := allow(t, l, "a", 1, time.Minute); d.Allowed {
			t.Fatalf("second hit on a allowed: %+v", d)
		}
		for _, key := range []string{"b", "a:", "A", "a:60000000000"} {
			if d := allow(t, l, key, 1, time.Minute); !d.Allowed {
				t.Errorf("first hit on %q denied: %+v", key, d)
			}
		}
	})

	t.Run("WindowLengthsAreIndependent", func(t *testing.T) {
		l, _ := open(t)
		allow(t, l, "k", 1, time.Minute)
		if d := allow(t, l, "k", 1, time.Hour); !d.Allowed {
			t.Fatalf("first hit in an hour window denied after a hit in a minute window: %+v", d)
		}
	})

	t.Run("ZeroLimitDeniesAll", func(t *testing.T) {
		l, _ := open(t)
		if d := allow(t, l, "k", 0, time.Minute); d.Allowed {
			t.Fatalf("allowed with limit 0: %+v", d)
		}
	})

	t.Run("RejectsBadArguments", func(t *testing.T) {
		l, _ := open(t)
		if _, err := l.Allow(t.Context(), "k", 1, 0); err == nil {
			t.Error("window 0 accepted")
		}
		if _, err := l.Allow(t.Context(), "k", -1, time.Minute); err == nil {
			t.Error("limit -1 accepted")
		}
	})

	t.Run("ConcurrentHitsCountExactly", func(t *testing.T) {
		l, _ := open(t)
		const hits, n = 50, 20
		var allowed atomic.Int32
		var wg sync.WaitGroup
		for range hits {
			wg.Go(func() {
				d, err := l.Allow(t.Context(), "k", n, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if d.Allowed {
					allowed.Add(1)
				}
			})
		}
		wg.Wait()
		if got := allowed.Load(); got != n {
			t.Fatalf("%d of %d concurrent hits allowed, want %d", got, hits, n)
		}
	})
}

func allow(t *testing.T, l limit.Limiter, key string, n int, window time.Duration) limit.Decision {
	t.Helper()
	d, err := l.Allow(t.Context(), key, n, window)
	if err != nil {
		t.Fatalf("Allow(%q, %d, %v): %v", key, n, window, err)
	}
	return d
}
