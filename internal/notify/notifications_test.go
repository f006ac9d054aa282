package notify_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/notify"
)

// deliver runs the tenant's pending events through the listeners now, so
// tests need not wait for the background dispatcher.
func deliver(t *testing.T, env *apitest.Env) {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	if _, err := env.Server.Dispatcher.DispatchPending(context.Background(), tenant); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
}

// awaitTotal lists u's notifications with params until the total reaches
// want, for at most five seconds, and returns the last page.
func awaitTotal(t *testing.T, env *apitest.Env, u *apitest.User, params client.GetNotificationsParams, want int) *client.Page[client.Notification] {
	t.Helper()
	deliver(t, env)
	c := env.UserClient(u)
	deadline := time.Now().Add(5 * time.Second)
	for {
		page := apitest.Must(c.GetNotifications(t.Context(), params))(t)
		if page.Meta.Total >= want || time.Now().After(deadline) {
			if got := page.Meta.Total; got != want {
				t.Fatalf("notifications %+v: total %d, want %d; %+v", params, got, want, page.Items)
			}
			return page
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logins selects the Login notifications.
var logins = client.GetNotificationsParams{Event: client.Ptr(events.Login)}

// logInAndOut makes u record one more Login and one Logout, with a second
// token so that u's own token stays valid.
func logInAndOut(t *testing.T, env *apitest.Env, u *apitest.User) {
	t.Helper()
	token, _ := env.Login(env.Host, u.Email, u.Password)
	apitest.OK(t, env.Client("", token).PostAuthLogout(t.Context()))
}

func TestNotificationLog(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		student, admin := env.As("student"), env.As("admin")
		logInAndOut(t, env, student)
		// The student has logged in twice and out once.
		res := awaitTotal(t, env, student, client.GetNotificationsParams{}, 3)
		adminRes := awaitTotal(t, env, admin, logins, 1)

		newest := res.Items[0]
		if newest.Event != "Logout" || newest.ReadAt != nil || newest.UserID != student.ID {
			t.Errorf("newest notification = %+v, want an unread Logout of user %d", newest, student.ID)
		}
		if newest.Data == nil {
			t.Errorf("data = %#v, want an object", newest.Data)
		}
		if newest.CreatedAt.IsZero() {
			t.Errorf("created_at missing: %+v", newest)
		}
		own := newest.ID
		oldest := res.Items[2].ID
		if res.Items[2].Event != "Login" || oldest >= own {
			t.Errorf("list is not newest first: %+v", res.Items)
		}
		others := adminRes.Items[0].ID
		read := fmt.Sprintf("/api/notifications/%d/read", own)

		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous cannot list", Method: "GET", Path: "/api/notifications", Status: 401},
			{Name: "token of another tenant is refused", As: "other-admin", Method: "GET", Path: "/api/notifications",
				Status: 401},
			{Name: "filter by event", As: "student", Method: "GET", Path: "/api/notifications?event=Login", Status: 200,
				JSON: map[string]any{"meta.total": 2, "data.0.event": "Login", "data.1.event": "Login"}},
			{Name: "second page", As: "student", Method: "GET", Path: "/api/notifications?per_page=2&page=2", Status: 200,
				JSON: map[string]any{"meta": map[string]any{"current_page": 2, "per_page": 2, "total": 3, "last_page": 2},
					"data.0.id": oldest},
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) {
					if n := len(res.Get("data").([]any)); n != 1 {
						t.Errorf("page holds %d items, want 1", n)
					}
				}},
			{Name: "page past the end is empty", As: "student", Method: "GET", Path: "/api/notifications?per_page=2&page=5",
				Status: 200, JSON: map[string]any{"data": []any{}, "meta.total": 3, "meta.last_page": 2}},
			{Name: "unread before marking", As: "student", Method: "GET", Path: "/api/notifications?unread=true",
				Status: 200, JSON: map[string]any{"meta.total": 3}},
			{Name: "event names", As: "student", Method: "GET", Path: "/api/notifications/events", Status: 200,
				Check: func(t *testing.T, _ *apitest.Env, res *apitest.Response) {
					names := res.Get("data").([]any)
					if len(names) != len(events.Catalog) || !slices.Contains(names, any("Login")) {
						t.Errorf("event names = %v, want the %d of the catalog", names, len(events.Catalog))
					}
				}},
			{Name: "student cannot read another's", As: "student", Method: "POST",
				Path: fmt.Sprintf("/api/notifications/%d/read", others), Status: 403,
				JSON: map[string]any{"success": false, "message": "You cannot read another user's notification."}},
			{Name: "unknown notification", As: "student", Method: "POST", Path: "/api/notifications/999999/read", Status: 404},
			{Name: "mark own read", As: "student", Method: "POST", Path: read, Status: 200,
				JSON: map[string]any{"data.id": own, "data.event": "Logout", "data.read_at": apitest.Present}},
			{Name: "marking again keeps the first time", As: "student", Method: "POST", Path: read, Status: 200,
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					first := res.String("data.read_at")
					env.Clock.Advance(time.Second)
					again, err := env.ClientAs("student").PostNotificationsIDRead(t.Context(), own)
					at, _ := time.Parse(time.RFC3339Nano, first)
					if err != nil || again.ReadAt == nil || !again.ReadAt.Equal(at) {
						t.Errorf("second read: %+v %v, want read_at %q", again, err, first)
					}
				}},
			{Name: "unread after marking one", As: "student", Method: "GET", Path: "/api/notifications?unread=true",
				Status: 200, JSON: map[string]any{"meta.total": 2}},
			{Name: "mark all read", As: "student", Method: "POST", Path: "/api/notifications/read-all", Status: 200,
				JSON: map[string]any{"data.count": 2}},
			{Name: "mark all read again", As: "student", Method: "POST", Path: "/api/notifications/read-all", Status: 200,
				JSON: map[string]any{"data.count": 0}},
			{Name: "nothing unread", As: "student", Method: "GET", Path: "/api/notifications?unread=true", Status: 200,
				JSON: map[string]any{"meta.total": 0}},
			{Name: "the admin's own stay unread", As: "admin", Method: "GET", Path: "/api/notifications?unread=true&event=Login",
				Status: 200, JSON: map[string]any{"meta.total": 1}},
		})
	})
}

