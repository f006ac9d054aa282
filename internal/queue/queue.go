// Package queue runs background work that a request asks for once: a job
// is enqueued in the transaction of the change that needs it (a video
// upload asks for its transcoding), and a worker runs it soon after, in
// this process or another replica, retrying with backoff until it succeeds
// or runs out of attempts.
//
// It is the third of three kinds of background work, each with its own
// package:
//   - internal/jobs runs named jobs for every tenant on a schedule (hourly
//     clean-ups); nobody enqueues them.
//   - internal/events records what happened (the outbox) and tells every
//     listener; an event is a fact, delivered at least once to all.
//   - internal/queue (this one) holds work items, each run by exactly one
//     worker at a time, that may take minutes and may fail for good.
//
// Jobs live in the tenant's database (queue_jobs), so they commit or roll
// back with the change that enqueued them. A worker claims a job by
// setting a lease (lease_until, lease_token) in a short transaction: on
// PostgreSQL the candidate row is selected FOR UPDATE SKIP LOCKED, so
// workers of several replicas never take the same job; SQLite has one
// writing process, whose transactions take the write lock when they begin.
// The worker renews the lease while the job runs; a worker that dies stops
// renewing, and once the lease has run out the job is due again for any
// worker. A job that returns an error is queued again after a backoff,
// until its attempts are spent; then it is failed and its kind's Failed
// hook records the reason where users see it.
//
// With one database per tenant, the platform database keeps the tenants
// whose queue may hold due work (queue_tenants), the way internal/jobs
// keeps the next due time of its jobs: workers read that table and open
// only those tenants, so idle tenants stay closed.
package queue

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Job is one claimed job as its handler sees it.
type Job struct {
	ID      int64
	Kind    string
	Key     string
	Payload json.RawMessage
	// Attempt counts from 1 for the first run.
	Attempt int
}

// Kind is the handling of one kind of job.
type Kind struct {
	// Name is the job kind enqueued and stored ("video.transcode").
	Name string
	// Run does the work. An error queues the job again after a backoff
	// while attempts are left; a Permanent error fails it at once.
	Run func(ctx context.Context, t *platform.Tenant, j Job) error
	// Failed, when set, records that the job failed for good (no
	// attempts left, or a Permanent error) with the reason.
	Failed func(ctx context.Context, t *platform.Tenant, j Job, reason string) error
	// MaxAttempts bounds the runs of one job; default 5.
	MaxAttempts int
	// Backoff is the wait before the second run, doubled for each further
	// run up to an hour; default 10 seconds.
	Backoff time.Duration
}

// Permanent marks an error that no retry can fix (a corrupt upload).
func Permanent(err error) error { return permanentError{err} }

type permanentError struct{ error }

func (e permanentError) Unwrap() error { return e.error }

// New is a job to enqueue.
type New struct {
	Kind    string
	Key     string
	Payload any
	// RunAfter delays the job; zero: due at once.
	RunAfter time.Time
}

// Queue enqueues jobs and runs its workers.
type Queue struct {
	clock   clock.Clock
	tenants *platform.Tenants
	log     *slog.Logger
	// Workers is how many jobs Run runs at once in this process; default 1.
	Workers int
	// Lease is how long a claim holds without renewal; the worker renews
	// it every third of it. A job whose worker died is due again after it.
	Lease time.Duration
	// Poll is how often idle workers look for due work that no wake-up
	// announced (enqueued by another replica, retries, expired leases).
	Poll time.Duration

	mu    sync.Mutex
	kinds map[string]Kind
	wake  chan struct{}
}

// NewQueue returns a queue of the tenants of ts.
func NewQueue(clk clock.Clock, ts *platform.Tenants, log *slog.Logger) *Queue {
	if log == nil {
		log = slog.Default()
	}
	return &Queue{clock: clk, tenants: ts, log: log, Workers: 1, Lease: time.Minute, Poll: 2 * time.Second,
		kinds: map[string]Kind{}, wake: make(chan struct{}, 1)}
}

// Handle registers a kind of job; names must be unique.
func (q *Queue) Handle(k Kind) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.kinds[k.Name]; ok {
		panic("queue: kind registered twice: " + k.Name)
	}
	if k.MaxAttempts <= 0 {
		k.MaxAttempts = 5
	}
	if k.Backoff <= 0 {
		k.Backoff = 10 * time.Second
	}
	q.kinds[k.Name] = k
}

func (q *Queue) kind(name string) (Kind, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	k, ok := q.kinds[name]
	return k, ok
}

