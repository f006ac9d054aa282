package jobs_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// runs counts a job's runs per tenant.
type runs struct {
	mu sync.Mutex
	n  map[int64]int
}

func (r *runs) job(name string, s jobs.Schedule) jobs.Job {
	return jobs.Job{Name: name, Schedule: s, Run: func(_ context.Context, t *platform.Tenant, _ time.Time) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.n == nil {
			r.n = map[int64]int{}
		}
		r.n[t.ID]++
		return nil
	}}
}

func (r *runs) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, v := range r.n {
		n += v
	}
	return n
}

func scheduler(env *apitest.Env) *jobs.Scheduler {
	return jobs.New(env.Clock, env.Server.Locker, env.Server.Tenants, slog.New(slog.NewTextHandler(io.Discard, nil)), jobs.Tuning{})
}

func tenantCount(t *testing.T, env *apitest.Env) int {
	recs, err := env.Server.Registry.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

func TestScheduleAndRecord(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		env.Clock.Set(time.Date(2030, 1, 1, 10, 30, 0, 0, time.UTC))
		s := scheduler(env)
		var hourly, every runs
		s.Add(hourly.job("hourly", jobs.MustCron("@hourly")), every.job("every", jobs.Every(15*time.Minute)))
		tenants := tenantCount(t, env)
		if tenants < 2 {
			t.Fatalf("%d tenants, want the platform and the school", tenants)
		}
		tick := func() {
			t.Helper()
			if err := s.Tick(ctx, env.Clock.Now()); err != nil {
				t.Fatal(err)
			}
		}
		tick() // never ran: runs at once for every tenant
		tick() // not due
		if hourly.total() != tenants || every.total() != tenants {
			t.Fatalf("first ticks: hourly %d, every %d, want %d each", hourly.total(), every.total(), tenants)
		}
		env.Clock.Advance(15 * time.Minute) // 10:45
		tick()
		if hourly.total() != tenants || every.total() != 2*tenants {
			t.Errorf("10:45: hourly %d, every %d", hourly.total(), every.total())
		}
		env.Clock.Advance(15 * time.Minute) // 11:00
		tick()
		if hourly.total() != 2*tenants || every.total() != 3*tenants {
			t.Errorf("11:00: hourly %d, every %d", hourly.total(), every.total())
		}
		t1, release := env.OpenTenant(env.Tenant)
		defer release()
		last, err := jobs.LastRun(ctx, t1.DB, "hourly")
		if err != nil || last == nil || !last.Equal(env.Clock.Now()) {
			t.Errorf("job_runs: %v %v, want %s", last, err, env.Clock.Now())
		}
		// A new scheduler (a restart) reads the record and runs nothing.
		s2 := scheduler(env)
		var again runs
		s2.Add(again.job("hourly", jobs.MustCron("@hourly")))
		if err := s2.Tick(ctx, env.Clock.Now()); err != nil || again.total() != 0 {
			t.Errorf("after restart: %d runs, %v", again.total(), err)
		}
	})
}

// TestOneReplicaRuns runs two schedulers, as two replicas would, sharing
// the lock and the databases: each due job runs once, and a job still
// running is not started by the other replica.
func TestOneReplicaRuns(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		tenants := tenantCount(t, env)
		var n atomic.Int32
		started := make(chan struct{}, tenants)
		release := make(chan struct{})
		slow := jobs.Job{Name: "slow", Schedule: jobs.Every(time.Hour), Run: func(ctx context.Context, _ *platform.Tenant, _ time.Time) error {
			n.Add(1)
			started <- struct{}{}
			<-release
			return nil
		}}
		a, b := scheduler(env), scheduler(env)
		a.Add(slow)
		b.Add(slow)
		done := make(chan error, 1)
		go func() { done <- a.Tick(ctx, env.Clock.Now()) }()
		<-started // a runs the job for its first tenant and holds the lock
		var errB error
		bDone := make(chan struct{})
		go func() { errB = b.Tick(ctx, env.Clock.Now()); close(bDone) }()
		// b skips the tenant a holds and runs the others; let everyone go.
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		<-bDone
		if errB != nil {
			t.Fatal(errB)
		}
		if got := int(n.Load()); got != tenants {
			t.Errorf("%d runs for %d tenants, want one each", got, tenants)
		}
		// Both replicas tick again at the same time: nothing is due.
		a.Tick(ctx, env.Clock.Now())
		b.Tick(ctx, env.Clock.Now())
		if got := int(n.Load()); got != tenants {
			t.Errorf("%d runs after ticks that were not due", got)
		}
	})
}

