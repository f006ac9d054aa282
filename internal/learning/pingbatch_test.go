package learning_test

import (
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/learning"
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
			call(t, env, 200, "PUT", "/api/courses/progress/"+id(topic)+"/ping", u, nil)
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

// A batch whose statement fails writes its pings one by one: only the
// failing ping fails. (SQLite has no batch statement, as its transactions
// are batched anyway: there the whole batch takes this path.)
func TestPingBatchIsolatesAFailure(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		c, _, topics := grid(t, env, courseRow{Public: true}, 1, 1)
		topic := topics[0][0]
		good, bad := env.NewUser("student"), env.NewUser("student")
		for _, u := range []*apitest.User{good, bad} {
			call(t, env, 200, "PUT", "/api/courses/progress/"+id(topic)+"/ping", u, nil)
		}
		env.Clock.Advance(20 * time.Second)
		errs := learning.PingTogether(tenant.DB, env.Clock.Now().UTC().Truncate(time.Microsecond),
			[][3]int64{{good.ID, c, topic}, {bad.ID, c, topic + 1000}})
		if errs[0] != nil {
			t.Errorf("the good ping failed with the bad one: %v", errs[0])
		}
		if errs[1] == nil {
			t.Error("a ping of a missing topic succeeded")
		}
		if n := count(t, env, `SELECT seconds FROM topic_progress WHERE user_id = $1`, good.ID); n != 20 {
			t.Errorf("good learner: %d seconds, want 20", n)
		}
		if n := count(t, env, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1`, bad.ID); n != 1 {
			t.Errorf("bad learner: %d topic rows, want 1", n)
		}
	})
}
