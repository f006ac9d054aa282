package learning_test

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/jobs"
)

// tick runs the server's scheduler at the fake clock's time and returns
// the events it recorded in the default tenant.
func tick(t *testing.T, env *apitest.Env) []string {
	t.Helper()
	return eventsOf(env, func() {
		if err := env.Server.Jobs.Tick(context.Background(), env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDeadlineReminder(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		// Deadlines 100 hours after the start; reminders 3 days (72 hours)
		// ahead by default.
		c, _, topics := grid(t, env, courseRow{Public: true, Hours: hours(100)}, 1, 2)
		u := env.NewUser("student")
		done := env.NewUser("student")
		patch(t, env, u, c, 2, topics[0][0])
		patch(t, env, done, c, 1, topics[0][0], topics[0][1])
		if got := tick(t, env); len(got) != 0 {
			t.Errorf("100 hours ahead: %v", got)
		}
		env.Clock.Advance(27 * time.Hour)
		if got := tick(t, env); len(got) != 0 {
			t.Errorf("73 hours ahead: %v", got)
		}
		env.Clock.Advance(2 * time.Hour)
		if got := tick(t, env); !slices.Equal(got, []string{"CourseDeadlineSoon"}) {
			t.Errorf("71 hours ahead: %v, want one reminder (finished learners get none)", got)
		}
		if n := count(t, env, `SELECT COUNT(*) FROM events WHERE name = 'CourseDeadlineSoon' AND user_id = $1`, u.ID); n != 1 {
			t.Errorf("reminder not addressed to the learner")
		}
		for range 3 {
			env.Clock.Advance(time.Hour)
			if got := tick(t, env); len(got) != 0 {
				t.Errorf("reminded again: %v", got)
			}
		}

		// The setting moves the horizon.
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		if err := env.Server.Settings.Update(context.Background(), tenant,
			map[string]any{"lms_courses.reminder_of_deadline_count_days": 5.0}); err != nil {
			t.Fatal(err)
		}
		late := env.NewUser("student") // a fresh login: the others' tokens expired
		patch(t, env, late, c, 2, topics[0][0])
		env.Clock.Advance(time.Hour)
		if got := tick(t, env); !slices.Equal(got, []string{"CourseDeadlineSoon"}) {
			t.Errorf("5-day horizon, 99 hours ahead: %v", got)
		}
	})
}

func TestCourseActivation(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		now := env.Clock.Now()
		waiting, _, _ := grid(t, env, courseRow{Status: "published_unactivated", ActiveFrom: at(now.Add(time.Hour))}, 1, 1)
		noDate, _, _ := grid(t, env, courseRow{Status: "published_unactivated"}, 1, 1)
		draft, _, _ := grid(t, env, courseRow{Status: "draft", ActiveFrom: at(now.Add(-time.Hour))}, 1, 1)
		u := env.NewUser("student")
		assign(t, env, waiting, u.ID, nil)
		if got := tick(t, env); len(got) != 0 {
			t.Errorf("before active_from: %v", got)
		}
		_, err := env.UserClient(u).GetCoursesIDProgram(t.Context(), waiting)
		apitest.Refused(t, err, 403)
		env.Clock.Advance(25 * time.Hour)
		if got := tick(t, env); !slices.Equal(got, []string{"CourseStatusChanged", "CoursedPublished"}) {
			t.Errorf("activation: %v", got)
		}
		status := func(c int64) string {
			tenant, release := env.OpenTenant(env.Tenant)
			defer release()
			var s string
			tenant.DB.QueryRowContext(context.Background(), `SELECT status FROM courses WHERE id = $1`, c).Scan(&s)
			return s
		}
		if status(waiting) != "published" || status(noDate) != "published_unactivated" || status(draft) != "draft" {
			t.Errorf("statuses %s %s %s", status(waiting), status(noDate), status(draft))
		}
		advance(env, 0, u)
		apitest.Must(env.UserClient(u).GetCoursesIDProgram(t.Context(), waiting))(t)
		env.Clock.Advance(25 * time.Hour)
		if got := tick(t, env); len(got) != 0 {
			t.Errorf("second day: %v", got)
		}
	})
}