// TestClaimWithoutSharedLock runs two schedulers on PostgreSQL with a lock
// each, as two replicas without Redis have: the claim in the platform
// database alone keeps the second from running a job the first one runs.
func TestClaimWithoutSharedLock(t *testing.T) {
	if os.Getenv("LMS_TEST_PG_URL") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("LMS_TEST_PG_URL is not set; CI=true requires PostgreSQL")
		}
		t.Skip("LMS_TEST_PG_URL is not set; the claim is PostgreSQL's")
	}
	env := apitest.New(t, "postgres", apitest.Options{})
	ctx := context.Background()
	var n atomic.Int32
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	slow := jobs.Job{Name: "slow", Schedule: jobs.Every(time.Hour),
		Tenants: func(r platform.Record) bool { return r.ID == env.Tenant.ID },
		Run: func(context.Context, *platform.Tenant, time.Time) error {
			n.Add(1)
			started <- struct{}{}
			<-release
			return nil
		}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := jobs.New(env.Clock, lock.NewMemory(env.Clock), env.Server.Tenants, log, jobs.Tuning{})
	b := jobs.New(env.Clock, lock.NewMemory(env.Clock), env.Server.Tenants, log, jobs.Tuning{})
	a.Add(slow)
	b.Add(slow)
	done := make(chan error, 1)
	go func() { done <- a.Tick(ctx, env.Clock.Now()) }()
	<-started
	bDone := make(chan error, 1)
	go func() { bDone <- b.Tick(ctx, env.Clock.Now()) }()
	select {
	case <-started:
		t.Error("the second replica ran the job the first one runs")
		release <- struct{}{}
	case err := <-bDone:
		if err != nil {
			t.Error(err)
		}
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := n.Load(); got != 1 {
		t.Errorf("%d runs, want 1", got)
	}
	// Released: the next period runs on whichever replica ticks.
	env.Clock.Advance(time.Hour)
	if err := b.Tick(ctx, env.Clock.Now()); err != nil || n.Load() != 2 {
		t.Errorf("after the claim ended: %d runs (%v), want 2", n.Load(), err)
	}
}

func TestSchedulesReplaceTheJobs(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		s := scheduler(env)
		s.Schedules = map[string]jobs.Schedule{"daily": jobs.Every(time.Minute)}
		var r runs
		s.Add(r.job("daily", jobs.MustCron("@daily")))
		s.Tick(ctx, env.Clock.Now())
		env.Clock.Advance(time.Minute)
		s.Tick(ctx, env.Clock.Now())
		if got, tenants := r.total(), tenantCount(t, env); got != 2*tenants {
			t.Errorf("%d runs over a minute, want 2 per tenant (%d tenants) on the replaced schedule", got, tenants)
		}
	})
}

func TestFailedRunIsRetried(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		var calls atomic.Int32
		fail := true
		s := scheduler(env)
		s.Add(jobs.Job{Name: "flaky", Schedule: jobs.MustCron("@daily"),
			Tenants: func(r platform.Record) bool { return r.ID == env.Tenant.ID },
			Run: func(context.Context, *platform.Tenant, time.Time) error {
				calls.Add(1)
				if fail {
					return errors.New("boom")
				}
				return nil
			}})
		if err := s.Tick(ctx, env.Clock.Now()); err == nil {
			t.Error("a failed run was not reported")
		}
		fail = false
		env.Clock.Advance(time.Minute)
		if err := s.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		s.Tick(ctx, env.Clock.Now())
		if calls.Load() != 2 {
			t.Errorf("%d calls, want 2 (failure, retry; then not due)", calls.Load())
		}
	})
}

