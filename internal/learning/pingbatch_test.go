package learning_test

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/learning"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Many learners pinging at once (batches of many learners on PostgreSQL)
// each get exactly their own wall time.
func TestPingsOfManyLearnersAddUp(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		_, _, topics := grid(t, env, courseRow{Public: true}, 1, 1)
		topic := topics[0][0]
		const learners, rounds = 40, 3
		var users []*apitest.User
		for range learners {
			u := env.NewUser("student")
			apitest.Must(env.UserClient(u).PutCoursesProgressIDPing(t.Context(), topic))(t)
			users = append(users, u)
		}
		for range rounds {
			env.Clock.Advance(30 * time.Second)
			var wg sync.WaitGroup
			for _, u := range users {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, err := env.UserClient(u).PutCoursesProgressIDPing(t.Context(), topic)
					if err != nil {
						t.Errorf("ping: %v", err)
					} else if res.Status != 2 {
						t.Errorf("ping answered status %d", res.Status)
					}
				}()
			}
			wg.Wait()
		}
		for _, u := range users {
			if n := count(t, env, `SELECT seconds FROM topic_progress WHERE user_id = $1`, u.ID); n != rounds*30 {
				t.Errorf("learner %d: %d seconds, want %d", u.ID, n, rounds*30)
			}
		}
	})
}

// A batch applies the pings of learners who started the course, and
// starts the course of those who had not, with its event, unless their
// deadline would have passed already: that ping is left to its caller,
// which refuses it. A batch whose statement fails writes nothing and
// leaves every ping to its caller, so that only the failing ping fails.
// (SQLite has no batch statement, as its transactions are batched anyway:
// there a batch always fails and leaves every ping to its caller.)
func TestPingBatchLeavesPingsToTheCaller(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		postgres := tenant.DB.Dialect == sqldb.Postgres
		c, _, topics := grid(t, env, courseRow{Public: true}, 1, 1)
		topic := topics[0][0]
		started, other, fresh := env.NewUser("student"), env.NewUser("student"), env.NewUser("student")
		for _, u := range []*apitest.User{started, other} {
			apitest.Must(env.UserClient(u).PutCoursesProgressIDPing(t.Context(), topic))(t)
		}
		seconds := func(u *apitest.User) int {
			return count(t, env, `SELECT COALESCE(SUM(seconds), 0) FROM topic_progress WHERE user_id = $1`, u.ID)
		}
		at := func() time.Time { return env.Clock.Now().UTC().Truncate(time.Microsecond) }

		env.Clock.Advance(20 * time.Second)
		applied := learning.PingTogether(tenant.DB, at(), nil, [][3]int64{{started.ID, c, topic}, {fresh.ID, c, topic}})
		wrote := 0
		if postgres {
			wrote = 1
		}
		if applied[1] != postgres {
			t.Errorf("the ping of a learner who had not started the course applied: %v, want %v", applied[1], postgres)
		}
		for what, query := range map[string]string{
			"progress rows": `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1`,
			"course starts": `SELECT COUNT(*) FROM course_progress WHERE user_id = $1 AND started_at IS NOT NULL AND deadline IS NULL`,
			"start events":  `SELECT COUNT(*) FROM events WHERE name = 'CourseStarted' AND user_id = $1`,
		} {
			if n := count(t, env, query, fresh.ID); n != wrote {
				t.Errorf("the batch wrote %d %s of the learner who had not started, want %d", n, what, wrote)
			}
		}
		late := env.NewUser("student")
		passed := at().Add(-time.Hour)
		if learning.PingTogether(tenant.DB, at(), &passed, [][3]int64{{late.ID, c, topic}})[0] {
			t.Error("the ping of a learner whose deadline would have passed at the start was applied")
		}
		if n := count(t, env, `SELECT COUNT(*) FROM course_progress WHERE user_id = $1`, late.ID); n != 0 {
			t.Errorf("the batch started the course of a learner whose deadline passed (%d rows)", n)
		}
		if applied[0] != postgres {
			t.Errorf("started learner's ping applied: %v, want %v", applied[0], postgres)
		}
		before := seconds(started)
		if postgres && before != 20 {
			t.Errorf("started learner: %d seconds, want 20", before)
		}

		env.Clock.Advance(10 * time.Second)
		applied = learning.PingTogether(tenant.DB, at(), nil, [][3]int64{{started.ID, c, topic}, {other.ID, c, topic + 1000}})
		if applied[0] || applied[1] {
			t.Errorf("a failed batch applied pings: %v", applied)
		}
		if n := seconds(started); n != before {
			t.Errorf("a failed batch changed the seconds from %d to %d", before, n)
		}
		// The callers write them alone: the good ping counts, the bad one fails.
		if n := apitest.Must(env.UserClient(started).PutCoursesProgressIDPing(t.Context(), topic))(t).Seconds; n != 30 {
			t.Errorf("started learner: %d seconds after the failed batch, want 30", n)
		}
		_, err := env.UserClient(other).PutCoursesProgressIDPing(t.Context(), topic+1000)
		apitest.Refused(t, err, 404)
	})
}

// A class's first pings, all at once, each start the learner's course
// once, with its deadline and one CourseStarted event that names it, and
// count no time yet; on PostgreSQL they start together (startPings).
func TestFirstPingsStartTheirCourses(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		hours := 48
		c, _, topics := grid(t, env, courseRow{Public: true, Hours: &hours}, 1, 1)
		topic := topics[0][0]
		users := make([]*apitest.User, 24)
		for i := range users {
			users[i] = env.NewUser("student")
		}
		apitest.AtOnce(t, len(users), func(i int) error {
			res, err := env.UserClient(users[i]).PutCoursesProgressIDPing(t.Context(), topic)
			if err == nil && (res.Status != 2 || res.Seconds != 0) {
				return fmt.Errorf("learner %d: first ping answered %+v", users[i].ID, res)
			}
			return err
		})
		for _, u := range users {
			var started, deadline time.Time
			if err := tenant.DB.QueryRowContext(t.Context(), `SELECT started_at, deadline FROM course_progress
				WHERE user_id = $1 AND course_id = $2`, u.ID, c).Scan(&started, &deadline); err != nil {
				t.Fatalf("learner %d: course progress: %v", u.ID, err)
			}
			if !deadline.Equal(started.Add(48 * time.Hour)) {
				t.Errorf("learner %d: started %s, deadline %s", u.ID, started, deadline)
			}
			rows, err := tenant.DB.QueryContext(t.Context(), `SELECT payload FROM events WHERE name = 'CourseStarted' AND user_id = $1`, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			var payloads []map[string]any
			for rows.Next() {
				var raw string
				var p map[string]any
				if err := rows.Scan(&raw); err != nil || json.Unmarshal([]byte(raw), &p) != nil {
					t.Fatalf("learner %d: event payload %q: %v", u.ID, raw, err)
				}
				payloads = append(payloads, p)
			}
			rows.Close()
			if len(payloads) != 1 {
				t.Fatalf("learner %d: %d CourseStarted events", u.ID, len(payloads))
			}
			named, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(payloads[0]["deadline"]))
			if payloads[0]["course_id"] != float64(c) || !named.Equal(deadline) {
				t.Errorf("learner %d: CourseStarted %v, want course %d and deadline %s", u.ID, payloads[0], c, deadline)
			}
		}
	})
}
