package lmsctl_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lmsctl"
	"github.com/lms-platform/lms/internal/ops"
)

// keys records the Idempotency-Key and status of every request it sends.
type keys struct {
	next     *http.Client
	mu       sync.Mutex
	sent     []string
	statuses []int
}

func (k *keys) Do(r *http.Request) (*http.Response, error) {
	res, err := k.next.Do(r)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sent = append(k.sent, r.Header.Get("Idempotency-Key"))
	if err == nil {
		k.statuses = append(k.statuses, res.StatusCode)
	}
	return res, err
}

// TestWriteRetriedWithItsKey: a write refused by the per-token limit is
// sent again after Retry-After with the same Idempotency-Key, and made
// once.
func TestWriteRetriedWithItsKey(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.ClientAs("admin")
		token := apitest.Must(admin.PostAuthTokens(t.Context(), client.CreateInputBody{Name: "limited",
			Scopes: []string{"courses:write"}, RateLimitPerMinute: client.Ptr(int64(1))}))(t).Token
		rec := &keys{next: env.HTTP.Client()}
		cl, err := client.New(env.HTTP.URL, rec)
		if err != nil {
			t.Fatal(err)
		}
		var waited []time.Duration
		c := &lmsctl.Caller{Client: cl.WithHost(env.Host).WithToken(token), Wait: true,
			Sleep: func(_ context.Context, d time.Duration) error {
				// Instead of waiting, the server's minute ends.
				waited = append(waited, d)
				env.Clock.Advance(time.Minute)
				return nil
			}}
		op, _ := ops.Find("post-admin-courses")
		if _, err := c.Call(context.Background(), op, lmsctl.Input{Body: map[string]any{"title": "First"}}); err != nil {
			t.Fatal(err)
		}
		res, err := c.Call(context.Background(), op, lmsctl.Input{Body: map[string]any{"title": "Retried"}})
		if err != nil {
			t.Fatalf("retried write: %v", err)
		}
		if len(rec.sent) != 3 || rec.statuses[1] != 429 || rec.statuses[2] != 201 || len(waited) != 1 || waited[0] < time.Second {
			t.Fatalf("requests %v, statuses %v, waits %v", rec.sent, rec.statuses, waited)
		}
		if rec.sent[1] == "" || rec.sent[1] != rec.sent[2] || rec.sent[0] == rec.sent[1] {
			t.Fatalf("Idempotency-Keys: %q", rec.sent)
		}
		retried := apitest.Must(admin.GetAdminCourses(t.Context(), client.GetAdminCoursesParams{Title: client.Ptr("Retried")}))(t)
		if retried.Meta.Total != 1 || string(res.Data) == "null" {
			t.Fatalf("the retried course: %s", res.Data)
		}
	})
}
