// Package jobs runs named jobs for every tenant on a schedule. Any number
// of replicas may run a Scheduler: for each job and tenant, a claim decides
// which replica runs a due job (on PostgreSQL a row of job_claims in the
// platform database, locked with FOR UPDATE SKIP LOCKED; on SQLite, whose
// one process writes, the lock), the tenant's job_runs table remembers
// when it last ran, and the time comes from the injected clock, so tests
// drive the schedule with Tick instead of waiting.
//
// The scheduler remembers, for each tenant and job, the earliest time the
// job can next be due, so a tick opens only the tenants with a due job:
// the others stay closed and idle eviction can close them. A tick borrows
// the tenants it opens (platform.Tenants.Borrow), closing again those no
// request used meanwhile: the first tick after a start, which knows no
// due times yet, does not leave every tenant open. The time is a
// lower bound (another replica running the job only moves it later), and
// the database still decides under the claim.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/changes"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Schedule tells when a job is next due after a run.
type Schedule interface {
	Next(after time.Time) time.Time
}

// Every is a schedule of a fixed interval between runs.
type Every time.Duration

// Next is one interval after the last run.
func (e Every) Next(after time.Time) time.Time { return after.Add(time.Duration(e)) }

var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Cron parses a five-field cron expression ("0 * * * *") or a descriptor
// ("@hourly", "@daily"); times are taken in UTC.
func Cron(expr string) (Schedule, error) {
	s, err := cronParser.Parse(expr)
	if err != nil {
		return nil, fmt.Errorf("jobs: cron %q: %w", expr, err)
	}
	return utcSchedule{s}, nil
}

// MustCron is Cron for expressions fixed in the code.
func MustCron(expr string) Schedule {
	s, err := Cron(expr)
	if err != nil {
		panic(err)
	}
	return s
}

// ParseSchedules reads "name=schedule;name=schedule" (Cron's syntax), the
// form in which operators replace the schedules of named jobs.
func ParseSchedules(spec string) (map[string]Schedule, error) {
	out := map[string]Schedule{}
	for _, entry := range strings.Split(spec, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		name, expr, ok := strings.Cut(entry, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("jobs: %q is not name=schedule", entry)
		}
		sched, err := Cron(strings.TrimSpace(expr))
		if err != nil {
			return nil, err
		}
		out[name] = sched
	}
	return out, nil
}

type utcSchedule struct{ cron.Schedule }

func (s utcSchedule) Next(after time.Time) time.Time { return s.Schedule.Next(after.UTC()) }

// Job is a named piece of work run for each tenant.
type Job struct {
	// Name identifies the job in job_runs and in its lock.
	Name     string
	Schedule Schedule
	// Timeout bounds one run; on SQLite the job's lock is held as long, so
	// nothing else starts it meanwhile. Default 10 minutes.
	Timeout time.Duration
	// Tenants, when set, picks the tenants the job runs for.
	Tenants func(platform.Record) bool
	// Run does the work for one tenant at now.
	Run func(ctx context.Context, t *platform.Tenant, now time.Time) error
}

const defaultTimeout = 10 * time.Minute

// Scheduler runs jobs when they are due.
type Scheduler struct {
	clock   clock.Clock
	locker  lock.Locker
	tenants *platform.Tenants
	log     *slog.Logger
	// Poll is how often Run looks for due jobs.
	Poll time.Duration
	// Schedules replace the schedules of the jobs they name, as Add
	// registers them (LMS_JOB_SCHEDULES); set them before the jobs are added.
	Schedules map[string]Schedule

	mu   sync.Mutex
	jobs []Job
	// notBefore holds, per tenant and job name, a time before which the
	// job is not due for the tenant (absent: ask the tenant's database).
	notBefore map[int64]map[string]time.Time
}

// Tuning sets a scheduler's Poll (zero: every minute) and Schedules at
// construction.
type Tuning struct {
	Poll      time.Duration
	Schedules map[string]Schedule
}

// New returns a scheduler of the tenants of ts.
func New(clk clock.Clock, locker lock.Locker, ts *platform.Tenants, log *slog.Logger, tune Tuning) *Scheduler {
	if log == nil {
		log = slog.Default()
	}
	s := &Scheduler{clock: clk, locker: locker, tenants: ts, log: log, Poll: time.Minute,
		Schedules: tune.Schedules, notBefore: map[int64]map[string]time.Time{}}
	if tune.Poll > 0 {
		s.Poll = tune.Poll
	}
	// A recreated tenant database has no job_runs: its jobs are due again.
	ts.Changes().Subscribe(func(n changes.Notice) {
		if n.Tenant == 0 || slices.Contains(n.Keys, access.TenantKey) {
			s.forget(n.Tenant)
		}
	})
	return s
}

