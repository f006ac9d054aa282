package accounts

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The caller's own account: the profile routes.

// ProfileChange is a change of one's own personal fields; nil fields stay,
// and an empty phone or bio clears it.
type ProfileChange struct {
	FirstName *string
	LastName  *string
	Phone     *string
	Bio       *string
}

// CredentialsChange is a change of one's own e-mail address and/or
// password, proved by the current password.
type CredentialsChange struct {
	CurrentPassword      string
	Email                *string
	Password             *string
	PasswordConfirmation *string // checked when given
}

var errWrongPassword = apperr.Field("current_password", "The current password is incorrect.")

// Profile returns the caller's account with roles, permissions,
// categories, interests and groups.
func (s *Service) Profile(ctx context.Context, t *platform.Tenant, p *access.Principal) (Profile, error) {
	if err := allow(p.Has(access.UserReadSelf)); err != nil {
		return Profile{}, err
	}
	now := s.now()
	profiles := profilesOf(t)
	d, heard, ok := profiles.get(p.UserID, now)
	if !ok {
		u, err := account(ctx, t.DB, p.UserID)
		if err != nil {
			return Profile{}, err
		}
		if d, err = s.detailOf(ctx, t, u); err != nil {
			return Profile{}, err
		}
		profiles.put(p.UserID, d, heard, now.Add(profileTTL))
	}
	// The principal holds the caller's current roles (every role change
	// ends its cached copy).
	d.Roles = p.Roles
	out := Profile{Detail: d, Permissions: p.PermissionNames()}
	if p.Scoped() {
		out.Token = &TokenInfo{ID: p.TokenID, Scopes: p.Scopes, RateLimitPerMinute: p.RateLimit}
	}
	return out, nil
}

// personalColumns validates the personal fields that the profile and the
// admin edit share and returns the columns to write; nil fields stay.
func personalColumns(probs problems, first, last, phone, bio *string) []column {
	var cols []column
	if first != nil {
		cols = append(cols, column{"first_name", probs.name("first_name", "first name", *first)})
	}
	if last != nil {
		cols = append(cols, column{"last_name", probs.name("last_name", "last name", *last)})
	}
	if phone != nil {
		cols = append(cols, column{"phone", probs.phone(*phone)})
	}
	if bio != nil {
		cols = append(cols, column{"bio", probs.bio(*bio)})
	}
	return cols
}

// UpdateProfile changes the caller's names, phone and bio.
func (s *Service) UpdateProfile(ctx context.Context, t *platform.Tenant, p *access.Principal, in ProfileChange) (Profile, error) {
	if err := allow(canUpdateSelf(p)); err != nil {
		return Profile{}, err
	}
	probs := problems{}
	cols := personalColumns(probs, in.FirstName, in.LastName, in.Phone, in.Bio)
	if err := probs.err(); err != nil {
		return Profile{}, err
	}
	if err := updateUser(ctx, t.DB, s.now(), p.UserID, cols); err != nil {
		return Profile{}, err
	}
	return s.Profile(ctx, t, p)
}

// UpdateCredentials changes the caller's e-mail address and/or password
// after checking the current password; a new password records
// PasswordChanged.
func (s *Service) UpdateCredentials(ctx context.Context, t *platform.Tenant, p *access.Principal, in CredentialsChange) (Profile, error) {
	if err := allow(canUpdateSelf(p)); err != nil {
		return Profile{}, err
	}
	probs := problems{}
	var cols []column
	if in.Email == nil && in.Password == nil {
		probs.add("email", "Give a new email or a new password.")
	}
	if in.Email != nil {
		cols = append(cols, column{"email", probs.email(*in.Email)})
	}
	if in.Password != nil {
		probs.password("password", *in.Password)
		if in.PasswordConfirmation != nil && *in.PasswordConfirmation != *in.Password {
			probs.add("password_confirmation", "The password confirmation does not match.")
		}
	}
	if err := probs.err(); err != nil {
		return Profile{}, err
	}
	if in.Password != nil {
		if err := s.setOwnPassword(ctx, t, p, in.CurrentPassword, *in.Password, cols); err != nil {
			return Profile{}, err
		}
		return s.Profile(ctx, t, p)
	}
	u, err := ByID(ctx, t.DB, p.UserID)
	if err != nil {
		return Profile{}, err
	}
	if !s.Passwords.Verify(u.PasswordHash, in.CurrentPassword) {
		return Profile{}, errWrongPassword
	}
	if err := updateUser(ctx, t.DB, s.now(), p.UserID, cols); err != nil {
		return Profile{}, err
	}
	return s.Profile(ctx, t, p)
}

// ChangePassword sets the caller's password after checking the current
// one, and records PasswordChanged.
func (s *Service) ChangePassword(ctx context.Context, t *platform.Tenant, p *access.Principal, current, password, confirmation string) error {
	if err := allow(canUpdateSelf(p)); err != nil {
		return err
	}
	probs := problems{}
	probs.password("new_password", password)
	if confirmation != password {
		probs.add("new_password_confirmation", "The new password confirmation does not match.")
	}
	if err := probs.err(); err != nil {
		return err
	}
	return s.setOwnPassword(ctx, t, p, current, password, nil)
}

// setOwnPassword checks the current password, then writes the new one
// with the other columns and records PasswordChanged. Every other session
// of the user ends, as whoever else held the old password may hold them;
// the caller's session stays, as the request proved the current password.
func (s *Service) setOwnPassword(ctx context.Context, t *platform.Tenant, p *access.Principal, current, password string, cols []column) error {
	u, err := ByID(ctx, t.DB, p.UserID)
	if err != nil {
		return err
	}
	if !s.Passwords.Verify(u.PasswordHash, current) {
		return errWrongPassword
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return fmt.Errorf("accounts: hash password: %w", err)
	}
	cols = append(cols, column{"password_hash", hash})
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.now()
		if err := updateUser(ctx, tx, now, u.ID, cols); err != nil {
			return err
		}
		if err := s.revokeOtherSessions(ctx, tx, now, u.ID, p.TokenID); err != nil {
			return err
		}
		changed, err := ByID(ctx, tx, u.ID)
		if err != nil {
			return err
		}
		return events.Emit(ctx, tx, now, events.Event{Name: events.PasswordChanged, UserID: u.ID,
			Payload: map[string]any{"email": changed.Email, "name": changed.Name()}})
	})
}
