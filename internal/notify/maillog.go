package notify

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/platform"
)

// Deliver records m in the tenant's mail log and sends it when a mailer is
// configured. For mail caused by an event (eventID != 0) the log makes
// delivery happen once per event, recipient and subject, even though events
// may be dispatched more than once.
func Deliver(ctx context.Context, t *platform.Tenant, mailer Mailer, now time.Time, eventID int64, m Message) error {
	var event any
	if eventID != 0 {
		event = eventID
	}
	var id int64
	err := t.DB.QueryRowContext(ctx, `INSERT INTO mail_log (recipient, subject, body, html, event_id, delivered, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING id`,
		m.To, m.Subject, m.Text, m.HTML, event, mailer == nil, now).Scan(&id)
	if err == sql.ErrNoRows {
		return nil // this event's mail was already delivered
	}
	if err != nil {
		return fmt.Errorf("notify: record mail: %w", err)
	}
	if mailer == nil {
		return nil
	}
	if err := mailer.Send(ctx, m); err != nil {
		// Forget the attempt so the event's next dispatch sends again.
		t.DB.ExecContext(context.WithoutCancel(ctx), `DELETE FROM mail_log WHERE id = $1`, id)
		return fmt.Errorf("notify: send mail to listener's recipient: %w", err)
	}
	_, err = t.DB.ExecContext(ctx, `UPDATE mail_log SET delivered = $1 WHERE id = $2`, true, id)
	return err
}

// MailSent reports whether mail for the event already went out, so a
// listener with side effects (a new reset token) runs them only once.
func MailSent(ctx context.Context, t *platform.Tenant, eventID int64) (bool, error) {
	var n int
	err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM mail_log WHERE event_id = $1`, eventID).Scan(&n)
	return n > 0, err
}
