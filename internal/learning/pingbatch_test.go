package learning_test

import (
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

// A batch applies the pings of learners who started the course and
// leaves the others to their callers, which start the course or refuse
// the ping; a batch whose statement fails writes nothing and leaves every
// ping to its caller, so that only the failing ping fails. (SQLite has no
// batch statement, as its transactions are batched anyway: there a batch
// always fails and leaves every ping to its caller.)
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
		applied := learning.PingTogether(tenant.DB, at(), [][3]int64{{started.ID, c, topic}, {fresh.ID, c, topic}})
		if applied[1] {
			t.Error("the ping of a learner who has not started the course was applied")
		}
		if n := count(t, env, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1`, fresh.ID); n != 0 {
			t.Errorf("the batch wrote %d rows of the learner who has not started", n)
		}
		if applied[0] != postgres {
			t.Errorf("started learner's ping applied: %v, want %v", applied[0], postgres)
		}
		before := seconds(started)
		if postgres && before != 20 {
			t.Errorf("started learner: %d seconds, want 20", before)
		}

		env.Clock.Advance(10 * time.Second)
		applied = learning.PingTogether(tenant.DB, at(), [][3]int64{{started.ID, c, topic}, {other.ID, c, topic + 1000}})
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
