// Package locktest is the conformance suite every lock.Locker passes, and the
// list of backends to run it on.
package locktest

import (
	"context"
	"errors"
	"github.com/redis/go-redis/v9"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

// Backend opens lockers of one implementation.
type Backend = redisconntest.Backend[lock.Locker]

// Backends returns the implementations to test: memory always, redis when
// LMS_TEST_REDIS_URL is set (and a failure under CI=true when it is not).
func Backends(t *testing.T) map[string]Backend {
	return redisconntest.Backends(t, func(clk clock.Clock) lock.Locker { return lock.NewMemory(clk) }, lock.KeyPrefix,
		func(rdb *redis.Client, _ clock.Clock, ns string) lock.Locker {
			return namespaced{lock.NewRedis(rdb), ns}
		}, true)
}

// namespaced puts a test's namespace in front of every lock name.
type namespaced struct {
	l  lock.Locker
	ns string
}

func (n namespaced) Acquire(ctx context.Context, name string, ttl time.Duration) (lock.Unlock, error) {
	return n.l.Acquire(ctx, n.ns+name, ttl)
}

func (n namespaced) TryAcquire(ctx context.Context, name string, ttl time.Duration) (lock.Unlock, error) {
	return n.l.TryAcquire(ctx, n.ns+name, ttl)
}

var start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// Conformance checks that the lockers of b behave as the Locker interface
// promises.
func Conformance(t *testing.T, b Backend) {
	open := func(t *testing.T) (lock.Locker, *clock.Fake) {
		t.Parallel()
		clk := clock.NewFake(start)
		return b.New(t, clk), clk
	}
	// shortTTL is a ttl the suite lets pass: on the fake clock by advancing
	// it, on a real-time backend by waiting, so it is short there.
	shortTTL := time.Minute
	if b.RealTime {
		shortTTL = 200 * time.Millisecond
	}
	// pass makes d go by for the backend's locks; on a real-time backend the
	// caller then waits with eventually.
	pass := func(clk *clock.Fake, d time.Duration) {
		if !b.RealTime {
			clk.Advance(d)
		}
	}

	t.Run("TryAcquireFailsWhileHeld", func(t *testing.T) {
		l, _ := open(t)
		unlock := tryAcquire(t, l, "a", time.Minute)
		wantHeld(t, l, "a")
		other := tryAcquire(t, l, "b", time.Minute)
		release(t, unlock)
		release(t, other)
	})

	t.Run("UnlockLetsNextIn", func(t *testing.T) {
		l, _ := open(t)
		unlock := tryAcquire(t, l, "a", time.Minute)
		release(t, unlock)
		release(t, tryAcquire(t, l, "a", time.Minute))
	})

	t.Run("UnlockTwiceIsHarmless", func(t *testing.T) {
		l, _ := open(t)
		unlock := tryAcquire(t, l, "a", time.Minute)
		release(t, unlock)
		next := tryAcquire(t, l, "a", time.Minute)
		release(t, unlock)
		wantHeld(t, l, "a")
		release(t, next)
	})

	t.Run("AcquireWaitsForUnlock", func(t *testing.T) {
		l, _ := open(t)
		unlock := tryAcquire(t, l, "a", time.Minute)
		var released atomic.Bool
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			next, err := l.Acquire(ctx, "a", time.Minute)
			if err == nil && !released.Load() {
				err = errors.New("Acquire returned while the lock was held")
			}
			if err == nil {
				err = next(t.Context())
			}
			done <- err
		}()
		released.Store(true)
		release(t, unlock)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("AcquireEndsWithContext", func(t *testing.T) {
		l, _ := open(t)
		unlock := tryAcquire(t, l, "a", time.Minute)
		defer release(t, unlock)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		if _, err := l.Acquire(ctx, "a", time.Minute); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire on a held lock with an ending context: got %v, want DeadlineExceeded", err)
		}
	})

	t.Run("MutualExclusion", func(t *testing.T) {
		l, _ := open(t)
		const workers = 20
		var inside atomic.Int32
		// counter is read and written in two steps, so two holders at once
		// would lose an increment; atomics keep the race detector out of it,
		// since a lock in Redis is invisible to it.
		var counter atomic.Int32
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				unlock, err := l.Acquire(ctx, "counter", time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if n := inside.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				v := counter.Load()
				runtime.Gosched()
				counter.Store(v + 1)
				inside.Add(-1)
				if err := unlock(t.Context()); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if got := counter.Load(); got != workers {
			t.Fatalf("counter = %d after %d locked increments", got, workers)
		}
	})

	t.Run("HeldUntilTTL", func(t *testing.T) {
		if b.RealTime {
			t.Skip("needs a clock the test can move; covered by the memory backend")
		}
		l, clk := open(t)
		tryAcquire(t, l, "a", time.Minute)
		clk.Advance(time.Minute - time.Nanosecond)
		wantHeld(t, l, "a")
		clk.Advance(time.Nanosecond)
		tryAcquire(t, l, "a", time.Minute)
	})

	t.Run("ExpiredUnlockSparesNewHolder", func(t *testing.T) {
		l, clk := open(t)
		stale := tryAcquire(t, l, "a", shortTTL)
		pass(clk, shortTTL)
		var fresh lock.Unlock
		eventually(t, 2*time.Second, func() bool {
			u, err := l.TryAcquire(t.Context(), "a", time.Minute)
			fresh = u
			return err == nil
		})
		release(t, stale)
		wantHeld(t, l, "a")
		release(t, fresh)
		release(t, tryAcquire(t, l, "a", time.Minute))
	})

	t.Run("AcquireTakesExpiredLock", func(t *testing.T) {
		l, clk := open(t)
		tryAcquire(t, l, "a", shortTTL)
		done := make(chan error, 1)
		go func() {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			_, err := l.Acquire(ctx, "a", time.Minute)
			done <- err
		}()
		pass(clk, shortTTL)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("RejectsNonPositiveTTL", func(t *testing.T) {
		l, _ := open(t)
		for _, ttl := range []time.Duration{0, -time.Second} {
			if _, err := l.TryAcquire(t.Context(), "a", ttl); err == nil || errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("TryAcquire with ttl %v: got %v, want an argument error", ttl, err)
			}
			if _, err := l.Acquire(t.Context(), "a", ttl); err == nil || errors.Is(err, lock.ErrNotAcquired) {
				t.Errorf("Acquire with ttl %v: got %v, want an argument error", ttl, err)
			}
		}
	})
}

func tryAcquire(t *testing.T, l lock.Locker, name string, ttl time.Duration) lock.Unlock {
	t.Helper()
	unlock, err := l.TryAcquire(t.Context(), name, ttl)
	if err != nil {
		t.Fatalf("TryAcquire(%q): %v", name, err)
	}
	return unlock
}

func wantHeld(t *testing.T, l lock.Locker, name string) {
	t.Helper()
	unlock, err := l.TryAcquire(t.Context(), name, time.Minute)
	if !errors.Is(err, lock.ErrNotAcquired) {
		if err == nil {
			release(t, unlock)
		}
		t.Fatalf("TryAcquire(%q) on a held lock: got %v, want ErrNotAcquired", name, err)
	}
}

func release(t *testing.T, unlock lock.Unlock) {
	t.Helper()
	if err := unlock(t.Context()); err != nil {
		t.Fatalf("unlock: %v", err)
	}
}

// eventually polls cond until it holds or the deadline passes; only backends
// that expire by their own real clock need more than the first call.
func eventually(t *testing.T, within time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", within)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
