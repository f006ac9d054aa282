package events

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Listener handles one event of a tenant. Listeners must be idempotent:
// delivery is at least once, since a process that dies after a listener
// ran but before the delivery was recorded leaves the event to be
// delivered again (by itself after a restart, or by another replica).
type Listener func(ctx context.Context, t *platform.Tenant, ev Stored) error

// Dispatcher delivers recorded events to listeners.
type Dispatcher struct {
	listeners []Listener
	clock     clock.Clock
	log       *slog.Logger
	// Poll is how often pending events are looked for without a wake-up,
	// which catches events of crashed processes and failed deliveries.
	Poll time.Duration
}

// NewDispatcher returns a dispatcher calling listeners in order.
func NewDispatcher(clk clock.Clock, log *slog.Logger, listeners ...Listener) *Dispatcher {
	return &Dispatcher{listeners: listeners, clock: clk, log: log, Poll: 5 * time.Second}
}

// Listen adds a listener; call before tenants are opened.
func (d *Dispatcher) Listen(l Listener) { d.listeners = append(d.listeners, l) }

// Start runs the dispatcher of one tenant until the returned stop is
// called. It fits platform.Options.OnOpen.
func (d *Dispatcher) Start(t *platform.Tenant) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(d.Poll)
		defer tick.Stop()
		for {
			_, failed, err := d.dispatchPending(ctx, t)
			if err != nil && ctx.Err() == nil {
				d.log.Error("dispatch events", "tenant", t.ID, "error", err)
			}
			// On SQLite this process writes every event and kicks the
			// dispatcher, so with nothing left to retry it waits for a kick
			// only: polling would keep a connection of every open tenant
			// busy, and the pool would never close it when idle (about a
			// megabyte each).
			poll := tick.C
			if t.DB.Dialect == sqldb.SQLite && err == nil && failed == 0 {
				poll = nil
			}
			select {
			case <-ctx.Done():
				return
			case <-t.Kicked():
			case <-poll:
			}
		}
	}()
	return func() { cancel(); <-done }
}

const maxAttempts = 10

// batchSize is how many pending events one claim takes.
const batchSize = 100

// DispatchPending delivers the tenant's pending events, each at most once
// per call, and returns how many were delivered. A failed delivery is
// counted and retried on a later call, up to maxAttempts.
//
// On PostgreSQL several replicas dispatch the same tenant: each batch is
// claimed with FOR UPDATE SKIP LOCKED in a transaction held while its
// events are delivered, so another replica skips them, and a replica that
// dies mid-batch releases them with its connection, uncommitted, for the
// next dispatcher to deliver again. SQLite has one process writing, which
// delivers without a claim: a transaction there would hold the write lock
// the listeners need.
func (d *Dispatcher) DispatchPending(ctx context.Context, t *platform.Tenant) (int, error) {
	delivered, _, err := d.dispatchPending(ctx, t)
	return delivered, err
}

// dispatchPending is DispatchPending that also counts the events whose
// delivery failed and that stay pending for a retry.
func (d *Dispatcher) dispatchPending(ctx context.Context, t *platform.Tenant) (delivered, failed int, err error) {
	var cursor int64
	for {
		n, f, last, err := d.dispatchBatch(ctx, t, cursor)
		delivered += n
		failed += f
		if err != nil || last == 0 {
			return delivered, failed, err
		}
		cursor = last
	}
}

// dispatchBatch claims and delivers the next batch of pending events after
// cursor. It returns how many it delivered, how many failed, and the id of
// the last event it looked at, 0 when none was pending.
func (d *Dispatcher) dispatchBatch(ctx context.Context, t *platform.Tenant, cursor int64) (delivered, failed int, last int64, err error) {
	work := func(q sqldb.Querier, claim string) error {
		batch, err := pending(ctx, q, claim, cursor)
		if err != nil {
			return err
		}
		for _, ev := range batch {
			last = ev.ID
			ok, err := d.deliverOne(ctx, t, q, ev)
			if err != nil {
				return err
			}
			if ok {
				delivered++
			} else {
				failed++
			}
		}
		return nil
	}
	if t.DB.Dialect != sqldb.Postgres {
		err = work(t.DB, "")
		return delivered, failed, last, err
	}
	err = t.DB.Tx(ctx, func(tx *sqldb.Tx) error { return work(tx, "FOR UPDATE SKIP LOCKED") })
	if err != nil {
		// Nothing of the batch was recorded: it counts for nothing.
		return 0, 0, last, err
	}
	return delivered, failed, last, nil
}

// deliverOne calls the listeners for ev and records the outcome through q.
// A listener's failure is recorded as a failed attempt; only a failure to
// record, or the dispatcher stopping, is returned.
func (d *Dispatcher) deliverOne(ctx context.Context, t *platform.Tenant, q sqldb.Querier, ev Stored) (bool, error) {
	if err := d.deliver(ctx, t, ev); err != nil {
		if ctx.Err() != nil {
			// Stopping: not a failed attempt; the event stays pending for
			// the next run.
			return false, ctx.Err()
		}
		d.log.Warn("event listener failed", "tenant", t.ID, "event", ev.Name, "id", ev.ID, "error", err)
		_, err := q.ExecContext(ctx, `UPDATE events SET attempts = attempts + 1, last_error = $1 WHERE id = $2`,
			err.Error(), ev.ID)
		return false, err
	}
	_, err := q.ExecContext(ctx, `UPDATE events SET dispatched_at = $1, attempts = attempts + 1 WHERE id = $2`,
		d.clock.Now(), ev.ID)
	return err == nil, err
}

func (d *Dispatcher) deliver(ctx context.Context, t *platform.Tenant, ev Stored) error {
	for _, l := range d.listeners {
		if err := l(ctx, t, ev); err != nil {
			return err
		}
	}
	return nil
}

// pending reads the next pending events after id after; claim is the
// locking clause that makes them this caller's on PostgreSQL.
func pending(ctx context.Context, q sqldb.Querier, claim string, after int64) ([]Stored, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name, user_id, payload, created_at FROM events
		WHERE dispatched_at IS NULL AND attempts < $1 AND id > $2 ORDER BY id LIMIT $3 `+claim, maxAttempts, after, batchSize)
	if err != nil {
		return nil, fmt.Errorf("events: pending: %w", err)
	}
	defer rows.Close()
	var out []Stored
	for rows.Next() {
		var ev Stored
		var user sql.NullInt64
		var payload string
		if err := rows.Scan(&ev.ID, &ev.Name, &user, &payload, &ev.CreatedAt); err != nil {
			return nil, err
		}
		ev.UserID = user.Int64
		if err := json.Unmarshal([]byte(payload), &ev.Payload); err != nil {
			return nil, fmt.Errorf("events: decode %d: %w", ev.ID, err)
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}