func TestCronParsing(t *testing.T) {
	if _, err := jobs.Cron("not a schedule"); err == nil {
		t.Error("invalid expression accepted")
	}
	s := jobs.MustCron("0 * * * *")
	at := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	if got := s.Next(at); !got.Equal(at.Add(time.Hour)) {
		t.Errorf("next after 10:00 is %s", got)
	}
	if got := jobs.MustCron("@daily").Next(at); !got.Equal(time.Date(2030, 1, 2, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("daily next is %s", got)
	}
	if got := jobs.Every(30 * time.Minute).Next(at); !got.Equal(at.Add(30 * time.Minute)) {
		t.Errorf("every next is %s", got)
	}
}

func TestParseSchedules(t *testing.T) {
	got, err := jobs.ParseSchedules(" a = @every 2s ; b=0 3 * * * ;")
	if err != nil || len(got) != 2 {
		t.Fatalf("%v %v", got, err)
	}
	at := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
	if next := got["a"].Next(at); !next.Equal(at.Add(2 * time.Second)) {
		t.Errorf("a: next %s", next)
	}
	if next := got["b"].Next(at); !next.Equal(time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("b: next %s", next)
	}
	for _, bad := range []string{"a", "=@hourly", "a=never"} {
		if _, err := jobs.ParseSchedules(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestClaim(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		now := time.Date(2030, 1, 1, 10, 0, 0, 0, time.UTC)
		claim := func(at time.Time, fail bool) time.Time {
			t.Helper()
			var from time.Time
			err := tenant.Tx(ctx, func(tx *sqldb.Tx) error {
				var err error
				if from, err = jobs.Claim(ctx, tx, "windowed", at, time.Hour); err != nil || !fail {
					return err
				}
				return errors.New("the work failed")
			})
			if err != nil && !fail {
				t.Fatal(err)
			}
			return from
		}
		if from := claim(now, true); !from.Equal(now.Add(-time.Hour)) {
			t.Errorf("first claim from %s, want one period back", from)
		}
		// The failed work rolled the record back.
		if from := claim(now, false); !from.Equal(now.Add(-time.Hour)) {
			t.Errorf("claim after a failure from %s, want one period back", from)
		}
		if from := claim(now, false); !from.Equal(now) {
			t.Errorf("second claim at the same time from %s, want an empty window", from)
		}
		later := now.Add(90 * time.Minute)
		if from := claim(later, false); !from.Equal(now) {
			t.Errorf("later claim from %s, want the previous run", from)
		}
		if last, err := jobs.LastRun(ctx, tenant.DB, "windowed"); err != nil || last == nil || !last.Equal(later) {
			t.Errorf("recorded %v (%v), want %s", last, err, later)
		}
		// A claim behind the record (a replica's clock lagging) is empty
		// and leaves the record alone.
		if from := claim(now, false); !from.Equal(later) {
			t.Errorf("lagging claim from %s", from)
		}
		if last, _ := jobs.LastRun(ctx, tenant.DB, "windowed"); last == nil || !last.Equal(later) {
			t.Errorf("lagging claim moved the record to %v", last)
		}
	})
}

// TestTicksLeaveIdleTenantsClosed checks that a tick opens only the
// tenants with a due job, so tenants nobody uses stay closed (and idle
// eviction can close them), and that the jobs still run when due.
func TestTicksLeaveIdleTenantsClosed(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := context.Background()
		s := scheduler(env)
		var hourly runs
		s.Add(hourly.job("hourly", jobs.Every(time.Hour)))
		tenants := tenantCount(t, env)
		if err := s.Tick(ctx, env.Clock.Now()); err != nil || hourly.total() != tenants {
			t.Fatalf("first tick: %d runs for %d tenants, %v", hourly.total(), tenants, err)
		}
		env.Server.Tenants.CloseAll()
		env.Clock.Advance(30 * time.Minute)
		if err := s.Tick(ctx, env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		if open := env.Server.Tenants.OpenCount(); open != 0 || hourly.total() != tenants {
			t.Errorf("a tick with nothing due opened %d tenants and made %d runs", open, hourly.total()-tenants)
		}
		env.Clock.Advance(30 * time.Minute)
		if err := s.Tick(ctx, env.Clock.Now()); err != nil || hourly.total() != 2*tenants {
			t.Errorf("due an hour later: %d runs for %d tenants, %v", hourly.total(), tenants, err)
		}
		// A recreated tenant has no record of its runs: its job is due again.
		if err := env.Server.Tenants.Recreate(ctx, env.Tenant); err != nil {
			t.Fatal(err)
		}
		if err := s.Tick(ctx, env.Clock.Now()); err != nil || hourly.total() != 2*tenants+1 {
			t.Errorf("after recreating a tenant: %d runs, want %d (%v)", hourly.total(), 2*tenants+1, err)
		}
	})
}
