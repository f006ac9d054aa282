package limit_test

import (
	"context"
	"crypto/rand"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/limit"
	"github.com/lms-platform/lms/internal/limit/limittest"
	"github.com/lms-platform/lms/internal/redisconn"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

func TestLimiters(t *testing.T) {
	for name, b := range limittest.Backends(t) {
		t.Run(name, func(t *testing.T) { limittest.Conformance(t, b) })
	}
}

func BenchmarkMemoryAllow(b *testing.B) {
	benchmarkAllow(b, limit.NewMemory(clock.System{}))
}

func BenchmarkRedisAllow(b *testing.B) {
	u := os.Getenv(redisconntest.EnvURL)
	if u == "" {
		b.Skipf("%s is not set", redisconntest.EnvURL)
	}
	rdb, err := redisconn.Open(b.Context(), u)
	if err != nil {
		b.Fatal(err)
	}
	defer rdb.Close()
	benchmarkAllow(b, limit.NewRedis(rdb, clock.System{}))
}

// benchmarkAllow spreads hits over many keys, as requests from many clients
// would, one caller at a time and from parallel callers.
func benchmarkAllow(b *testing.B, l limit.Limiter) {
	// A random namespace keeps runs sharing a Redis from counting together.
	ns := "bench-" + rand.Text() + ":"
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = ns + strconv.Itoa(i)
	}
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := l.Allow(ctx, keys[i%len(keys)], 100, time.Second); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := l.Allow(ctx, keys[i%len(keys)], 100, time.Second); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	})
}
