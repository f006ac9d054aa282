package accounts

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Account deletion: immediate (DELETE /api/profile, the admin route) or
// confirmed through a link mailed by POST /api/profile/delete/init.

const deleteTokenLifetime = 24 * time.Hour

var errDeleteLink = apperr.New(apperr.Forbidden, "This deletion link is invalid or has expired.")

// hashToken is how the deletion token is stored: a copy of the database
// must not hand out working deletion links.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// deleteAccount records AccountDeleted (its payload keeps the address, as
// the user row is gone when listeners run) and deletes the user in the
// same transaction; its avatar files go after the commit. With tokenHash
// the row is only deleted while it still holds that deletion token, so a
// link works once.
func (s *Service) deleteAccount(ctx context.Context, t *platform.Tenant, u User, extra map[string]any, tokenHash string) error {
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.now()
		payload := map[string]any{"email": u.Email, "first_name": u.FirstName, "last_name": u.LastName, "name": u.Name()}
		maps.Copy(payload, extra)
		if err := events.Emit(ctx, tx, now, events.Event{Name: events.AccountDeleted, UserID: u.ID, Payload: payload}); err != nil {
			return err
		}
		query, a := `DELETE FROM users WHERE id = $1`, []any{u.ID}
		if tokenHash != "" {
			query, a = query+` AND delete_token = $2 AND delete_token_expires_at > $3`, append(a, tokenHash, now)
		}
		res, err := tx.ExecContext(ctx, query, a...)
		if err != nil {
			return fmt.Errorf("accounts: delete user %d: %w", u.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			if tokenHash != "" {
				return errDeleteLink
			}
			return errUserNotFound
		}
		sqldb.Changed(tx, access.UserKey(u.ID))
		return nil
	})
	if err != nil {
		return err
	}
	s.dropAvatars(ctx, t, u.ID)
	return nil
}

// DeleteSelf deletes the caller's own account at once.
func (s *Service) DeleteSelf(ctx context.Context, t *platform.Tenant, p *access.Principal) error {
	if err := allow(canDeleteSelf(p)); err != nil {
		return err
	}
	u, err := ByID(ctx, t.DB, p.UserID)
	if err != nil {
		return err
	}
	return s.deleteAccount(ctx, t, u, nil, "")
}

// RequestDeletion stores a new deletion token (valid 24 hours, replacing
// any earlier one), records AccountDeletionRequested and mails the
// confirmation link <origin>/api/profile/delete/<id>/<token>.
func (s *Service) RequestDeletion(ctx context.Context, t *platform.Tenant, p *access.Principal, origin string) error {
	if err := allow(canDeleteSelf(p)); err != nil {
		return err
	}
	u, err := ByID(ctx, t.DB, p.UserID)
	if err != nil {
		return err
	}
	token := rand.Text()
	now := s.now()
	expires := now.Add(deleteTokenLifetime)
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if err := updateUser(ctx, tx, now, u.ID, []column{{"delete_token", hashToken(token)},
			{"delete_token_expires_at", expires}}); err != nil {
			return err
		}
		// The token stays out of the event: events are listed to admins.
		return events.Emit(ctx, tx, now, events.Event{Name: events.AccountDeletionRequested, UserID: u.ID,
			Payload: map[string]any{"email": u.Email, "name": u.Name(), "expires_at": expires}})
	})
	if err != nil {
		return err
	}
	link := origin + "/api/profile/delete/" + strconv.FormatInt(u.ID, 10) + "/" + token
	// The link is the proof of the deletion, so it stays out of the event
	// (events are listed to admins) and the mail goes out here, on the
	// event's template.
	d, _, err := s.Mail.Data(ctx, t, events.Stored{Name: events.AccountDeletionRequested, UserID: u.ID, CreatedAt: now})
	if err == nil {
		d.Link, d.Expires = link, expires
		err = s.Mail.Mail(ctx, t, 0, notify.Slot{Event: events.AccountDeletionRequested, Channel: notify.Email,
			Recipient: notify.ToUser}, u.Email, d)
	}
	if err != nil {
		return apperr.Wrap(apperr.Unavailable, err, "The confirmation mail could not be sent. Please try again later.")
	}
	return nil
}

// ConfirmDeletion deletes the account when token is its unexpired
// deletion token. It needs no login: the mailed link is the proof.
func (s *Service) ConfirmDeletion(ctx context.Context, t *platform.Tenant, userID int64, token string) error {
	u, err := ByID(ctx, t.DB, userID)
	if err != nil {
		return err
	}
	var stored sql.NullString
	var expires sql.NullTime
	if err := t.DB.QueryRowContext(ctx, `SELECT delete_token, delete_token_expires_at FROM users WHERE id = $1`, userID).
		Scan(&stored, &expires); err != nil {
		return fmt.Errorf("accounts: load deletion token: %w", err)
	}
	hash := hashToken(token)
	if !stored.Valid || !expires.Valid || subtle.ConstantTimeCompare([]byte(stored.String), []byte(hash)) != 1 ||
		!s.now().Before(expires.Time) {
		return errDeleteLink
	}
	return s.deleteAccount(ctx, t, u, map[string]any{"confirmed": true}, hash)
}
