package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// runMain, set to 1 in the environment of the test binary, makes it lms
// itself: TestMain runs lms's main instead of the tests. A test runs its
// own binary as lms, so no test builds lms again.
const runMain = "LMS_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// hookReceiver is a webhook endpoint that holds its first request open
// (the delivery in flight when the process is killed) and accepts the
// others, counting each webhook-id once, as a receiver that dedupes.
type hookReceiver struct {
	mu       sync.Mutex
	requests int
	accepted map[string]int
	inFlight chan struct{}
	release  chan struct{}
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	id := r.Header.Get("webhook-id")
	h.mu.Lock()
	h.requests++
	first := h.requests == 1
	h.mu.Unlock()
	if first {
		close(h.inFlight)
		<-h.release
		return
	}
	h.mu.Lock()
	h.accepted[id]++
	h.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// TestKilledDuringDelivery kills `lms serve` with SIGKILL while a webhook
// delivery is in flight, then starts it again on the same storage: every
// pending delivery is delivered after the restart, with no new event, and
// the receiver, deduping by webhook-id, sees each event once.
func TestKilledDuringDelivery(t *testing.T) {
	backends := []string{"sqlite"}
	if os.Getenv("LMS_TEST_PG_URL") != "" {
		backends = append(backends, "postgres")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { killedDuringDelivery(t, bin, backend) })
	}
}

func killedDuringDelivery(t *testing.T, bin, backend string) {
	dir := t.TempDir()
	env := []string{runMain + "=1", "LMS_DATA_DIR=" + dir, "LMS_PASSWORD_COST=test", "LMS_ADMIN_PASSWORD=platform-password",
		"LMS_LOG_LEVEL=info", "LMS_WEB_ADDR=127.0.0.1:0", "LMS_FETCH_ALLOW_PRIVATE=true", "LMS_EVENTS_LEASE=3s",
		"LMS_EVENTS_POLL=200ms", "LMS_REDIS_URL=", "LMS_BLOB_URL="}
	if backend == "postgres" {
		ctx := context.Background()
		name := "lmskill_" + strings.ToLower(rand.Text()[:10])
		pg := os.Getenv("LMS_TEST_PG_URL")
		if err := sqldb.CreateMigrated(ctx, pg, name, sqldb.PlatformSet); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sqldb.DropDatabasesLike(context.Background(), pg, name) })
		url, err := sqldb.WithDatabase(pg, name)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, "LMS_DATABASE_URL="+url)
	} else {
		env = append(env, "LMS_DATABASE_URL=")
	}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LMS_") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bin, "tenant", "add", "--host", "acme.test", "--admin-email", "admin@acme.test", "--admin-password", "admin-password")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tenant add: %v\n%s", err, out)
	}
	recv := &hookReceiver{accepted: map[string]int{}, inFlight: make(chan struct{}), release: make(chan struct{})}
	hooks := httptest.NewServer(recv)
	defer hooks.Close()
	defer close(recv.release)

	serve := func() (*exec.Cmd, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		c := exec.Command(bin, "serve")
		c.Env = append([]string{"LMS_API_ADDR=" + addr}, env...)
		logFile, _ := os.Create(filepath.Join(dir, "serve-"+strconv.FormatInt(time.Now().UnixNano(), 10)+".log"))
		c.Stdout, c.Stderr = logFile, logFile
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		deadline := time.Now().Add(60 * time.Second)
		for {
			req, _ := http.NewRequest("GET", "http://"+addr+"/api/healthcheck", nil)
			req.Host = "acme.test"
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					return c, addr
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("serve did not start")
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	call := func(addr, token, method, path string, body any) map[string]any {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, "http://"+addr+path, bytes.NewReader(b))
		req.Host = "acme.test"
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		if res.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, out)
		}
		return out
	}
	data := func(m map[string]any) map[string]any { return m["data"].(map[string]any) }

	first, addr := serve()
	token := data(call(addr, "", "POST", "/api/auth/login", map[string]any{"email": "admin@acme.test", "password": "admin-password"}))["token"].(string)
	hook := data(call(addr, token, "POST", "/api/admin/webhooks", map[string]any{"url": hooks.URL, "events": []string{"Course*"}}))
	hookID := strconv.Itoa(int(hook["id"].(float64)))
	for i := range 3 {
		call(addr, token, "POST", "/api/admin/courses", map[string]any{"title": "Course " + strconv.Itoa(i), "status": "published"})
	}
	select {
	case <-recv.inFlight:
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook delivery started")
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()

	_, addr = serve()
	total := -1
	deadline := time.Now().Add(60 * time.Second)
	for {
		log := call(addr, token, "GET", "/api/admin/webhooks/"+hookID+"/deliveries?per_page=100", nil)
		total = int(log["meta"].(map[string]any)["total"].(float64))
		delivered := 0
		for _, d := range log["data"].([]any) {
			if d.(map[string]any)["state"] == "delivered" {
				delivered++
			}
		}
		recv.mu.Lock()
		unique := len(recv.accepted)
		recv.mu.Unlock()
		if total > 0 && delivered == total && unique == total {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the restart: %d of %d delivered, %d accepted", delivered, total, unique)
		}
		time.Sleep(100 * time.Millisecond)
	}
	recv.mu.Lock()
	defer recv.mu.Unlock()
	t.Logf("%s: %d webhook deliveries, %d requests (1 cut by the kill), each webhook-id accepted once", backend, total, recv.requests)
	for id, n := range recv.accepted {
		if n != 1 {
			t.Errorf("%s accepted %d times", id, n)
		}
	}
}