func TestAdminNotifications(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		student, admin := env.As("student"), env.As("admin")
		env.As("tutor")
		logInAndOut(t, env, student)
		studentRes := awaitTotal(t, env, student, client.GetNotificationsParams{}, 3)
		awaitTotal(t, env, admin, logins, 1)
		theirs := studentRes.Items[0].ID
		studentPath := fmt.Sprintf("/api/admin/notifications/%d", student.ID)

		var scenarios []apitest.Scenario
		for _, who := range []string{"student", "tutor"} {
			for _, r := range []struct{ method, path string }{
				{"GET", "/api/admin/notifications"},
				{"GET", "/api/admin/notifications/all"},
				{"GET", "/api/admin/notifications/events"},
				{"GET", studentPath},
				{"POST", fmt.Sprintf("/api/admin/notifications/%d/read", theirs)},
				{"POST", "/api/admin/notifications/read-all"},
			} {
				scenarios = append(scenarios, apitest.Scenario{Name: who + " " + r.method + " " + r.path, As: who,
					Method: r.method, Path: r.path, Status: 403,
					JSON: map[string]any{"message": "This action is unauthorized."}})
			}
		}
		scenarios = append(scenarios, []apitest.Scenario{
			{Name: "admin lists own", As: "admin", Method: "GET", Path: "/api/admin/notifications", Status: 200,
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					for _, item := range res.Get("data").([]any) {
						if item.(map[string]any)["user_id"] != float64(admin.ID) {
							t.Errorf("own list holds %v", item)
						}
					}
				}},
			{Name: "admin lists everyone's", As: "admin", Method: "GET", Path: "/api/admin/notifications/all?per_page=100",
				Status: 200, Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					users := map[float64]bool{}
					for _, item := range res.Get("data").([]any) {
						users[item.(map[string]any)["user_id"].(float64)] = true
					}
					if !users[float64(admin.ID)] || !users[float64(student.ID)] {
						t.Errorf("all lists users %v, want %d and %d", users, admin.ID, student.ID)
					}
				}},
			{Name: "admin filters everyone's by user and event", As: "admin", Method: "GET",
				Path: fmt.Sprintf("/api/admin/notifications/all?user_id=%d&event=Logout", student.ID), Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.user_id": student.ID, "data.0.event": "Logout"}},
			{Name: "admin pages everyone's", As: "admin", Method: "GET",
				Path: fmt.Sprintf("/api/admin/notifications/all?user_id=%d&per_page=1&page=3", student.ID), Status: 200,
				JSON: map[string]any{"meta": map[string]any{"current_page": 3, "per_page": 1, "total": 3, "last_page": 3}}},
			{Name: "admin lists a user's", As: "admin", Method: "GET", Path: studentPath, Status: 200,
				JSON: map[string]any{"meta.total": 3, "data.0.id": theirs, "data.0.user_id": student.ID}},
			{Name: "admin lists a user's unread logins", As: "admin", Method: "GET",
				Path: studentPath + "?event=Login&unread=true", Status: 200, JSON: map[string]any{"meta.total": 2}},
			{Name: "unknown user", As: "admin", Method: "GET", Path: "/api/admin/notifications/999999", Status: 404},
			{Name: "admin event names", As: "admin", Method: "GET", Path: "/api/admin/notifications/events", Status: 200,
				JSON: map[string]any{"data.0": events.Catalog[0].Name}},
			{Name: "admin marks a student's read", As: "admin", Method: "POST",
				Path: fmt.Sprintf("/api/admin/notifications/%d/read", theirs), Status: 200,
				JSON: map[string]any{"data.id": theirs, "data.user_id": student.ID, "data.read_at": apitest.Present}},
			{Name: "admin route cannot mark an unknown one", As: "admin", Method: "POST",
				Path: "/api/admin/notifications/999999/read", Status: 404},
			{Name: "the student sees it read", As: "student", Method: "GET", Path: "/api/notifications?unread=true",
				Status: 200, JSON: map[string]any{"meta.total": 2}},
			{Name: "admin marks all own read", As: "admin", Method: "POST", Path: "/api/admin/notifications/read-all",
				Status: 200, Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					if res.Number("data.count") < 1 {
						t.Errorf("count = %v, want at least the admin's login", res.Get("data.count"))
					}
				}},
			{Name: "admin read-all leaves the student's", As: "student", Method: "GET", Path: "/api/notifications?unread=true",
				Status: 200, JSON: map[string]any{"meta.total": 2}},
		}...)
		apitest.Run(t, env, scenarios)
	})
}

