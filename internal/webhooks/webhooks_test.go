package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/server"
	"github.com/lms-platform/lms/internal/webhooks"
)

// receiver is a webhook endpoint of the test: it keeps every request,
// answers 503 while down, and counts the messages it accepted by
// webhook-id, as a receiver that drops repeats does.
type receiver struct {
	srv      *httptest.Server
	down     atomic.Bool
	mu       sync.Mutex
	all      []message
	accepted map[string]int
	types    map[string]int
}

type message struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{accepted: map[string]int{}, types: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		m := message{Body: string(body), Headers: map[string]string{}}
		for _, h := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			m.Headers[h] = req.Header.Get(h)
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.all = append(r.all, m)
		if r.down.Load() {
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
			return
		}
		id := m.Headers["webhook-id"]
		if r.accepted[id] == 0 {
			var p webhooks.Payload
			json.Unmarshal(body, &p)
			r.types[p.Type]++
		}
		r.accepted[id]++
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) unique() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.accepted)
}

// verify checks every request the receiver got with the npm package
// standardwebhooks (make test installs it).
func verify(t *testing.T, secret string, msgs []message) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"secret": secret, "messages": msgs})
	cmd := exec.Command("node", filepath.Join("testdata", "verifier", "verify.js"))
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("verifier: %v (run make test, which installs testdata/verifier)", err)
	}
	var res struct {
		Verified int      `json:"verified"`
		Failures []string `json:"failures"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.Verified != len(msgs) || len(res.Failures) > 0 {
		t.Fatalf("standardwebhooks verified %d of %d: %v %s", res.Verified, len(msgs), res.Failures, out)
	}
}

// TestWebhooksAfterOutageAndRestart: an endpoint subscribed to Course*
// is down for 10 minutes of the injected clock; the process stops in the
// middle and a new one on the same storage delivers the due retries when
// the clock reaches them, with no new event. Every request verifies with
// standardwebhooks, and each event is accepted exactly once by webhook-id.
func TestWebhooksAfterOutageAndRestart(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			ctx := context.Background()
			env := apitest.New(t, backend, apitest.Options{NoDispatch: true,
				Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
			rcv := newReceiver(t)
			admin := env.As("admin")
			ac := env.UserClient(admin)
			_, err := ac.PostAdminWebhooks(ctx, client.WebhookCreateInputBody{URL: rcv.srv.URL, Events: []string{"Nothing*"}})
			apitest.Refused(t, err, 422)
			_, err = env.UserClient(env.NewUser("student")).PostAdminWebhooks(ctx, client.WebhookCreateInputBody{URL: rcv.srv.URL,
				Events: []string{"*"}})
			apitest.Refused(t, err, 403)
			created := apitest.Must(ac.PostAdminWebhooks(ctx, client.WebhookCreateInputBody{URL: rcv.srv.URL, Events: []string{"Course*"},
				Description: client.Ptr("CRM")}))(t)
			if created.Secret == nil || !strings.HasPrefix(*created.Secret, "whsec_") {
				t.Fatalf("created: %+v", created)
			}
			secret, id := *created.Secret, created.ID
			if got := apitest.Must(ac.GetAdminWebhooksID(ctx, id))(t); got.Secret != nil {
				t.Errorf("the secret is shown again: %+v", got)
			}
			env.DeliverEvents()
			before := env.LastEventID()

			rcv.down.Store(true)
			start := env.Clock.Now()
			for i := range 3 {
				course := apitest.Must(ac.PostAdminCourses(ctx, client.CourseBody{Title: "Course " + strconv.Itoa(i),
					Status: client.Ptr("draft")}))(t).ID
				apitest.Must(ac.PatchAdminCoursesID(ctx, course, client.CoursePatch{Status: client.Ptr("published")}))(t)
			}
			want := 0
			for _, name := range env.EventNames(before) {
				if strings.HasPrefix(name, "Course") {
					want++
				}
			}
			if want == 0 {
				t.Fatal("no Course* event")
			}
			env.DeliverEvents()
			tenant, release := env.OpenTenant(env.Tenant)
			pending := func() []events.Delivery {
				list, _, err := events.ListDeliveries(ctx, tenant.DB, events.Filter{State: events.StatePending,
					Listener: webhooks.Prefix + strconv.FormatInt(id, 10)})
				if err != nil {
					t.Fatal(err)
				}
				return list
			}
			if n := len(pending()); n != want {
				t.Fatalf("%d webhook deliveries pending, want %d", n, want)
			}
			// Retries while the endpoint is down, for 5 minutes.
			for env.Clock.Now().Sub(start) < 5*time.Minute {
				env.Clock.Set(*pending()[0].NextAttemptAt)
				env.DeliverEvents()
			}
			release()

			// The process stops; a new one opens the same storage (its
			// dispatcher starts with the tenant) while the endpoint comes
			// back 10 minutes after the events.
			cfg := *env.Server.Config
			next, err := server.New(ctx, &cfg, server.Options{Clock: env.Clock, Logger: env.Server.Log})
			if err != nil {
				t.Fatal(err)
			}
			defer next.Close()
			tenant, release, err = next.Tenants.Get(ctx, env.Tenant)
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			env.Clock.Set(start.Add(10 * time.Minute))
			rcv.down.Store(false)
			deadline := time.Now().Add(30 * time.Second)
			for rcv.unique() < want {
				if time.Now().After(deadline) {
					t.Fatalf("%d of %d events accepted after the restart", rcv.unique(), want)
				}
				// Only the clock moves: the dispatcher wakes at each due time.
				if p := pending(); len(p) > 0 && p[len(p)-1].NextAttemptAt.After(env.Clock.Now()) {
					env.Clock.Set(*p[len(p)-1].NextAttemptAt)
				}
				time.Sleep(10 * time.Millisecond)
			}
			rcv.mu.Lock()
			all := append([]message(nil), rcv.all...)
			accepted, types := rcv.accepted, rcv.types
			rcv.mu.Unlock()
			t.Logf("%d events, %d requests (%d refused while down), accepted %v, %s of injected clock",
				want, len(all), len(all)-len(accepted), types, env.Clock.Now().Sub(start).Round(time.Second))
			for msgID, n := range accepted {
				if n != 1 {
					t.Errorf("message %s accepted %d times", msgID, n)
				}
			}
			verify(t, secret, all)
			token, _ := env.Login(env.Host, admin.Email, admin.Password)
			log := apitest.Must(env.Client("", token).GetAdminWebhooksIDDeliveries(ctx, id,
				client.GetAdminWebhooksIDDeliveriesParams{State: client.Ptr("delivered")}))(t)
			if log.Meta.Total != want {
				t.Errorf("delivery log: %+v", log)
			}
		})
	}
}

// TestEndpointSwitchedOff: an endpoint down for the whole retry window is
// switched off with the reason, and its creator notified.
func TestEndpointSwitchedOff(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{NoDispatch: true,
		Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
	rcv := newReceiver(t)
	rcv.down.Store(true)
	ctx := t.Context()
	admin := env.As("admin")
	ac := env.UserClient(admin)
	id := apitest.Must(ac.PostAdminWebhooks(ctx, client.WebhookCreateInputBody{URL: rcv.srv.URL, Events: []string{"*"}}))(t).ID
	apitest.Must(ac.PostAdminCourses(ctx, client.CourseBody{Title: "C", Status: client.Ptr("draft")}))(t)
	for range 40 {
		env.DeliverEvents()
		env.Clock.Advance(events.MaxRetryDelay)
	}
	env.DeliverEvents()
	token, _ := env.Login(env.Host, admin.Email, admin.Password)
	fresh := env.Client("", token)
	if got := apitest.Must(fresh.GetAdminWebhooksID(ctx, id))(t); got.Enabled || !strings.Contains(got.DisabledReason, "503") {
		t.Fatalf("endpoint after the window: %+v", got)
	}
	if n := env.Count(t, `SELECT COUNT(*) FROM events WHERE name = $1 AND user_id = $2`, webhooks.Disabled, admin.ID); n != 1 {
		t.Errorf("%d %s events for the admin", n, webhooks.Disabled)
	}
	notes := apitest.Must(fresh.GetNotifications(ctx, client.GetNotificationsParams{PerPage: client.Ptr(int64(100))}))(t)
	if !slices.ContainsFunc(notes.Items, func(n client.Notification) bool { return n.Event == webhooks.Disabled }) {
		t.Errorf("the admin's notifications do not tell: %+v", notes.Items)
	}
	// Switched on again by an admin.
	on := apitest.Must(fresh.PatchAdminWebhooksID(ctx, id, client.WebhookPatchInputBody{Enabled: client.Ptr(true)}))(t)
	if !on.Enabled || on.DisabledReason != "" {
		t.Errorf("switched on: %+v", on)
	}
	apitest.OK(t, fresh.DeleteAdminWebhooksID(ctx, id))
	_, err := fresh.GetAdminWebhooksID(ctx, id)
	apitest.Refused(t, err, 404)
}
