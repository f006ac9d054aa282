package accounts

import (
	"context"
	"strconv"
	"strings"
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

// args builds the argument list of a query with numbered placeholders.
type args []any

// add appends v and returns its placeholder.
func (a *args) add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// list appends each id and returns "$3, $4, $5".
func (a *args) list(ids []int64) string {
	ph := make([]string, len(ids))
	for i, id := range ids {
		ph[i] = a.add(id)
	}
	return strings.Join(ph, ", ")
}

// likePattern matches value anywhere, with LIKE's wildcards in value taken
// literally (the queries say ESCAPE '\').
func likePattern(value string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return "%" + r.Replace(strings.TrimSpace(value)) + "%"
}

// uniqueIDs drops repeated ids, keeping the first order.
func uniqueIDs(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
