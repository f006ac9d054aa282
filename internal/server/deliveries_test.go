package server_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lms-platform/lms/client"
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
		ctx, admin := t.Context(), env.As("admin")
		adminClient := env.UserClient(admin)
		course := apitest.Must(adminClient.PostAdminCourses(ctx, client.CourseBody{Title: "Course", Status: client.Ptr("draft")}))(t).ID
		apitest.Must(adminClient.PatchAdminCoursesID(ctx, course, client.CoursePatch{Status: client.Ptr("published")}))(t)
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
		token, _ := env.Login(env.Host, admin.Email, admin.Password)
		adminClient = env.Client("", token)
		deliveries := func(c *client.Client, p client.GetAdminDeliveriesParams) (*client.Page[client.Delivery], error) {
			return c.GetAdminDeliveries(ctx, p)
		}
		retryAll := func(c *client.Client, p client.PostAdminDeliveriesRetryParams) (*client.RetriedData, error) {
			return c.PostAdminDeliveriesRetry(ctx, p)
		}
		retry := func(c *client.Client, id int64) (*client.Delivery, error) {
			return c.PostAdminDeliveriesIDRetry(ctx, id)
		}
		refused := func(name string, err error, status int) {
			t.Helper()
			t.Run(name, func(t *testing.T) { apitest.Refused(t, err, status) })
		}
		list := apitest.Must(deliveries(adminClient, client.GetAdminDeliveriesParams{State: client.Ptr("failed"),
			Event: client.Ptr("CourseStatusChanged")}))(t)
		if list.Meta.Total != 2 || len(list.Items) != 2 {
			t.Fatalf("dead letters: %+v", list)
		}
		var refusedID int64
		for _, d := range list.Items {
			switch d.Listener {
			case "test_panics":
				if !strings.Contains(d.LastError, "panic") || d.Attempts < 10 {
					t.Errorf("panicking listener: %+v", d)
				}
			case "test_refuses":
				refusedID = d.ID
				if d.LastError != "the partner refused the scope" || d.Attempts != 1 {
					t.Errorf("permanent failure: %+v", d)
				}
			}
		}
		if h := apitest.Must(adminClient.GetHealth(ctx))(t); h.Deliveries == nil || h.Deliveries.Failed != 2 {
			t.Errorf("health for an admin: %+v", h)
		}
		learner := env.NewUser("student")
		if h := apitest.Must(env.UserClient(learner).GetHealth(ctx))(t); h.Deliveries != nil {
			t.Errorf("health tells a student about deliveries: %+v", h)
		}
		// Permissions.
		tutor := env.NewUser("tutor")
		for _, who := range []*apitest.User{learner, tutor} {
			c := env.UserClient(who)
			_, err := deliveries(c, client.GetAdminDeliveriesParams{})
			refused("list as "+who.Email, err, 403)
			_, err = retryAll(c, client.PostAdminDeliveriesRetryParams{})
			refused("bulk retry as "+who.Email, err, 403)
			_, err = retry(c, refusedID)
			refused("retry as "+who.Email, err, 403)
		}
		_, err := deliveries(env.ClientAs(""), client.GetAdminDeliveriesParams{})
		refused("list anonymously", err, 401)
		scoped := func(name string, scopes ...string) *client.Client {
			t.Helper()
			tok := apitest.Must(adminClient.PostAuthTokens(ctx, client.CreateInputBody{Name: name, Scopes: scopes}))(t).Token
			return env.Client("", tok)
		}
		reader := scoped("ops", "settings:read")
		apitest.Must(deliveries(reader, client.GetAdminDeliveriesParams{}))(t)
		_, err = retryAll(reader, client.PostAdminDeliveriesRetryParams{})
		refused("bulk retry with settings:read", err, 403)
		_, err = deliveries(scoped("courses", "courses:read"), client.GetAdminDeliveriesParams{})
		refused("list with courses:read", err, 403)

		// The fix, then the retries.
		broken.Store(false)
		_, err = retry(adminClient, 999999)
		refused("retry unknown", err, 404)
		if one := apitest.Must(retry(adminClient, refusedID))(t); one.State != "pending" {
			t.Errorf("retried: %+v", one)
		}
		env.DeliverEvents()
		if bulk := apitest.Must(retryAll(adminClient, client.PostAdminDeliveriesRetryParams{Listener: client.Ptr("test_panics")}))(t); bulk.Retried != 1 {
			t.Errorf("bulk retry: %+v", bulk)
		}
		env.DeliverEvents()
		if n := apitest.Must(deliveries(adminClient, client.GetAdminDeliveriesParams{State: client.Ptr("failed")}))(t).Meta.Total; n != 0 {
			t.Errorf("%d dead letters left after the retries", n)
		}
		done := apitest.Must(deliveries(adminClient, client.GetAdminDeliveriesParams{Listener: client.Ptr("test_refuses")}))(t)
		if len(done.Items) == 0 || done.Items[0].State != "delivered" || refusals.Load() != 2 {
			t.Errorf("after the retry: %+v, %d calls", done.Items, refusals.Load())
		}
		_, err = retry(adminClient, refusedID)
		refused("retry delivered", err, 409)
		if fine.Load() != 1 {
			t.Errorf("the healthy listener ran %d times", fine.Load())
		}
	})
}
