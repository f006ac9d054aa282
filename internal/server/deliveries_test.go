package server_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
)

// TestDeadLetterRetriedThroughAPI: a listener that panics, and one that
// fails for good, do not stop the others; their deliveries are dead
// letters (failed) listed with the error, counted by the health check for
// admins; after the fix an admin's retry, one by id and the rest in bulk,
// delivers them, once. Only admins, or a token with settings scopes, may
// see and retry deliveries.
func TestDeadLetterRetriedThroughAPI(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		var broken atomic.Bool
		broken.Store(true)
		var panics, refusals, fine atomic.Int32
		env.Server.Dispatcher.Listen("test_panics", func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
			if ev.Name != events.CourseStatusChanged {
				return nil
			}
			panics.Add(1)
			if broken.Load() {
				var m map[string]int
				//lint:ignore SA5000 the listener panics on purpose while broken is set.
				m["x"] = 1
			}
			return nil
		})
		env.Server.Dispatcher.Listen("test_refuses", func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
			if ev.Name != events.CourseStatusChanged {
				return nil
			}
			refusals.Add(1)
			if broken.Load() {
				return events.Permanent(errors.New("the partner refused the scope"))
			}
			return nil
		})
		env.Server.Dispatcher.Listen("test_fine", func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
			if ev.Name == events.CourseStatusChanged {
				fine.Add(1)
			}
			return nil
		})
		admin := env.As("admin")
		course := env.Call(t, 201, "POST", "/api/admin/courses", admin.Token,
			map[string]any{"title": "Course", "status": "draft"}).Number("data.id")
		env.Call(t, 200, "PATCH", "/api/admin/courses/"+strconv.Itoa(int(course)), admin.Token,
			map[string]any{"status": "published"})
		env.DeliverEvents()
		if fine.Load() != 1 {
			t.Fatalf("the healthy listener ran %d times, want 1 at the first try", fine.Load())
		}
		// The panic is retried with backoff until the window ends: move
		// the clock past it.
		for range 40 {
			env.Clock.Advance(events.MaxRetryDelay)
			env.DeliverEvents()
		}
		admin.Token, _ = env.Login(env.Host, admin.Email, admin.Password)
		list := env.Call(t, 200, "GET", "/api/admin/deliveries?state=failed&event=CourseStatusChanged", admin.Token, nil)
		if list.Number("meta.total") != 2 {
			t.Fatalf("dead letters: %s", list.Body)
		}
		var refusedID float64
		for i := range 2 {
			p := "data." + strconv.Itoa(i) + "."
			switch list.String(p + "listener") {
			case "test_panics":
				if !strings.Contains(list.String(p+"last_error"), "panic") || list.Number(p+"attempts") < 10 {
					t.Errorf("panicking listener: %s", list.Body)
				}
			case "test_refuses":
				refusedID = list.Number(p + "id")
				if list.String(p+"last_error") != "the partner refused the scope" || list.Number(p+"attempts") != 1 {
					t.Errorf("permanent failure: %s", list.Body)
				}
			}
		}
		health := env.Call(t, 200, "GET", "/api/health", admin.Token, nil)
		if health.Number("data.deliveries.failed") != 2 {
			t.Errorf("health for an admin: %s", health.Body)
		}
		learner := env.NewUser("student")
		if h := env.Call(t, 200, "GET", "/api/health", learner.Token, nil); h.Get("data.deliveries") != nil {
			t.Errorf("health tells a student about deliveries: %s", h.Body)
		}
		// Permissions.
		tutor := env.NewUser("tutor")
		for _, who := range []*apitest.User{learner, tutor} {
			env.Call(t, 403, "GET", "/api/admin/deliveries", who.Token, nil)
			env.Call(t, 403, "POST", "/api/admin/deliveries/retry", who.Token, map[string]any{})
			env.Call(t, 403, "POST", "/api/admin/deliveries/"+strconv.Itoa(int(refusedID))+"/retry", who.Token, nil)
		}
		env.Call(t, 401, "GET", "/api/admin/deliveries", "", nil)
		reader := env.Call(t, 201, "POST", "/api/auth/tokens", admin.Token,
			map[string]any{"name": "ops", "scopes": []string{"settings:read"}}).String("data.token")
		env.Call(t, 200, "GET", "/api/admin/deliveries", reader, nil)
		env.Call(t, 403, "POST", "/api/admin/deliveries/retry", reader, map[string]any{})
		other := env.Call(t, 201, "POST", "/api/auth/tokens", admin.Token,
			map[string]any{"name": "courses", "scopes": []string{"courses:read"}}).String("data.token")
		env.Call(t, 403, "GET", "/api/admin/deliveries", other, nil)

		// The fix, then the retries.
		broken.Store(false)
		env.Call(t, 404, "POST", "/api/admin/deliveries/999999/retry", admin.Token, nil)
		one := env.Call(t, 200, "POST", "/api/admin/deliveries/"+strconv.Itoa(int(refusedID))+"/retry", admin.Token, nil)
		if one.String("data.state") != "pending" {
			t.Errorf("retried: %s", one.Body)
		}
		env.DeliverEvents()
		bulk := env.Call(t, 200, "POST", "/api/admin/deliveries/retry?listener=test_panics", admin.Token, map[string]any{})
		if bulk.Number("data.retried") != 1 {
			t.Errorf("bulk retry: %s", bulk.Body)
		}
		env.DeliverEvents()
		if n := env.Call(t, 200, "GET", "/api/admin/deliveries?state=failed", admin.Token, nil).Number("meta.total"); n != 0 {
			t.Errorf("%v dead letters left after the retries", n)
		}
		done := env.Call(t, 200, "GET", "/api/admin/deliveries?listener=test_refuses", admin.Token, nil)
		if done.String("data.0.state") != "delivered" || refusals.Load() != 2 {
			t.Errorf("after the retry: %s, %d calls", done.Body, refusals.Load())
		}
		env.Call(t, 409, "POST", "/api/admin/deliveries/"+strconv.Itoa(int(refusedID))+"/retry", admin.Token, nil)
		if fine.Load() != 1 {
			t.Errorf("the healthy listener ran %d times", fine.Load())
		}
	})
}
