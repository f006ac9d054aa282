package redisconn_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/redisconn"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

func TestOpenRejectsBadURL(t *testing.T) {
	_, err := redisconn.Open(t.Context(), "http://user:s3cret@example.com/0")
	if err == nil {
		t.Fatal("Open accepted an http:// URL")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error leaks the password: %v", err)
	}
}

func TestOpenHidesPasswordInParseErrors(t *testing.T) {
	_, err := redisconn.Open(t.Context(), "redis://user:s3cret@local host:6379/0")
	if err == nil {
		t.Fatal("Open accepted a malformed URL")
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Errorf("error leaks the password: %v", err)
	}
}

func TestOpenFailsWhenNothingListens(t *testing.T) {
	// Port 1 is reserved (tcpmux) and closed on any machine that runs tests.
	// The deadline cuts the client's dial retries short.
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	rdb, err := redisconn.Open(ctx, "redis://127.0.0.1:1/0")
	if err == nil {
		rdb.Close()
		t.Fatal("Open succeeded without a server")
	}
}

func TestOpenPings(t *testing.T) {
	u := os.Getenv(redisconntest.EnvURL)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but %s is not set", redisconntest.EnvURL)
		}
		t.Skipf("%s is not set", redisconntest.EnvURL)
	}
	rdb, err := redisconn.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	if err := rdb.Ping(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
}
