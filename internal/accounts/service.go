package accounts

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/notify"
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
	Mailer    notify.Mailer // nil: mail is only recorded
	// RevokeSessions ends every token of a user except the one named by
	// keep (empty: all), in the caller's transaction (auth.RevokeSessions;
	// accounts cannot import auth).
	RevokeSessions func(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, keep string) error
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
