package learning_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
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
		patch(t, env, 200, u, c, 2, topics[0][0])
		patch(t, env, 200, done, c, 1, topics[0][0], topics[0][1])
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
		patch(t, env, 200, late, c, 2, topics[0][0])
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
		call(t, env, 403, "GET", "/api/courses/"+id(waiting)+"/program", u, nil)
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
		call(t, env, 200, "GET", "/api/courses/"+id(waiting)+"/program", u, nil)
		env.Clock.Advance(25 * time.Hour)
		if got := tick(t, env); len(got) != 0 {
			t.Errorf("second day: %v", got)
		}
	})
}