// forget drops what the scheduler knows of the tenant's jobs (0: of all).
func (s *Scheduler) forget(tenant int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tenant == 0 {
		clear(s.notBefore)
		return
	}
	delete(s.notBefore, tenant)
}

// waiting reports whether the job is known not to be due for the tenant at now.
func (s *Scheduler) waiting(tenant int64, name string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	next, ok := s.notBefore[tenant][name]
	return ok && now.Before(next)
}

// remember notes when the job is next due for the tenant, from its last
// run in the tenant's database.
func (s *Scheduler) remember(ctx context.Context, t *platform.Tenant, j Job) error {
	last, err := LastRun(ctx, t.DB, j.Name)
	if err != nil || last == nil {
		// Never ran (or failed): due on the next tick.
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.notBefore[t.ID] == nil {
		s.notBefore[t.ID] = map[string]time.Time{}
	}
	s.notBefore[t.ID][j.Name] = j.Schedule.Next(*last)
	return nil
}

// Add registers jobs; names must be unique.
func (s *Scheduler) Add(jobs ...Job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, j := range jobs {
		for _, have := range s.jobs {
			if have.Name == j.Name {
				panic("jobs: job registered twice: " + j.Name)
			}
		}
		if j.Timeout <= 0 {
			j.Timeout = defaultTimeout
		}
		if sched, ok := s.Schedules[j.Name]; ok {
			j.Schedule = sched
		}
		s.jobs = append(s.jobs, j)
	}
}

// Jobs lists the registered jobs.
func (s *Scheduler) Jobs() []Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Job(nil), s.jobs...)
}

