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

// awaitTotal lists u's notifications with params until the total reaches
// want, for at most five seconds, and returns the last page.
func awaitTotal(t *testing.T, env *apitest.Env, u *apitest.User, params client.GetNotificationsParams, want int) *client.Page[client.Notification] {
	t.Helper()
	env.DeliverEvents()
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
		// The log orders by event, not by the notification's id: deliveries
		// of the three events may land in any order.
		if res.Items[1].Event != "Login" || res.Items[2].Event != "Login" {
			t.Errorf("list is not newest first: %+v", res.Items)
		}
		others := adminRes.Items[0].ID
		ctx := t.Context()
		sc := env.UserClient(student)
		list := func(c *client.Client, p client.GetNotificationsParams) *client.Page[client.Notification] {
			t.Helper()
			return apitest.Must(c.GetNotifications(ctx, p))(t)
		}
		total := func(name string, c *client.Client, p client.GetNotificationsParams, want int) {
			t.Helper()
			if got := list(c, p).Meta.Total; got != want {
				t.Errorf("%s: total %d, want %d", name, got, want)
			}
		}
		unread := client.GetNotificationsParams{Unread: client.Ptr(true)}

		_, err := env.ClientAs("anonymous").GetNotifications(ctx, client.GetNotificationsParams{})
		apitest.Refused(t, err, 401)
		_, err = env.Client("", env.As("other-admin").Token).GetNotifications(ctx, client.GetNotificationsParams{})
		apitest.Refused(t, err, 401) // a token of another tenant
		if p := list(sc, logins); p.Meta.Total != 2 || len(p.Items) != 2 || p.Items[0].Event != "Login" || p.Items[1].Event != "Login" {
			t.Errorf("filter by event: %+v", p)
		}
		second := list(sc, client.GetNotificationsParams{PerPage: client.Ptr(int64(2)), Page: client.Ptr(int64(2))})
		if second.Meta != (client.PageMeta{CurrentPage: 2, PerPage: 2, Total: 3, LastPage: 2}) || len(second.Items) != 1 ||
			second.Items[0].ID != oldest {
			t.Errorf("second page: %+v", second)
		}
		past := list(sc, client.GetNotificationsParams{PerPage: client.Ptr(int64(2)), Page: client.Ptr(int64(5))})
		if len(past.Items) != 0 || past.Meta.Total != 3 || past.Meta.LastPage != 2 {
			t.Errorf("page past the end: %+v", past)
		}
		total("unread before marking", sc, unread, 3)
		if names := apitest.Must(sc.GetNotificationsEvents(ctx))(t); len(names) != len(events.Catalog) || !slices.Contains(names, "Login") {
			t.Errorf("event names = %v, want the %d of the catalog", names, len(events.Catalog))
		}
		// Raw: the refusal's envelope.
		apitest.RunOne(t, env, apitest.Scenario{Name: "student cannot read another's", As: "student", Method: "POST",
			Path: fmt.Sprintf("/api/notifications/%d/read", others), Status: 403,
			JSON: map[string]any{"success": false, "message": "You cannot read another user's notification."}})
		_, err = sc.PostNotificationsIDRead(ctx, 999999)
		apitest.Refused(t, err, 404)
		marked := apitest.Must(sc.PostNotificationsIDRead(ctx, own))(t)
		if marked.ID != own || marked.Event != "Logout" || marked.ReadAt == nil {
			t.Errorf("mark own read: %+v", marked)
		}
		env.Clock.Advance(time.Second)
		if again := apitest.Must(sc.PostNotificationsIDRead(ctx, own))(t); again.ReadAt == nil || !again.ReadAt.Equal(*marked.ReadAt) {
			t.Errorf("marking again: read_at %v, want the first %v", again.ReadAt, marked.ReadAt)
		}
		total("unread after marking one", sc, unread, 2)
		if m := apitest.Must(sc.PostNotificationsReadAll(ctx))(t); m.Count != 2 {
			t.Errorf("mark all read: %d", m.Count)
		}
		if m := apitest.Must(sc.PostNotificationsReadAll(ctx))(t); m.Count != 0 {
			t.Errorf("mark all read again: %d", m.Count)
		}
		total("nothing unread", sc, unread, 0)
		total("the admin's own stay unread", env.UserClient(admin), client.GetNotificationsParams{Unread: client.Ptr(true),
			Event: client.Ptr(events.Login)}, 1)
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
		ctx := t.Context()
		ac := env.UserClient(admin)
		adminRoutes := map[string]func(*client.Client) error{
			"GET /api/admin/notifications": func(c *client.Client) error {
				_, err := c.GetAdminNotifications(ctx, client.GetAdminNotificationsParams{})
				return err
			},
			"GET /api/admin/notifications/all": func(c *client.Client) error {
				_, err := c.GetAdminNotificationsAll(ctx, client.GetAdminNotificationsAllParams{})
				return err
			},
			"GET /api/admin/notifications/events": func(c *client.Client) error {
				_, err := c.GetAdminNotificationsEvents(ctx)
				return err
			},
			"GET /api/admin/notifications/{user}": func(c *client.Client) error {
				_, err := c.GetAdminNotificationsID(ctx, student.ID, client.GetAdminNotificationsIDParams{})
				return err
			},
			"POST /api/admin/notifications/{id}/read": func(c *client.Client) error {
				_, err := c.PostAdminNotificationsIDRead(ctx, theirs)
				return err
			},
			"POST /api/admin/notifications/read-all": func(c *client.Client) error {
				_, err := c.PostAdminNotificationsReadAll(ctx)
				return err
			},
		}
		for _, who := range []string{"student", "tutor"} {
			for route, call := range adminRoutes {
				t.Run(who+" "+route, func(t *testing.T) {
					if e := apitest.Refused(t, call(env.ClientAs(who)), 403); e.Message != "This action is unauthorized." {
						t.Errorf("message %q", e.Message)
					}
				})
			}
		}

		for _, item := range apitest.Must(ac.GetAdminNotifications(ctx, client.GetAdminNotificationsParams{}))(t).Items {
			if item.UserID != admin.ID {
				t.Errorf("own list holds %+v", item)
			}
		}
		everyone := apitest.Must(ac.GetAdminNotificationsAll(ctx, client.GetAdminNotificationsAllParams{PerPage: client.Ptr(int64(100))}))(t)
		users := map[int64]bool{}
		for _, item := range everyone.Items {
			users[item.UserID] = true
		}
		if !users[admin.ID] || !users[student.ID] {
			t.Errorf("all lists users %v, want %d and %d", users, admin.ID, student.ID)
		}
		filtered := apitest.Must(ac.GetAdminNotificationsAll(ctx, client.GetAdminNotificationsAllParams{UserID: &student.ID,
			Event: client.Ptr("Logout")}))(t)
		if filtered.Meta.Total != 1 || filtered.Items[0].UserID != student.ID || filtered.Items[0].Event != "Logout" {
			t.Errorf("admin filters everyone's by user and event: %+v", filtered)
		}
		paged := apitest.Must(ac.GetAdminNotificationsAll(ctx, client.GetAdminNotificationsAllParams{UserID: &student.ID,
			PerPage: client.Ptr(int64(1)), Page: client.Ptr(int64(3))}))(t)
		if paged.Meta != (client.PageMeta{CurrentPage: 3, PerPage: 1, Total: 3, LastPage: 3}) {
			t.Errorf("admin pages everyone's: %+v", paged.Meta)
		}
		theirList := apitest.Must(ac.GetAdminNotificationsID(ctx, student.ID, client.GetAdminNotificationsIDParams{}))(t)
		if theirList.Meta.Total != 3 || theirList.Items[0].ID != theirs || theirList.Items[0].UserID != student.ID {
			t.Errorf("admin lists a user's: %+v", theirList)
		}
		if p := apitest.Must(ac.GetAdminNotificationsID(ctx, student.ID, client.GetAdminNotificationsIDParams{
			Event: client.Ptr(events.Login), Unread: client.Ptr(true)}))(t); p.Meta.Total != 2 {
			t.Errorf("admin lists a user's unread logins: %+v", p)
		}
		_, err := ac.GetAdminNotificationsID(ctx, 999999, client.GetAdminNotificationsIDParams{})
		apitest.Refused(t, err, 404)
		if names := apitest.Must(ac.GetAdminNotificationsEvents(ctx))(t); len(names) == 0 || names[0] != events.Catalog[0].Name {
			t.Errorf("admin event names: %v", names)
		}
		if n := apitest.Must(ac.PostAdminNotificationsIDRead(ctx, theirs))(t); n.ID != theirs || n.UserID != student.ID || n.ReadAt == nil {
			t.Errorf("admin marks a student's read: %+v", n)
		}
		_, err = ac.PostAdminNotificationsIDRead(ctx, 999999)
		apitest.Refused(t, err, 404)
		sc := env.UserClient(student)
		unread := client.GetNotificationsParams{Unread: client.Ptr(true)}
		if p := apitest.Must(sc.GetNotifications(ctx, unread))(t); p.Meta.Total != 2 {
			t.Errorf("the student sees it read: %+v", p.Meta)
		}
		if m := apitest.Must(ac.PostAdminNotificationsReadAll(ctx))(t); m.Count < 1 {
			t.Errorf("count = %d, want at least the admin's login", m.Count)
		}
		if p := apitest.Must(sc.GetNotifications(ctx, unread))(t); p.Meta.Total != 2 {
			t.Errorf("admin read-all leaves the student's: %+v", p.Meta)
		}
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
		// The student's login is delivered in the background and may land
		// between the page and its count, so it is left out of both.
		items, _, err := n.List(ctx, tenant, notify.Filter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var stored []notify.Notification
		for _, it := range items {
			if it.Event != events.Login {
				stored = append(stored, it)
			}
		}
		if len(stored) != 1 {
			t.Fatalf("stored %+v, want one CourseStarted", stored)
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
