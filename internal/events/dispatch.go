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
)

// Listener handles one event of a tenant. Listeners must be idempotent:
// delivery is at least once.
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
			if _, err := d.DispatchPending(ctx, t); err != nil && ctx.Err() == nil {
				d.log.Error("dispatch events", "tenant", t.ID, "error", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.Kicked():
			case <-tick.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

const maxAttempts = 10

// DispatchPending delivers the tenant's pending events, each at most once
// per call, and returns how many were delivered. A failed delivery is
// counted and retried on a later call, up to maxAttempts.
func (d *Dispatcher) DispatchPending(ctx context.Context, t *platform.Tenant) (int, error) {
	delivered := 0
	var cursor int64
	for {
		batch, err := pending(ctx, t, cursor, 100)
		if err != nil || len(batch) == 0 {
			return delivered, err
		}
		for _, ev := range batch {
			cursor = ev.ID
			if err := d.deliver(ctx, t, ev); err != nil {
				if ctx.Err() != nil {
					// Stopping: not a failed attempt; the event stays
					// pending for the next run.
					return delivered, ctx.Err()
				}
				d.log.Warn("event listener failed", "tenant", t.ID, "event", ev.Name, "id", ev.ID, "error", err)
				if _, uerr := t.DB.ExecContext(ctx, `UPDATE events SET attempts = attempts + 1, last_error = $1 WHERE id = $2`,
					err.Error(), ev.ID); uerr != nil {
					return delivered, uerr
				}
				continue
			}
			if _, err := t.DB.ExecContext(ctx, `UPDATE events SET dispatched_at = $1, attempts = attempts + 1 WHERE id = $2`,
				d.clock.Now(), ev.ID); err != nil {
				return delivered, err
			}
			delivered++
		}
	}
}

func (d *Dispatcher) deliver(ctx context.Context, t *platform.Tenant, ev Stored) error {
	for _, l := range d.listeners {
		if err := l(ctx, t, ev); err != nil {
			return err
		}
	}
	return nil
}

func pending(ctx context.Context, t *platform.Tenant, after int64, n int) ([]Stored, error) {
	rows, err := t.DB.QueryContext(ctx, `SELECT id, name, user_id, payload, created_at FROM events
		WHERE dispatched_at IS NULL AND attempts < $1 AND id > $2 ORDER BY id LIMIT $3`, maxAttempts, after, n)
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