func join(t testing.TB, env *apitest.Env, groupID int64, users ...*apitest.User) {
	t.Helper()
	for _, u := range users {
		exec(t, env, `INSERT INTO user_group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)`,
			groupID, u.ID, env.Clock.Now())
	}
}

// loss is one CourseAccessFinished event: who lost access to which
// course, and why.
type loss struct {
	User, Course int64
	Reason       string
}

// losses lists the CourseAccessFinished events after the event id, by
// course, then user.
func losses(t *testing.T, env *apitest.Env, after int64) []loss {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	rows, err := tenant.DB.QueryContext(context.Background(), `SELECT user_id, payload FROM events
		WHERE name = 'CourseAccessFinished' AND id > $1 ORDER BY id`, after)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := []loss{}
	for rows.Next() {
		var l loss
		var raw string
		if err := rows.Scan(&l.User, &raw); err != nil {
			t.Fatal(err)
		}
		var payload struct {
			CourseID int64  `json:"course_id"`
			Reason   string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(raw), &payload); err != nil {
			t.Fatalf("payload %s: %v", raw, err)
		}
		l.Course, l.Reason = payload.CourseID, payload.Reason
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// expiryTick runs the scheduler and returns the access losses it
// recorded; every event it recorded must be one.
func expiryTick(t *testing.T, env *apitest.Env) []loss {
	t.Helper()
	before := env.LastEventID()
	names := tick(t, env)
	got := losses(t, env, before)
	if len(names) != len(got) {
		t.Errorf("events %v, want only CourseAccessFinished", names)
	}
	return got
}

func expired(courseID int64, users ...*apitest.User) []loss {
	out := []loss{}
	for _, u := range users {
		out = append(out, loss{User: u.ID, Course: courseID, Reason: "expired"})
	}
	slices.SortFunc(out, func(a, b loss) int { return cmp.Compare(a.User, b.User) })
	return out
}

// grant assigns the user to the course through the API, as an admin
// does, so that courses records the access it then takes away.
func grant(t testing.TB, env *apitest.Env, courseID, userID int64, end *time.Time) {
	t.Helper()
	apitest.Must(env.ClientAs("admin").PostAdminCoursesIDAccess(t.Context(), courseID,
		client.AssignInputBody{Users: []client.GrantBody{{ID: userID, EndDate: end}}}))(t)
}

// grantGroup assigns the group to the course through the API.
func grantGroup(t testing.TB, env *apitest.Env, courseID, groupID int64, end *time.Time) {
	t.Helper()
	apitest.Must(env.ClientAs("admin").PostAdminCoursesIDAccess(t.Context(), courseID,
		client.AssignInputBody{Groups: []client.GrantBody{{ID: groupID, EndDate: end}}}))(t)
}

func TestAccessExpiry(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		now := env.Clock.Now()
		end := at(now.Add(30 * time.Minute))
		c, _, _ := grid(t, env, courseRow{}, 1, 1)
		other, _, _ := grid(t, env, courseRow{}, 1, 1)

		// Losers: a direct assignment ends; the root group's assignment
		// ends, for its members and those of its subgroups; the direct
		// learner is in the root group as well and loses access once.
		direct := env.NewUser("student")
		grant(t, env, c, direct.ID, end)
		root := addGroup(t, env, 0)
		child := addGroup(t, env, root)
		grandchild := addGroup(t, env, child)
		inRoot, inChild, inGrandchild := env.NewUser("student"), env.NewUser("student"), env.NewUser("student")
		join(t, env, root, inRoot, direct)
		join(t, env, child, inChild)
		join(t, env, grandchild, inGrandchild)
		grantGroup(t, env, c, root, end)
		// Access to another course keeps no access to this one.
		elsewhere := env.NewUser("student")
		grant(t, env, c, elsewhere.ID, end)
		grant(t, env, other, elsewhere.ID, nil)

		// Keepers: assigned directly for good while in the ended group;
		// a direct assignment ends but another group's does not; a
		// direct assignment ends but a group's ends later.
		alsoDirect := env.NewUser("student")
		join(t, env, child, alsoDirect)
		grant(t, env, c, alsoDirect.ID, nil)
		viaGroup := env.NewUser("student")
		grant(t, env, c, viaGroup.ID, end)
		lasting := addGroup(t, env, 0)
		join(t, env, addGroup(t, env, lasting), viaGroup)
		grantGroup(t, env, c, lasting, nil)
		later := env.NewUser("student")
		grant(t, env, c, later.ID, end)
		lateGroup := addGroup(t, env, 0)
		join(t, env, lateGroup, later)
		grantGroup(t, env, c, lateGroup, at(now.Add(3*time.Hour)))

		if got := expiryTick(t, env); len(got) != 0 {
			t.Errorf("before the end: %v", got)
		}
		env.Clock.Advance(time.Hour)
		want := expired(c, direct, inRoot, inChild, inGrandchild, elsewhere)
		if got := expiryTick(t, env); !slices.Equal(got, want) {
			t.Errorf("after the end: %v, want %v", got, want)
		}
		env.Clock.Advance(time.Hour)
		if got := expiryTick(t, env); len(got) != 0 {
			t.Errorf("an hour later: %v", got)
		}
		// The later group's end takes the last of later's access.
		env.Clock.Advance(2 * time.Hour)
		if got, want := expiryTick(t, env), expired(c, later); !slices.Equal(got, want) {
			t.Errorf("after the later end: %v, want %v", got, want)
		}
	})
}