// Enqueue adds a job to the tenant's queue inside tx, the transaction of
// the change that asks for it: the job exists exactly when the change
// commits. A waiting job with the same key is replaced. The tenant is
// marked in the platform database before tx commits, so workers find it.
func (q *Queue) Enqueue(ctx context.Context, t *platform.Tenant, tx *sqldb.Tx, n New) error {
	k, ok := q.kind(n.Kind)
	if !ok {
		return fmt.Errorf("queue: enqueue unknown kind %q", n.Kind)
	}
	payload, err := json.Marshal(n.Payload)
	if err != nil {
		return fmt.Errorf("queue: encode %s: %w", n.Kind, err)
	}
	now := q.clock.Now().UTC()
	runAfter := n.RunAfter.UTC()
	if runAfter.Before(now) {
		runAfter = now
	}
	var key any
	if n.Key != "" {
		key = n.Key
		if _, err := tx.ExecContext(ctx, `DELETE FROM queue_jobs WHERE key = $1 AND state IN ('queued', 'failed')`, n.Key); err != nil {
			return fmt.Errorf("queue: replace %s: %w", n.Key, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO queue_jobs (kind, key, payload, state, max_attempts, run_after, created_at, updated_at)
		VALUES ($1, $2, $3, 'queued', $4, $5, $6, $6)`, n.Kind, key, string(payload), k.MaxAttempts, runAfter, now); err != nil {
		return fmt.Errorf("queue: enqueue %s: %w", n.Kind, err)
	}
	if err := q.mark(ctx, t.ID, runAfter); err != nil {
		return err
	}
	tx.AfterCommit(q.Wake)
	return nil
}

// mark notes in the platform database that the tenant has work due at
// at, keeping an earlier time, and counts the change.
func (q *Queue) mark(ctx context.Context, tenant int64, at time.Time) error {
	_, err := q.tenants.Registry().DB().ExecContext(ctx, `INSERT INTO queue_tenants (tenant_id, due_at, version) VALUES ($1, $2, 1)
		ON CONFLICT (tenant_id) DO UPDATE SET version = queue_tenants.version + 1,
			due_at = CASE WHEN excluded.due_at < queue_tenants.due_at THEN excluded.due_at ELSE queue_tenants.due_at END`,
		tenant, at.UTC())
	if err != nil {
		return fmt.Errorf("queue: mark tenant %d: %w", tenant, err)
	}
	return nil
}

// Wake tells this process's idle workers to look for work now.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Run runs the workers until ctx ends. A job under way when ctx ends
// keeps its lease and is taken up again after it runs out.
func (q *Queue) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range max(q.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.worker(ctx)
		}()
	}
	wg.Wait()
}

func (q *Queue) worker(ctx context.Context) {
	tick := time.NewTicker(q.Poll)
	defer tick.Stop()
	for ctx.Err() == nil {
		ran, err := q.Work(ctx)
		if err != nil && ctx.Err() == nil {
			q.log.Error("queue: work", "error", err)
		}
		if ran && err == nil {
			continue
		}
		select {
		case <-ctx.Done():
		case <-q.wake:
		case <-tick.C:
		}
	}
}

// Work runs one due job of any tenant and reports whether it found one.
// Tenants found without due work get their mark moved to their next due
// time, or dropped when their queue holds nothing left to run.
func (q *Queue) Work(ctx context.Context) (bool, error) {
	now := q.clock.Now().UTC()
	marks, err := q.dueTenants(ctx, now)
	if err != nil || len(marks) == 0 {
		return false, err
	}
	recs, err := q.tenants.Registry().List(ctx)
	if err != nil {
		return false, fmt.Errorf("queue: list tenants: %w", err)
	}
	byID := map[int64]platform.Record{}
	for _, r := range recs {
		byID[r.ID] = r
	}
	var errs []error
	for _, m := range marks {
		rec, ok := byID[m.tenant]
		if !ok {
			continue // deleted: its row went with it
		}
		if rec.Suspended() {
			continue // its jobs wait until it is resumed
		}
		ran, err := q.workTenant(ctx, rec, m, now)
		if err != nil {
			errs = append(errs, fmt.Errorf("queue: tenant %d: %w", m.tenant, err))
			continue
		}
		if ran {
			return true, errors.Join(errs...)
		}
	}
	return false, errors.Join(errs...)
}

type tenantMark struct {
	tenant  int64
	version int64
}

func (q *Queue) dueTenants(ctx context.Context, now time.Time) ([]tenantMark, error) {
	rows, err := q.tenants.Registry().DB().QueryContext(ctx, `SELECT tenant_id, version FROM queue_tenants
		WHERE due_at <= $1 ORDER BY due_at LIMIT 100`, now)
	if err != nil {
		return nil, fmt.Errorf("queue: due tenants: %w", err)
	}
	defer rows.Close()
	var out []tenantMark
	for rows.Next() {
		var m tenantMark
		if err := rows.Scan(&m.tenant, &m.version); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// workTenant runs one due job of the tenant, or, finding none, moves the
// tenant's mark to when its queue is next due.
func (q *Queue) workTenant(ctx context.Context, rec platform.Record, m tenantMark, now time.Time) (bool, error) {
	t, release, err := q.tenants.Get(ctx, rec)
	if err != nil {
		return false, err
	}
	defer release()
	c, err := q.claim(ctx, t, now)
	if err != nil {
		return false, err
	}
	if c == nil {
		return false, q.remark(ctx, t, m)
	}
	q.run(ctx, t, c)
	return true, nil
}

// remark moves the tenant's mark to its queue's next due time (the
// earliest waiting job or running lease), or drops it when nothing is
// left to run, unless a job was enqueued since the mark was read.
func (q *Queue) remark(ctx context.Context, t *platform.Tenant, m tenantMark) error {
	// Two plain column reads: SQLite's MIN loses the column's time type.
	queued, err := firstTime(ctx, t.DB, `SELECT run_after FROM queue_jobs WHERE state = 'queued' ORDER BY run_after LIMIT 1`)
	if err != nil {
		return err
	}
	leased, err := firstTime(ctx, t.DB, `SELECT lease_until FROM queue_jobs WHERE state = 'running' ORDER BY lease_until LIMIT 1`)
	if err != nil {
		return err
	}
	next, ok := earliest(queued, leased)
	db := q.tenants.Registry().DB()
	if !ok {
		_, err = db.ExecContext(ctx, `DELETE FROM queue_tenants WHERE tenant_id = $1 AND version = $2`, t.ID, m.version)
	} else {
		_, err = db.ExecContext(ctx, `UPDATE queue_tenants SET due_at = $1 WHERE tenant_id = $2 AND version = $3`,
			next.UTC(), t.ID, m.version)
	}
	if err != nil {
		return fmt.Errorf("move mark: %w", err)
	}
	return nil
}

func firstTime(ctx context.Context, db sqldb.Querier, query string) (sql.NullTime, error) {
	var at sql.NullTime
	err := db.QueryRowContext(ctx, query).Scan(&at)
	if err != nil && !sqldb.NotFound(err) {
		return at, fmt.Errorf("next due: %w", err)
	}
	return at, nil
}

func earliest(a, b sql.NullTime) (time.Time, bool) {
	switch {
	case a.Valid && b.Valid:
		if b.Time.Before(a.Time) {
			return b.Time, true
		}
		return a.Time, true
	case a.Valid:
		return a.Time, true
	case b.Valid:
		return b.Time, true
	}
	return time.Time{}, false
}

// claimed is a job this worker holds.
type claimed struct {
	Job
	token       string
	maxAttempts int
}

// claim takes the tenant's next due job, a waiting one whose time has come
// or a running one whose lease ran out, and leases it to this worker.
func (q *Queue) claim(ctx context.Context, t *platform.Tenant, now time.Time) (*claimed, error) {
	lock := ""
	if t.DB.Dialect == sqldb.Postgres {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	// Only the kinds this process handles: a replica may run some kinds
	// only, and a kind of a newer release waits for a worker that knows it.
	args := sqldb.Args{now}
	var kinds []string
	q.mu.Lock()
	for name := range q.kinds {
		kinds = append(kinds, args.Add(name))
	}
	q.mu.Unlock()
	if len(kinds) == 0 {
		return nil, nil
	}
	var c *claimed
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		var j claimed
		var key sql.NullString
		var payload string
		err := tx.QueryRowContext(ctx, `SELECT id, kind, key, payload, attempts, max_attempts FROM queue_jobs
			WHERE ((state = 'queued' AND run_after <= $1) OR (state = 'running' AND lease_until <= $1))
			AND kind IN (`+strings.Join(kinds, ", ")+`)
			ORDER BY run_after, id LIMIT 1`+lock, args...).Scan(&j.ID, &j.Kind, &key, &payload, &j.Attempt, &j.maxAttempts)
		if sqldb.NotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("claim: %w", err)
		}
		j.Key, j.Payload, j.token = key.String, json.RawMessage(payload), newToken()
		j.Attempt++
		if _, err := tx.ExecContext(ctx, `UPDATE queue_jobs SET state = 'running', attempts = $1, lease_until = $2,
			lease_token = $3, updated_at = $4 WHERE id = $5`, j.Attempt, now.Add(q.Lease), j.token, now, j.ID); err != nil {
			return fmt.Errorf("lease job %d: %w", j.ID, err)
		}
		c = &j
		return nil
	})
	return c, err
}

func newToken() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// run runs a claimed job while renewing its lease, and records the
// outcome. A job whose attempts were all spent by workers that died is
// failed without another run.
func (q *Queue) run(ctx context.Context, t *platform.Tenant, c *claimed) {
	k, _ := q.kind(c.Kind)
	if c.Attempt > c.maxAttempts {
		q.finish(ctx, t, c, k, errors.New("the job's workers stopped before it finished"), true)
		return
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		q.renew(runCtx, t, c, cancel)
	}()
	err := q.call(runCtx, t, k, c)
	cancel()
	<-renewed
	if ctx.Err() != nil {
		// This process is stopping: the job keeps its lease and runs again
		// after it, here or elsewhere, without losing an attempt's result.
		return
	}
	var perm permanentError
	q.finish(ctx, t, c, k, err, errors.As(err, &perm))
}

// call runs the handler, turning a panic into a failed attempt.
func (q *Queue) call(ctx context.Context, t *platform.Tenant, k Kind, c *claimed) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return k.Run(ctx, t, c.Job)
}

// renew extends the lease every third of it until ctx ends; when the
// lease was lost (another worker took the job after it expired) it
// cancels the run.
func (q *Queue) renew(ctx context.Context, t *platform.Tenant, c *claimed, cancel func()) {
	tick := time.NewTicker(max(q.Lease/3, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		res, err := t.DB.ExecContext(ctx, `UPDATE queue_jobs SET lease_until = $1 WHERE id = $2 AND lease_token = $3`,
			q.clock.Now().UTC().Add(q.Lease), c.ID, c.token)
		if err != nil {
			continue // the next tick tries again before the lease runs out
		}
		if n, _ := res.RowsAffected(); n == 0 {
			q.log.Warn("queue: lease lost", "tenant", t.ID, "job", c.ID, "kind", c.Kind)
			cancel()
			return
		}
	}
}

// finish records a run's outcome, if this worker still holds the job: done
// (deleted), queued again after a backoff, or failed for good.
func (q *Queue) finish(ctx context.Context, t *platform.Tenant, c *claimed, k Kind, runErr error, permanent bool) {
	ctx = context.WithoutCancel(ctx)
	now := q.clock.Now().UTC()
	var err error
	switch {
	case runErr == nil:
		_, err = t.DB.ExecContext(ctx, `DELETE FROM queue_jobs WHERE id = $1 AND lease_token = $2`, c.ID, c.token)
	case !permanent && c.Attempt < c.maxAttempts:
		at := now.Add(backoff(k.Backoff, c.Attempt))
		q.log.Warn("queue: job failed, retrying", "tenant", t.ID, "job", c.ID, "kind", c.Kind, "attempt", c.Attempt,
			"retry_at", at, "error", runErr)
		var res sql.Result
		res, err = t.DB.ExecContext(ctx, `UPDATE queue_jobs SET state = 'queued', run_after = $1, lease_until = NULL,
			lease_token = NULL, last_error = $2, updated_at = $3 WHERE id = $4 AND lease_token = $5`,
			at, runErr.Error(), now, c.ID, c.token)
		if n, _ := rowsAffected(res); err == nil && n == 1 {
			err = q.mark(ctx, t.ID, at)
		}
	default:
		q.log.Warn("queue: job failed", "tenant", t.ID, "job", c.ID, "kind", c.Kind, "attempt", c.Attempt, "error", runErr)
		var res sql.Result
		res, err = t.DB.ExecContext(ctx, `UPDATE queue_jobs SET state = 'failed', lease_until = NULL, lease_token = NULL,
			last_error = $1, updated_at = $2 WHERE id = $3 AND lease_token = $4`, runErr.Error(), now, c.ID, c.token)
		if n, _ := rowsAffected(res); err == nil && n == 1 && k.Failed != nil {
			err = k.Failed(ctx, t, c.Job, runErr.Error())
		}
	}
	if err != nil {
		q.log.Error("queue: record outcome", "tenant", t.ID, "job", c.ID, "kind", c.Kind, "error", err)
	}
}

func rowsAffected(res sql.Result) (int64, error) {
	if res == nil {
		return 0, nil
	}
	return res.RowsAffected()
}

// backoff is the wait before the run after attempt: base, doubled per
// attempt, at most an hour.
func backoff(base time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < time.Hour; i++ {
		d *= 2
	}
	return min(d, time.Hour)
}

// Status is what the queue knows of the job with a key.
type Status struct {
	State     string
	Attempts  int
	LastError string
}

// StatusOf returns the state of the newest job with the key, or false when
// there is none (never enqueued, or finished).
func StatusOf(ctx context.Context, db sqldb.Querier, key string) (Status, bool, error) {
	var s Status
	var last sql.NullString
	err := db.QueryRowContext(ctx, `SELECT state, attempts, last_error FROM queue_jobs WHERE key = $1
		ORDER BY id DESC LIMIT 1`, key).Scan(&s.State, &s.Attempts, &last)
	if sqldb.NotFound(err) {
		return s, false, nil
	}
	if err != nil {
		return s, false, fmt.Errorf("queue: status of %s: %w", key, err)
	}
	s.LastError = last.String
	return s, true, nil
}
