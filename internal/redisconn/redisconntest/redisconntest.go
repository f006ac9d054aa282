// Package redisconntest gives the conformance suites of the Redis-backed
// packages a test server and a private key namespace on it.
package redisconntest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/redisconn"
)

// Backend opens instances of one implementation of T, a store with a
// memory and a Redis implementation, for T's conformance suite.
type Backend[T any] struct {
	// New returns an instance reading the time from clk, if it reads the
	// clock at all, whose keys no other test sees. What it creates is
	// removed when t ends.
	New func(t *testing.T, clk clock.Clock) T
	// RealTime is set when keys expire by a clock the test cannot move
	// (Redis's own), so the suite waits for short ttls to pass in real time.
	RealTime bool
}

// Backends returns the implementations to test: memory always, redis when
// LMS_TEST_REDIS_URL is set (and a failure under CI=true when it is not).
// onRedis makes an instance whose keys start with the test's namespace ns
// (under keyPrefix); realTime is its Backend's RealTime.
func Backends[T any](t *testing.T, memory func(clk clock.Clock) T, keyPrefix string,
	onRedis func(rdb *redis.Client, clk clock.Clock, ns string) T, realTime bool) map[string]Backend[T] {
	backends := map[string]Backend[T]{
		"memory": {New: func(_ *testing.T, clk clock.Clock) T { return memory(clk) }},
	}
	if rdb, ok := Client(t); ok {
		backends["redis"] = Backend[T]{
			New: func(t *testing.T, clk clock.Clock) T {
				return onRedis(rdb, clk, Namespace(t, rdb, keyPrefix))
			},
			RealTime: realTime,
		}
	}
	return backends
}

// EnvURL names the variable holding the URL of the test Redis server.
const EnvURL = "LMS_TEST_REDIS_URL"

// Client returns a client for the server named by LMS_TEST_REDIS_URL, closed
// when t ends, and false when the variable is unset. Under CI=true an unset
// variable fails a subtest named "redis": a backend CI was meant to test must
// not pass by being skipped, and the other backends still run.
func Client(t *testing.T) (*redis.Client, bool) {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Run("redis", func(t *testing.T) {
				t.Fatalf("CI=true but %s is not set", EnvURL)
			})
		} else {
			t.Logf("%s is not set: not testing the redis backend", EnvURL)
		}
		return nil, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	rdb, err := redisconn.Open(ctx, u)
	if err != nil {
		t.Fatalf("open test redis: %v", err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb, true
}

// Namespace returns a random string to put in front of every key a test
// uses, so parallel tests and runs never see each other's keys. When t ends
// it removes every key starting with keyPrefix+namespace.
func Namespace(t *testing.T, rdb redis.UniversalClient, keyPrefix string) string {
	t.Helper()
	ns := "test-" + strings.ToLower(rand.Text()) + ":"
	t.Cleanup(func() {
		// t.Context is already canceled during cleanup.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := rdb.Scan(ctx, 0, keyPrefix+ns+"*", 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("clean up test keys: %v", err)
			return
		}
		if len(keys) > 0 {
			if err := rdb.Unlink(ctx, keys...).Err(); err != nil {
				t.Errorf("clean up test keys: %v", err)
			}
		}
	})
	return ns
}

// Server is a redis-server of a test's own, to stop in the middle of it.
type Server struct {
	URL string
	cmd *exec.Cmd
}

// Start runs redis-server on a free port of 127.0.0.1, without persistence,
// until t ends. Without redis-server the test is skipped, or fails under
// CI=true.
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but redis-server is not installed")
		}
		t.Skip("redis-server is not installed")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("start redis-server: %v", err)
	}
	s := &Server{URL: fmt.Sprintf("redis://127.0.0.1:%d/0", port), cmd: cmd}
	t.Cleanup(s.Stop)
	// Wait until it answers; it takes a few milliseconds.
	for i := 0; ; i++ {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
			return s
		}
		if i == 200 {
			t.Fatalf("redis-server on port %d does not answer: %v", port, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// Stop kills the server, as a crash would, and waits for it to exit.
func (s *Server) Stop() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}