func TestExcludedEventsAreNotStored(t *testing.T) {
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) {
				c.NotifyExclude = []string{events.Login}
			}})
			student := env.As("student")
			logInAndOut(t, env, student)
			res := awaitTotal(t, env, student, client.GetNotificationsParams{}, 1)
			if res.Items[0].Event != "Logout" {
				t.Errorf("stored %+v, want only the Logout", res.Items)
			}
			list := apitest.Must(env.UserClient(student).GetNotificationsEvents(t.Context()))(t)
			if slices.Contains(list, "Login") || !slices.Contains(list, "Logout") ||
				len(list) != len(events.Catalog)-1 {
				t.Errorf("event names %v, want the catalog without Login", list)
			}
		})
	}
}

func TestListener(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		student := env.As("student")
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		ctx := context.Background()
		n := &notify.Notifications{Clock: env.Clock, UserExists: accounts.Exists}
		ev := events.Stored{ID: 1_000_001, Name: events.CourseStarted, UserID: student.ID,
			Payload: map[string]any{"course_id": 7, "title": "Go"}, CreatedAt: env.Clock.Now()}
		for range 2 {
			if err := n.Listener(ctx, tenant, ev); err != nil {
				t.Fatalf("listener: %v", err)
			}
		}
		// Neither an event without a user nor one of a deleted user is stored.
		for _, other := range []events.Stored{
			{ID: 1_000_002, Name: events.CoursedPublished, Payload: map[string]any{}},
			{ID: 1_000_003, Name: events.AccountDeleted, UserID: 999_999},
		} {
			if err := n.Listener(ctx, tenant, other); err != nil {
				t.Fatalf("listener %s: %v", other.Name, err)
			}
		}
		items, total, err := n.List(ctx, tenant, notify.Filter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var stored []notify.Notification
		for _, it := range items {
			if it.Event != events.Login {
				stored = append(stored, it)
			}
		}
		if len(stored) != 1 || total != int64(len(items)) {
			t.Fatalf("stored %+v (total %d), want one CourseStarted", stored, total)
		}
		got := stored[0]
		if got.Event != events.CourseStarted || got.UserID != student.ID || got.ReadAt != nil ||
			got.Data["course_id"] != float64(7) || got.Data["title"] != "Go" {
			t.Errorf("stored %+v", got)
		}
		// PostgreSQL keeps microseconds, SQLite the whole time.
		if got.CreatedAt.Sub(env.Clock.Now()).Abs() >= time.Microsecond {
			t.Errorf("created_at %v, want the clock's %v", got.CreatedAt, env.Clock.Now())
		}
	})
}