// Run calls Tick every Poll until ctx ends.
func (s *Scheduler) Run(ctx context.Context) {
	for name := range s.Schedules {
		if !slices.ContainsFunc(s.Jobs(), func(j Job) bool { return j.Name == name }) {
			s.log.Warn("a schedule names no job", "job", name)
		}
	}
	ticker := time.NewTicker(s.Poll)
	defer ticker.Stop()
	for {
		if err := s.Tick(ctx, s.clock.Now()); err != nil && ctx.Err() == nil {
			s.log.Error("scheduled jobs failed", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Tick runs, for every tenant of the registry, each job that is due at
// now: one that never ran, or whose schedule's next time after its last
// run has come. A failed run is not recorded, so it is tried again on the
// next tick; the errors of all failed runs are returned together.
func (s *Scheduler) Tick(ctx context.Context, now time.Time) error {
	jobs := s.Jobs()
	if len(jobs) == 0 {
		return nil
	}
	recs, err := s.tenants.Registry().List(ctx)
	if err != nil {
		return fmt.Errorf("jobs: list tenants: %w", err)
	}
	var errs []error
	for _, rec := range recs {
		if ctx.Err() != nil {
			break
		}
		if rec.Suspended() {
			continue // its jobs resume with it
		}
		if err := s.tickTenant(ctx, rec, jobs, now.UTC()); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *Scheduler) tickTenant(ctx context.Context, rec platform.Record, jobs []Job, now time.Time) error {
	var mine []Job
	for _, j := range jobs {
		if (j.Tenants == nil || j.Tenants(rec)) && !s.waiting(rec.ID, j.Name, now) {
			mine = append(mine, j)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	t, release, err := s.tenants.Borrow(ctx, rec)
	if err != nil {
		return fmt.Errorf("jobs: open tenant %d: %w", rec.ID, err)
	}
	defer release()
	var errs []error
	for _, j := range mine {
		err := s.runIfDue(ctx, t, j, now)
		if err == nil {
			err = s.remember(ctx, t, j)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("jobs: %s for tenant %d: %w", j.Name, t.ID, err))
		}
	}
	return errors.Join(errs...)
}

// runIfDue runs the job for the tenant when it is due and this process
// holds its claim: on PostgreSQL the job's row of job_claims, else the
// lock. The due check is repeated under the claim, because another replica
// may have run the job between the first check and taking the claim.
func (s *Scheduler) runIfDue(ctx context.Context, t *platform.Tenant, j Job, now time.Time) error {
	if due, err := s.due(ctx, t.DB, j, now); err != nil || !due {
		return err
	}
	claim := s.locked
	if t.DB.Dialect == sqldb.Postgres {
		claim = s.claimed
	}
	return claim(ctx, t.ID, j, func() error { return s.run(ctx, t, j, now) })
}

// claimed calls run while this process holds the job's row of job_claims
// for the tenant, locked in a transaction of the platform database, and
// skips it when another replica holds the row. A replica that dies
// releases the row with its connection, so the job is due again for the
// others at once, where a lock would be held until it expires.
func (s *Scheduler) claimed(ctx context.Context, tenant int64, j Job, run func() error) error {
	db := s.tenants.Registry().DB()
	// The row is created outside the claim: inserting it inside would make
	// a second replica wait on the first one's uncommitted row instead of
	// skipping it.
	if _, err := db.ExecContext(ctx, `INSERT INTO job_claims (tenant_id, name) VALUES ($1, $2)
		ON CONFLICT DO NOTHING`, tenant, j.Name); err != nil {
		return fmt.Errorf("jobs: claim row of %s: %w", j.Name, err)
	}
	return db.Tx(ctx, func(tx *sqldb.Tx) error {
		var held int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM job_claims WHERE tenant_id = $1 AND name = $2
			FOR UPDATE SKIP LOCKED`, tenant, j.Name).Scan(&held)
		if sqldb.NotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("jobs: claim %s: %w", j.Name, err)
		}
		return run()
	})
}

// locked calls run while this process holds the job's lock for the
// tenant, held for the job's timeout at most, and skips it when another
// holds the lock.
func (s *Scheduler) locked(ctx context.Context, tenant int64, j Job, run func() error) error {
	unlock, err := s.locker.TryAcquire(ctx, "job:"+j.Name+":"+strconv.FormatInt(tenant, 10), j.Timeout)
	if errors.Is(err, lock.ErrNotAcquired) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock(context.WithoutCancel(ctx))
	return run()
}

// run runs the job when it is still due and records the run.
func (s *Scheduler) run(ctx context.Context, t *platform.Tenant, j Job, now time.Time) error {
	if due, err := s.due(ctx, t.DB, j, now); err != nil || !due {
		return err
	}
	runCtx, cancel := context.WithTimeout(ctx, j.Timeout)
	defer cancel()
	start := time.Now()
	if err := j.Run(runCtx, t, now); err != nil {
		return err
	}
	if err := record(ctx, t.DB, j.Name, now); err != nil {
		return err
	}
	// One line per run: operators see that jobs run, and the replica test
	// counts the runs of every period from the logs of all replicas.
	s.log.Info("scheduled job ran", "tenant", t.ID, "job", j.Name, "at", now, "took", time.Since(start))
	return nil
}

// record notes that the job ran at now.
func record(ctx context.Context, q sqldb.Querier, name string, now time.Time) error {
	_, err := q.ExecContext(ctx, `INSERT INTO job_runs (name, last_run_at) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET last_run_at = excluded.last_run_at`, name, now)
	if err != nil {
		return fmt.Errorf("jobs: record run of %s: %w", name, err)
	}
	return nil
}

func (s *Scheduler) due(ctx context.Context, db *sqldb.DB, j Job, now time.Time) (bool, error) {
	last, err := LastRun(ctx, db, j.Name)
	if err != nil {
		return false, err
	}
	if last == nil {
		return true, nil
	}
	return !j.Schedule.Next(*last).After(now), nil
}

// LastRun returns when the job last ran successfully for the tenant
// database, or nil when it never has.
func LastRun(ctx context.Context, db sqldb.Querier, name string) (*time.Time, error) {
	var at sql.NullTime
	err := db.QueryRowContext(ctx, `SELECT last_run_at FROM job_runs WHERE name = $1`, name).Scan(&at)
	if sqldb.NotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: last run of %s: %w", name, err)
	}
	v := at.Time.UTC()
	return &v, nil
}

// Claim gives a job that works on what happened since its previous run
// the window it covers at now, inside tx, the transaction of its work. The
// window starts at the job's last recorded run, or first before now when
// it never ran, and ends at now; it is empty when from is not before now.
// Claim records the run at now in tx, so the record commits with the work:
// a second run at the same now, or a retry after the scheduler failed to
// record the run, finds nothing left to do.
func Claim(ctx context.Context, tx *sqldb.Tx, name string, now time.Time, first time.Duration) (from time.Time, err error) {
	// The no-op update locks the job's row on PostgreSQL until tx ends, so
	// two runs claim one after the other; SQLite transactions take the
	// write lock when they begin.
	if _, err := tx.ExecContext(ctx, `UPDATE job_runs SET last_run_at = last_run_at WHERE name = $1`, name); err != nil {
		return time.Time{}, fmt.Errorf("jobs: claim %s: %w", name, err)
	}
	last, err := LastRun(ctx, tx, name)
	if err != nil {
		return time.Time{}, err
	}
	if last == nil {
		from = now.Add(-first)
	} else {
		from = *last
	}
	if !from.Before(now) {
		return from, nil
	}
	return from, record(ctx, tx, name, now)
}
