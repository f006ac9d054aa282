package topics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/platform"
)

// lockedBuffer is a log sink safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b.buf.Bytes()))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil {
			out = append(out, line)
		}
	}
	return out
}

// TestServiceLogCarriesRequestID: a warning written while serving a
// request (here, a topic's attachment whose stored key the blob store
// refuses, left behind by the delete) carries the request's id.
func TestServiceLogCarriesRequestID(t *testing.T) {
	logs := &lockedBuffer{}
	env := apitest.New(t, "sqlite", apitest.Options{Log: logs})
	w := newWorld(t, env)
	topic := createRich(t, w, w.tutor, w.lesson, "With a broken attachment")
	exec(t, env, func(tn *platform.Tenant) error {
		_, err := tn.DB.ExecContext(context.Background(), `INSERT INTO topic_resources (topic_id, name, path, size,
			content_type, created_at) VALUES ($1, 'broken.pdf', '../outside.pdf', 1, 'application/pdf', $2)`,
			topic, env.Clock.Now())
		return err
	})
	apitest.OK(t, env.UserClient(w.tutor).WithHeader("X-Request-Id", "req-topic-delete").DeleteAdminTopicsID(t.Context(), topic))
	for _, line := range logs.lines() {
		if line["msg"] == "topics: remove file" {
			if line["request_id"] != "req-topic-delete" {
				t.Fatalf("log line without the request id: %v", line)
			}
			return
		}
	}
	t.Fatal("no warning about the file that could not be removed")
}
