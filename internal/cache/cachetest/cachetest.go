// Package cachetest is the conformance suite every cache.Cache passes, and
// the list of backends to run it on.
package cachetest

import (
	"bytes"
	"context"
	"github.com/redis/go-redis/v9"
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

// Backend opens caches of one implementation.
type Backend = redisconntest.Backend[cache.Cache]

// Backends returns the implementations to test: memory always, redis when
// LMS_TEST_REDIS_URL is set (and a failure under CI=true when it is not).
func Backends(t *testing.T) map[string]Backend {
	return redisconntest.Backends(t, func(clk clock.Clock) cache.Cache { return cache.NewMemory(clk) }, cache.KeyPrefix,
		func(rdb *redis.Client, _ clock.Clock, ns string) cache.Cache {
			return namespaced{cache.NewRedis(rdb), ns}
		}, true)
}

// namespaced puts a test's namespace in front of every key.
type namespaced struct {
	c  cache.Cache
	ns string
}

func (n namespaced) Get(ctx context.Context, key string) ([]byte, bool, error) {
	return n.c.Get(ctx, n.ns+key)
}

func (n namespaced) Set(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return n.c.Set(ctx, n.ns+key, value, ttl)
}

func (n namespaced) Delete(ctx context.Context, keys ...string) error {
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = n.ns + k
	}
	return n.c.Delete(ctx, full...)
}

func (n namespaced) DeletePrefix(ctx context.Context, prefix string) error {
	return n.c.DeletePrefix(ctx, n.ns+prefix)
}

var start = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)

// Conformance checks that the caches of b behave as the Cache interface
// promises.
func Conformance(t *testing.T, b Backend) {
	open := func(t *testing.T) (cache.Cache, *clock.Fake) {
		t.Parallel()
		clk := clock.NewFake(start)
		return b.New(t, clk), clk
	}

	t.Run("GetMissing", func(t *testing.T) {
		c, _ := open(t)
		wantAbsent(t, c, "nothing")
	})

	t.Run("SetGetOverwrite", func(t *testing.T) {
		c, _ := open(t)
		set(t, c, "k", "one", time.Minute)
		wantValue(t, c, "k", "one")
		set(t, c, "k", "two", time.Minute)
		wantValue(t, c, "k", "two")
		set(t, c, "empty", "", time.Minute)
		wantValue(t, c, "empty", "")
	})

	t.Run("ValuesAreCopied", func(t *testing.T) {
		c, _ := open(t)
		v := []byte("abc")
		if err := c.Set(t.Context(), "k", v, time.Minute); err != nil {
			t.Fatal(err)
		}
		v[0] = 'X'
		got := wantValue(t, c, "k", "abc")
		got[0] = 'Y'
		wantValue(t, c, "k", "abc")
	})

	t.Run("Delete", func(t *testing.T) {
		c, _ := open(t)
		set(t, c, "a", "1", time.Minute)
		set(t, c, "b", "2", time.Minute)
		set(t, c, "c", "3", time.Minute)
		if err := c.Delete(t.Context(), "a", "b", "never-set"); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(t.Context()); err != nil {
			t.Fatalf("Delete of no keys: %v", err)
		}
		wantAbsent(t, c, "a")
		wantAbsent(t, c, "b")
		wantValue(t, c, "c", "3")
	})

	t.Run("DeletePrefix", func(t *testing.T) {
		c, _ := open(t)
		for _, k := range []string{"t1:a", "t1:b", "t1:", "t10:a", "t2:a", "x:t1:a"} {
			set(t, c, k, k, time.Minute)
		}
		if err := c.DeletePrefix(t.Context(), "t1:"); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"t1:a", "t1:b", "t1:"} {
			wantAbsent(t, c, k)
		}
		for _, k := range []string{"t10:a", "t2:a", "x:t1:a"} {
			wantValue(t, c, k, k)
		}
	})

	t.Run("DeletePrefixTakesPatternCharactersLiterally", func(t *testing.T) {
		c, _ := open(t)
		keep := []string{"pa:1", "p?:1", `p\*:1`, "pb]:1"}
		gone := []string{"p*:1", "p[ab]:1"}
		for _, k := range append(keep, gone...) {
			set(t, c, k, k, time.Minute)
		}
		for _, p := range []string{"p*", "p[ab]"} {
			if err := c.DeletePrefix(t.Context(), p); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range gone {
			wantAbsent(t, c, k)
		}
		for _, k := range keep {
			wantValue(t, c, k, k)
		}
	})

	t.Run("DeletePrefixOfManyKeys", func(t *testing.T) {
		// More keys than one SCAN batch, so the cursor has to be followed.
		c, _ := open(t)
		const n = 1200
		for i := range n {
			set(t, c, "many:"+strconv.Itoa(i), "v", time.Minute)
		}
		set(t, c, "other", "v", time.Minute)
		if err := c.DeletePrefix(t.Context(), "many:"); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			wantAbsent(t, c, "many:"+strconv.Itoa(i))
		}
		wantValue(t, c, "other", "v")
	})

	t.Run("Expiry", func(t *testing.T) {
		c, clk := open(t)
		if b.RealTime {
			// The backend's clock cannot be moved: use a ttl short enough to
			// wait for and long enough to read the value back first.
			set(t, c, "k", "v", 300*time.Millisecond)
			wantValue(t, c, "k", "v")
			eventually(t, 2*time.Second, func() bool {
				_, ok, err := c.Get(t.Context(), "k")
				return err == nil && !ok
			})
			return
		}
		set(t, c, "k", "v", time.Minute)
		clk.Advance(time.Minute - time.Nanosecond)
		wantValue(t, c, "k", "v")
		clk.Advance(time.Nanosecond)
		wantAbsent(t, c, "k")
	})

	t.Run("OverwriteRenewsTTL", func(t *testing.T) {
		if b.RealTime {
			t.Skip("needs a clock the test can move; covered by the memory backend")
		}
		c, clk := open(t)
		set(t, c, "k", "v1", time.Minute)
		clk.Advance(50 * time.Second)
		set(t, c, "k", "v2", time.Minute)
		clk.Advance(50 * time.Second)
		wantValue(t, c, "k", "v2")
	})

	t.Run("RejectsNonPositiveTTL", func(t *testing.T) {
		c, _ := open(t)
		for _, ttl := range []time.Duration{0, -time.Second} {
			if err := c.Set(t.Context(), "k", []byte("v"), ttl); err == nil {
				t.Errorf("ttl %v accepted", ttl)
			}
		}
		wantAbsent(t, c, "k")
	})
}

func set(t *testing.T, c cache.Cache, key, value string, ttl time.Duration) {
	t.Helper()
	if err := c.Set(t.Context(), key, []byte(value), ttl); err != nil {
		t.Fatalf("Set(%q): %v", key, err)
	}
}

func wantValue(t *testing.T, c cache.Cache, key, want string) []byte {
	t.Helper()
	got, ok, err := c.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if !ok || !bytes.Equal(got, []byte(want)) {
		t.Fatalf("Get(%q) = %q, %v; want %q, true", key, got, ok, want)
	}
	return got
}

func wantAbsent(t *testing.T, c cache.Cache, key string) {
	t.Helper()
	got, ok, err := c.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	if ok || got != nil {
		t.Fatalf("Get(%q) = %q, %v; want nil, false", key, got, ok)
	}
}

// eventually polls cond until it holds or the deadline passes; only backends
// that expire by their own real clock need it.
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
