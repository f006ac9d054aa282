package server_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/apitest"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestRequestLogCarriesNoSecrets(t *testing.T) {
	logs := &syncBuffer{}
	env := apitest.New(t, "sqlite", apitest.Options{Log: logs})
	u := env.As("student")
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: u.Token,
		Headers: map[string]string{"X-Request-Id": "req-42"}})
	if res.Header.Get("X-Request-Id") != "req-42" {
		t.Fatalf("request id not echoed: %v", res.Header)
	}
	out := logs.String()
	for _, secret := range []string{u.Token, u.Password, "admin-password", u.Token[strings.LastIndex(u.Token, ".")+1:]} {
		if strings.Contains(out, secret) {
			t.Fatalf("a secret reached the log")
		}
	}
	var found bool
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["msg"] != "request" {
			continue
		}
		if line["request_id"] == "req-42" {
			found = true
			if line["route"] != "GET /api/profile/me" || line["status"] != float64(200) ||
				line["user"] != float64(u.ID) || line["tenant"] != float64(env.Tenant.ID) {
				t.Fatalf("log line lacks fields: %v", line)
			}
		}
	}
	if !found {
		t.Fatalf("no request line for req-42 in:\n%s", out)
	}
}

func TestHealthNamesWhatIsDown(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	// A Redis nobody listens on stands for a Redis that went down.
	env.Server.Redis = redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	defer env.Server.Redis.Close()
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/health"})
	if res.Status != 503 || res.Get("success") != false || res.String("data.services.redis") != "down" ||
		!strings.Contains(res.String("message"), "redis") {
		t.Fatalf("health with Redis down: %d %s", res.Status, res.Body)
	}
	env.Server.Redis = nil
}