func TestAccessExpiryWindow(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		now := env.Clock.Now()
		c, _, _ := grid(t, env, courseRow{}, 1, 1)
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		run := func() []loss {
			t.Helper()
			before := env.LastEventID()
			if err := env.Server.Courses.ExpireAccess(ctx, tenant, env.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			return losses(t, env, before)
		}
		// The first run looks back one period: an end two hours ago is
		// older news.
		// The assignments are made now, while their ends are ahead.
		old, recent, missed := env.NewUser("student"), env.NewUser("student"), env.NewUser("student")
		grant(t, env, c, old.ID, at(now.Add(time.Hour)))
		grant(t, env, c, recent.ID, at(now.Add(150*time.Minute)))
		grant(t, env, c, missed.ID, at(now.Add(270*time.Minute)))
		env.Clock.Advance(3 * time.Hour)
		now = env.Clock.Now()
		if got, want := run(), expired(c, recent); !slices.Equal(got, want) {
			t.Errorf("first run: %v, want %v", got, want)
		}
		// The run recorded itself with its events, so running again for
		// the same window, as after the scheduler failed to record it,
		// emits nothing, and the scheduler finds it done.
		if got := run(); len(got) != 0 {
			t.Errorf("second run of the window: %v", got)
		}
		last, err := jobs.LastRun(ctx, tenant.DB, courses.AccessExpiryJob)
		if err != nil || last == nil || last.Sub(now).Abs() > time.Microsecond {
			t.Errorf("last run %v (%v), want %s", last, err, now)
		}
		if got := expiryTick(t, env); len(got) != 0 {
			t.Errorf("tick after the run: %v", got)
		}

		// After the scheduler missed runs, the window reaches back to the
		// last one.
		env.Clock.Advance(3 * time.Hour)
		if got, want := expiryTick(t, env), expired(c, missed); !slices.Equal(got, want) {
			t.Errorf("after missed runs: %v, want %v", got, want)
		}
		if got := expiryTick(t, env); len(got) != 0 {
			t.Errorf("tick again: %v", got)
		}
	})
}
