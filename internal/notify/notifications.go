// Package notify is the notification log of the platform (every event that
// carries a user, stored as a notification of that user) and the delivery of
// mail.
package notify

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Notification is one event as stored for the user it concerns.
type Notification struct {
	ID        int64          `json:"id"`
	Event     string         `json:"event"`
	Data      map[string]any `json:"data"`
	ReadAt    *time.Time     `json:"read_at"`
	CreatedAt time.Time      `json:"created_at"`
	UserID    int64          `json:"user_id"`
}

// Notifications is the notification log. Exclude names the events that are
// never stored.
type Notifications struct {
	Clock   clock.Clock
	Exclude []string
	// UserExists is accounts' answer to whether a user still exists:
	// accounts mails through this package, so it is handed in, not imported.
	UserExists func(ctx context.Context, q sqldb.Querier, id int64) (bool, error)
}

// Filter selects one page of notifications. A zero UserID means every
// user's; Unread keeps only those not yet read; Limit is the page size.
type Filter struct {
	UserID int64
	Event  string
	Unread bool
	Offset int
	Limit  int
}

var (
	errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")
	errNotYours     = apperr.New(apperr.Forbidden, "You cannot read another user's notification.")
	errNotFound     = apperr.New(apperr.NotFound, "Notification not found.")
	errNoUser       = apperr.New(apperr.NotFound, "User not found.")
)

// CanListOwn reports whether p may use the admin notification routes for
// their own notifications.
func CanListOwn(p *access.Principal) bool {
	return p.Has(access.NotificationListAccessOwn) || p.Has(access.NotificationListAccess)
}

// CanListAll reports whether p may see and mark every user's notifications
// through the admin routes.
func CanListAll(p *access.Principal) bool {
	return p.Has(access.NotificationListAccess)
}

// Stored reports whether events of this name go into the log.
func (n *Notifications) Stored(name string) bool {
	return !slices.Contains(n.Exclude, name)
}

// EventNames lists the names of the events the log stores, in catalog order.
func (n *Notifications) EventNames() []string {
	out := make([]string, 0, len(events.Catalog))
	for _, e := range events.Catalog {
		if n.Stored(e.Name) {
			out = append(out, e.Name)
		}
	}
	return out
}

// Wants reports whether Listener stores ev: an event with a user, of a
// name the log stores.
func (n *Notifications) Wants(ev events.Stored) bool { return ev.UserID != 0 && n.Stored(ev.Name) }

// Listener stores ev as a notification of its user. Redelivery of the same
// event stores nothing new, and an event of a user who no longer exists
// (AccountDeleted) is skipped.
func (n *Notifications) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	if !n.Wants(ev) {
		return nil
	}
	exists, err := n.UserExists(ctx, t.DB, ev.UserID)
	if err != nil || !exists {
		return err
	}
	payload := ev.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("notify: encode event %d: %w", ev.ID, err)
	}
	_, err = t.DB.ExecContext(ctx, `INSERT INTO notifications (user_id, event_id, event, data, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (event_id, user_id) DO NOTHING`,
		ev.UserID, ev.ID, ev.Name, string(data), n.Clock.Now())
	if err != nil {
		// The user may have been deleted since the check above; then there
		// is nobody left to notify.
		if exists, cerr := n.UserExists(ctx, t.DB, ev.UserID); cerr == nil && !exists {
			return nil
		}
		return fmt.Errorf("notify: store event %d for user %d: %w", ev.ID, ev.UserID, err)
	}
	return nil
}

