package events

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// Delivery states.
const (
	StatePending   = "pending"
	StateDelivered = "delivered"
	StateFailed    = "failed"
)

// Delivery is one (event, listener) pair as admins see it.
type Delivery struct {
	ID            int64      `json:"id"`
	EventID       int64      `json:"event_id"`
	Event         string     `json:"event"`
	UserID        *int64     `json:"user_id"`
	EventAt       time.Time  `json:"event_created_at"`
	Listener      string     `json:"listener"`
	State         string     `json:"state" enum:"pending,delivered,failed"`
	Attempts      int        `json:"attempts"`
	NextAttemptAt *time.Time `json:"next_attempt_at" doc:"When a pending delivery is tried next; null otherwise."`
	LastError     string     `json:"last_error"`
	DeliveredAt   *time.Time `json:"delivered_at"`
}

// Filter selects deliveries; zero fields select all.
type Filter struct {
	State, Listener, Event string
	// ListenerPrefix selects a family (webhook endpoints).
	ListenerPrefix string
	// From and To bound the event's time (To excluded).
	From, To      time.Time
	Offset, Limit int
}

func (f Filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, fmt.Sprintf(cond, len(args)))
	}
	if f.State != "" {
		add("p.state = $%d", f.State)
	}
	if f.Listener != "" {
		add("p.listener = $%d", f.Listener)
	}
	if f.ListenerPrefix != "" {
		add("p.listener LIKE $%d", strings.NewReplacer("%", `\%`, "_", `\_`).Replace(f.ListenerPrefix)+"%")
		conds[len(conds)-1] += ` ESCAPE '\'`
	}
	if f.Event != "" {
		add("e.name = $%d", f.Event)
	}
	if !f.From.IsZero() {
		add("e.created_at >= $%d", f.From)
	}
	if !f.To.IsZero() {
		add("e.created_at < $%d", f.To)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ListDeliveries answers one page of the deliveries f selects, newest
// first, and their total.
func ListDeliveries(ctx context.Context, q sqldb.Querier, f Filter) ([]Delivery, int64, error) {
	where, args := f.where()
	from := ` FROM event_deliveries p JOIN events e ON e.id = p.event_id` + where
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*)`+from, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("events: count deliveries: %w", err)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit, f.Offset)
	rows, err := q.QueryContext(ctx, `SELECT p.id, p.event_id, e.name, e.user_id, e.created_at, p.listener, p.state,
		p.attempts, p.next_attempt_at, p.last_error, p.delivered_at`+from+
		fmt.Sprintf(` ORDER BY p.id DESC LIMIT $%d OFFSET $%d`, len(args)-1, len(args)), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("events: deliveries: %w", err)
	}
	defer rows.Close()
	out := []Delivery{}
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, d)
	}
	return out, total, rows.Err()
}

func scanDelivery(row interface{ Scan(...any) error }) (Delivery, error) {
	var d Delivery
	var user sql.NullInt64
	var next time.Time
	var delivered sql.NullTime
	if err := row.Scan(&d.ID, &d.EventID, &d.Event, &user, &d.EventAt, &d.Listener, &d.State, &d.Attempts,
		&next, &d.LastError, &delivered); err != nil {
		return d, err
	}
	if user.Valid {
		d.UserID = &user.Int64
	}
	if d.State == StatePending {
		d.NextAttemptAt = &next
	}
	if delivered.Valid {
		d.DeliveredAt = &delivered.Time
	}
	return d, nil
}

// GetDelivery reads one delivery; sql.ErrNoRows when there is none.
func GetDelivery(ctx context.Context, q sqldb.Querier, id int64) (Delivery, error) {
	return scanDelivery(q.QueryRowContext(ctx, `SELECT p.id, p.event_id, e.name, e.user_id, e.created_at, p.listener,
		p.state, p.attempts, p.next_attempt_at, p.last_error, p.delivered_at
		FROM event_deliveries p JOIN events e ON e.id = p.event_id WHERE p.id = $1`, id))
}

// RetryDeliveries makes the failed or pending deliveries f selects (failed
// only unless f.State says otherwise) due at now, with a fresh retry
// window and backoff, and returns how many it changed. Delivered pairs are
// never run again. The caller kicks the tenant's dispatcher.
func RetryDeliveries(ctx context.Context, q sqldb.Querier, now time.Time, f Filter, ids ...int64) (int64, error) {
	if f.State == "" {
		f.State = StateFailed
	}
	if f.State == StateDelivered {
		return 0, nil
	}
	where, args := f.where()
	if len(ids) > 0 {
		var in []string
		for _, id := range ids {
			args = append(args, id)
			in = append(in, fmt.Sprintf("$%d", len(args)))
		}
		where += " AND p.id IN (" + strings.Join(in, ", ") + ")"
	}
	args = append(args, now)
	n := len(args)
	res, err := q.ExecContext(ctx, fmt.Sprintf(`UPDATE event_deliveries SET state = 'pending', attempts = 0,
		next_attempt_at = $%d, created_at = $%d, updated_at = $%d
		WHERE id IN (SELECT p.id FROM event_deliveries p JOIN events e ON e.id = p.event_id%s)`, n, n, n, where), args...)
	if err != nil {
		return 0, fmt.Errorf("events: retry deliveries: %w", err)
	}
	return res.RowsAffected()
}

// Backlog counts a tenant's dead letters and its pending deliveries
// overdue at now by more than a minute (a dispatcher that is not keeping
// up, or none running).
func Backlog(ctx context.Context, q sqldb.Querier, now time.Time) (failed, overdue int64, err error) {
	err = q.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(CASE WHEN state = 'failed' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN state = 'pending' AND next_attempt_at < $1 THEN 1 ELSE 0 END), 0)
		FROM event_deliveries WHERE state <> 'delivered'`, now.Add(-time.Minute)).Scan(&failed, &overdue)
	return failed, overdue, err
}

// Unsettled counts the events whose pairs are not made yet, the pairs a
// dispatcher holds now and the pending pairs due at now: zero when every
// delivery due so far has been run and recorded (tests wait for it). The
// due ones count because another dispatcher may have made them just after
// the caller last looked, and not yet claimed them.
func Unsettled(ctx context.Context, q sqldb.Querier, now time.Time) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM event_deliveries
			WHERE claim IS NOT NULL OR (state = 'pending' AND next_attempt_at <= $1))
		+ (SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL)`, now).Scan(&n)
	return n, err
}
