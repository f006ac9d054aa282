package accounts

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// The credential columns of users belong here like the rest of the table;
// auth decides when they change (reset tokens, verification, new
// passwords) and calls these.

// SetResetToken stores the hash of a password reset token issued at.
func SetResetToken(ctx context.Context, q sqldb.Querier, userID int64, hash string, at time.Time) error {
	if _, err := q.ExecContext(ctx, `UPDATE users SET password_reset_token = $1, password_reset_at = $2 WHERE id = $3`,
		hash, at, userID); err != nil {
		return fmt.Errorf("accounts: store reset token of %d: %w", userID, err)
	}
	return nil
}

// ResetToken returns the stored hash of the user's reset token and when it
// was issued; nil when none is pending.
func ResetToken(ctx context.Context, q sqldb.Querier, userID int64) (hash *string, at *time.Time, err error) {
	if err := q.QueryRowContext(ctx, `SELECT password_reset_token, password_reset_at FROM users WHERE id = $1`, userID).
		Scan(&hash, &at); err != nil {
		return nil, nil, fmt.Errorf("accounts: load reset token of %d: %w", userID, err)
	}
	return hash, at, nil
}

// SetPassword stores a new password hash and ends any pending reset.
func SetPassword(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, hash string) error {
	return updateUser(ctx, q, now, userID, []column{{"password_hash", hash}, {"password_reset_token", nil},
		{"password_reset_at", nil}})
}

// MarkVerified records that the user confirmed the e-mail address.
func MarkVerified(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) error {
	return updateUser(ctx, q, now, userID, []column{{"email_verified_at", now}})
}
