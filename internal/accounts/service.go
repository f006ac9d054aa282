package accounts

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
)

// PasswordHasher hashes and checks passwords (auth.Passwords).
type PasswordHasher interface {
	Hash(password string) (string, error)
	Verify(hash, password string) bool
}

// Service carries the profile, admin user and group operations. Every
// operation takes the caller and checks the policy first.
type Service struct {
	Clock     clock.Clock
	Passwords PasswordHasher
	// Mail sends the deletion link on the AccountDeletionRequested template.
	Mail *notify.Channels
	// RevokeSessions ends every token of a user except the one named by
	// keep (empty: all), in the caller's transaction (auth.RevokeSessions;
	// accounts cannot import auth).
	RevokeSessions func(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, keep string) error
	// FileURL, when set, turns a stored file key into a signed link; user
	// details then carry avatar_url.
	FileURL func(t *platform.Tenant, key string) string
	// Scanner, when set, checks uploaded avatars for malware.
	Scanner scan.Scanner
}

// detail loads a user's detail with a link to the avatar.
func (s *Service) detail(ctx context.Context, t *platform.Tenant, id int64) (Detail, error) {
	u, err := ByID(ctx, t.DB, id)
	if err != nil {
		return Detail{}, err
	}
	return s.detailOf(ctx, t, u)
}

// detailOf completes a loaded user with its categories, interests, groups
// and avatar link.
func (s *Service) detailOf(ctx context.Context, t *platform.Tenant, u User) (Detail, error) {
	d, err := detailOf(ctx, t.DB, u)
	if err == nil && s.FileURL != nil && d.AvatarPath != nil {
		link := s.FileURL(t, *d.AvatarPath)
		d.AvatarURL = &link
	}
	return d, err
}

func notFound(message string) error { return apperr.New(apperr.NotFound, message) }

func (s *Service) now() time.Time { return s.Clock.Now().UTC() }

func (s *Service) revokeSessions(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) error {
	return s.revokeOtherSessions(ctx, q, now, userID, "")
}

func (s *Service) revokeOtherSessions(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, keep string) error {
	if s.RevokeSessions == nil {
		return nil
	}
	return s.RevokeSessions(ctx, q, now, userID, keep)
}
