package lmsctl

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/ops"
)

// statuses records the status of every answer.
type statuses struct {
	next *http.Client
	mu   sync.Mutex
	got  []int
}

func (s *statuses) Do(r *http.Request) (*http.Response, error) {
	res, err := s.next.Do(r)
	if err == nil {
		s.mu.Lock()
		s.got = append(s.got, res.StatusCode)
		s.mu.Unlock()
	}
	return res, err
}

// TestUploadRetriedWhole: an upload refused by the per-token limit is
// streamed again from its file after Retry-After, and the stored file is
// the whole file.
func TestUploadRetriedWhole(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	ctx, admin := t.Context(), env.ClientAs("admin")
	token := apitest.Must(admin.PostAuthTokens(ctx, client.CreateInputBody{Name: "limited",
		Scopes: []string{"courses:write"}, RateLimitPerMinute: client.Ptr(int64(1))}))(t).Token
	course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Course"}))(t).ID
	lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Lesson"}))(t).ID
	pdf := filepath.Join(t.TempDir(), "notes.pdf")
	content := append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("0123456789"), 300<<10)...)
	if err := os.WriteFile(pdf, content, 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &statuses{next: env.HTTP.Client()}
	cl, err := client.New(env.HTTP.URL, rec)
	if err != nil {
		t.Fatal(err)
	}
	var sent, total int64
	c := &Caller{Client: cl.WithHost(env.Host).WithToken(token), Wait: true,
		Sleep: func(_ context.Context, d time.Duration) error {
			env.Clock.Advance(time.Minute)
			return nil
		},
		Progress: func(s, t int64) { sent, total = s, t }}
	op, _ := ops.Find("get-auth-tokens-current")
	if _, err := c.Call(context.Background(), op, Input{}); err != nil {
		t.Fatal(err)
	}
	res, err := sendWithFile(context.Background(), c, map[string]any{"lesson": lesson, "title": "Notes",
		"topicable": topicTypes["pdf"].class}, pdf)
	if err != nil {
		t.Fatalf("upload: %v", err)
	}
	if len(rec.got) != 3 || rec.got[1] != 429 || rec.got[2] != 201 {
		t.Fatalf("statuses %v", rec.got)
	}
	if sent != total || total <= int64(len(content)) {
		t.Fatalf("progress %d of %d for a file of %d bytes", sent, total, len(content))
	}
	var topic struct {
		Value struct {
			URL string `json:"url"`
		} `json:"topicable"`
	}
	if err := json.Unmarshal(res.Data, &topic); err != nil || topic.Value.URL == "" {
		t.Fatalf("topic: %s", res.Data)
	}
	get, _ := http.NewRequest("GET", env.HTTP.URL+topic.Value.URL, nil)
	get.Host = env.Host
	file, err := env.HTTP.Client().Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Body.Close()
	got, _ := io.ReadAll(file.Body)
	if !bytes.Equal(got, content) {
		t.Fatalf("stored file: %d bytes, want %d", len(got), len(content))
	}
}
