package social

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

// identity is a person at a provider.
type identity struct {
	Provider, Issuer, Subject, Email string
}

// userOf is the account linked to the identity, 0 when none is.
func userOf(ctx context.Context, q sqldb.Querier, id identity) (int64, error) {
	var userID int64
	err := q.QueryRowContext(ctx, `SELECT user_id FROM social_identities WHERE provider = $1 AND issuer = $2 AND subject = $3`,
		id.Provider, id.Issuer, id.Subject).Scan(&userID)
	if sqldb.NotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("social: find identity: %w", err)
	}
	return userID, nil
}

// link ties the identity to an account.
func link(ctx context.Context, q sqldb.Querier, now time.Time, id identity, userID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO social_identities (provider, issuer, subject, user_id, email, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, id.Provider, id.Issuer, id.Subject, userID, id.Email, now)
	if sqldb.IsUniqueViolation(err) {
		return apperr.New(apperr.Conflict, "This sign-in is already linked to an account. Please sign in again.")
	}
	if err != nil {
		return fmt.Errorf("social: link identity: %w", err)
	}
	return nil
}

// redeem uses up a hand-off; a second use is refused. Rows of expired
// hand-offs are of no use and go first.
func redeem(ctx context.Context, q sqldb.Querier, tokenID string, now time.Time, expires int64) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM social_redemptions WHERE expires_at < $1`, now); err != nil {
		return fmt.Errorf("social: prune redemptions: %w", err)
	}
	_, err := q.ExecContext(ctx, `INSERT INTO social_redemptions (token_id, expires_at) VALUES ($1, $2)`,
		tokenID, time.Unix(expires, 0).UTC())
	if sqldb.IsUniqueViolation(err) {
		return refusal(apperr.Unauthorized, "invalid_token", "This sign-in was already used. Please sign in again.")
	}
	if err != nil {
		return fmt.Errorf("social: redeem: %w", err)
	}
	return nil
}
