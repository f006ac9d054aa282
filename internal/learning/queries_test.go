package learning_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/sqldb"
)

// counter counts the statements run through it.
type counter struct {
	q sqldb.Querier
	n int
}

func (c *counter) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	c.n++
	return c.q.ExecContext(ctx, query, args...)
}

func (c *counter) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	c.n++
	return c.q.QueryContext(ctx, query, args...)
}

func (c *counter) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	c.n++
	return c.q.QueryRowContext(ctx, query, args...)
}

// TestProgramQueryCount checks that a program costs the same number of
// queries for a 2×2 and a 20×10 course (no query per lesson or topic),
// for an anonymous caller and for an assigned learner with progress.
func TestProgramQueryCount(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		u := env.NewUser("student")
		learner := &access.Principal{UserID: u.ID, Roles: []string{"student"}, Permissions: map[access.Permission]bool{}}
		// queries reads the program of a new course twice: first with an
		// empty program cache, then from the cache.
		queries := func(p *access.Principal, lessons, topics int) (cold, warm int) {
			c, _, ts := grid(t, env, courseRow{Public: p == nil}, lessons, topics)
			if p != nil {
				assign(t, env, c, p.UserID, nil)
				patch(t, env, u, c, 1, ts[0][0], ts[lessons-1][topics-1])
			}
			for i, n := range []*int{&cold, &warm} {
				q := &counter{q: tenant.DB}
				prog, err := env.Server.Learning.Program(context.Background(), tenant, q, p, c)
				if err != nil {
					t.Fatal(err)
				}
				if len(prog.Lessons) != lessons || len(prog.Lessons[lessons-1].Topics) != topics {
					t.Fatalf("program of %d×%d has %d lessons", lessons, topics, len(prog.Lessons))
				}
				if p != nil && prog.Progress.FinishedTopics != 2 {
					t.Fatalf("read %d: progress %+v", i, prog.Progress)
				}
				*n = q.n
			}
			return cold, warm
		}
		for name, p := range map[string]*access.Principal{"anonymous": nil, "learner": learner} {
			smallCold, smallWarm := queries(p, 2, 2)
			largeCold, largeWarm := queries(p, 20, 10)
			if smallCold != largeCold || smallWarm != largeWarm {
				t.Errorf("%s: 2×2 ran %d queries (cached: %d), 20×10 ran %d (cached: %d)", name, smallCold, smallWarm,
					largeCold, largeWarm)
			}
			t.Logf("%s: %d queries, %d when cached", name, smallCold, smallWarm)
		}
	})
}