// List returns one page of the notifications f selects, newest event
// first (deliveries may land in another order), and how many there are in
// all.
func (n *Notifications) List(ctx context.Context, t *platform.Tenant, f Filter) ([]Notification, int64, error) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.UserID != 0 {
		where = append(where, "user_id = "+arg(f.UserID))
	}
	if f.Event != "" {
		where = append(where, "event = "+arg(f.Event))
	}
	if f.Unread {
		where = append(where, "read_at IS NULL")
	}
	cond := sqldb.Where(where)
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM notifications`+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("notify: count notifications: %w", err)
	}
	query := `SELECT id, user_id, event, data, read_at, created_at FROM notifications` + cond +
		` ORDER BY event_id DESC, id DESC LIMIT ` + arg(f.Limit) + ` OFFSET ` + arg(f.Offset)
	rows, err := t.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("notify: list notifications: %w", err)
	}
	defer rows.Close()
	out := []Notification{}
	for rows.Next() {
		nt, err := scanNotification(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, nt)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("notify: list notifications: %w", err)
	}
	return out, total, nil
}

// ListFor is List restricted to one existing user; an unknown user is
// NotFound.
func (n *Notifications) ListFor(ctx context.Context, t *platform.Tenant, f Filter) ([]Notification, int64, error) {
	exists, err := n.UserExists(ctx, t.DB, f.UserID)
	if err != nil {
		return nil, 0, err
	}
	if !exists {
		return nil, 0, errNoUser
	}
	return n.List(ctx, t, f)
}

// Get returns one notification.
func (n *Notifications) Get(ctx context.Context, t *platform.Tenant, id int64) (Notification, error) {
	row := t.DB.QueryRowContext(ctx, `SELECT id, user_id, event, data, read_at, created_at
		FROM notifications WHERE id = $1`, id)
	nt, err := scanNotification(row)
	if sqldb.NotFound(err) {
		return Notification{}, errNotFound
	}
	return nt, err
}

// MarkRead marks notification id read for p and returns it. Only its owner
// may, unless anyone is set: the admin routes let holders of
// NotificationListAccess mark every user's. A notification already read
// keeps its first read time.
func (n *Notifications) MarkRead(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, anyone bool) (Notification, error) {
	nt, err := n.Get(ctx, t, id)
	if err != nil {
		return Notification{}, err
	}
	if nt.UserID != p.UserID && !anyone {
		return Notification{}, errNotYours
	}
	if nt.ReadAt != nil {
		return nt, nil
	}
	if _, err := t.DB.ExecContext(ctx, `UPDATE notifications SET read_at = $1 WHERE id = $2 AND read_at IS NULL`,
		n.Clock.Now(), id); err != nil {
		return Notification{}, fmt.Errorf("notify: mark notification %d read: %w", id, err)
	}
	return n.Get(ctx, t, id)
}

// MarkAllRead marks every unread notification of the user read and returns
// how many it marked.
func (n *Notifications) MarkAllRead(ctx context.Context, t *platform.Tenant, userID int64) (int64, error) {
	res, err := t.DB.ExecContext(ctx, `UPDATE notifications SET read_at = $1 WHERE user_id = $2 AND read_at IS NULL`,
		n.Clock.Now(), userID)
	if err != nil {
		return 0, fmt.Errorf("notify: mark notifications of user %d read: %w", userID, err)
	}
	return res.RowsAffected()
}

type scanner interface {
	Scan(dest ...any) error
}

func scanNotification(s scanner) (Notification, error) {
	var nt Notification
	var data string
	var readAt sql.NullTime
	if err := s.Scan(&nt.ID, &nt.UserID, &nt.Event, &data, &readAt, &nt.CreatedAt); err != nil {
		return Notification{}, fmt.Errorf("notify: read notification: %w", err)
	}
	if err := json.Unmarshal([]byte(data), &nt.Data); err != nil {
		return Notification{}, fmt.Errorf("notify: decode notification %d: %w", nt.ID, err)
	}
	if nt.Data == nil {
		nt.Data = map[string]any{}
	}
	if readAt.Valid {
		at := readAt.Time.UTC()
		nt.ReadAt = &at
	}
	nt.CreatedAt = nt.CreatedAt.UTC()
	return nt, nil
}
