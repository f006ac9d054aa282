// Package tokens owns scoped personal tokens (lms_pat_...): their secrets,
// scopes, per-token rate limits, revocation, and the agent audit of every
// request made with one. Authentication of a request carrying such a token
// is auth's; what each route requires is its own Scope (httpx.Route),
// which Enforce applies.
package tokens

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Settings is what tokens reads of the administrable configuration.
type Settings interface {
	Int(ctx context.Context, t *platform.Tenant, key string) (int, error)
}

// Setting keys (internal/settings) and their defaults.
const (
	MaxPerUserKey      = "lms_tokens.max_per_user"
	AuditRetentionKey  = "lms_tokens.audit_retention_days"
	DefaultMaxPerUser  = 50
	DefaultRetention   = 90
	MaxRateLimit       = 6000
	maxNameLen         = 100
	revokedMessage     = "Token revoked."
	invalidMessage     = "Invalid token."
	expiredMessage     = "Token expired."
	wideningMessage    = "A token cannot create a token with scopes wider than its own."
	limitReachedFormat = "You already have %d live tokens, the most allowed; revoke one first."
)

// Service issues, lists and revokes scoped tokens.
type Service struct {
	Clock    clock.Clock
	Settings Settings
}

// Token is a scoped token as its owner and admins see it; never its
// secret.
type Token struct {
	ID                 string     `json:"id"`
	UserID             int64      `json:"user_id"`
	Name               string     `json:"name"`
	Scopes             []string   `json:"scopes"`
	RateLimitPerMinute *int       `json:"rate_limit_per_minute"`
	CreatedAt          time.Time  `json:"created_at"`
	ExpiresAt          *time.Time `json:"expires_at"`
	RevokedAt          *time.Time `json:"revoked_at"`
	LastUsedAt         *time.Time `json:"last_used_at"`
	LastUsedIP         *string    `json:"last_used_ip"`
}

// Created is a new token with its secret, shown once.
type Created struct {
	Token
	Secret string `json:"token" doc:"The secret (lms_pat_...), shown in this answer only."`
}

// NewToken is the input of Issue.
type NewToken struct {
	Name   string
	Scopes []string
	// ExpiresAt, when set, must be in the future; nil never expires.
	ExpiresAt *time.Time
	// RateLimitPerMinute, when set, is 1 to 6000.
	RateLimitPerMinute *int
	// Ceiling, when not nil, is the scope set the new token must stay
	// within: the scopes of the token that asks for it (or of a device
	// request being approved).
	Ceiling []string
	// Parent, when set, is the id of the scoped token that asks for this
	// one. The new token never exceeds it: an omitted expiry or rate limit
	// is the parent's, a later expiry or a higher limit is refused (422),
	// and revoking the parent revokes it.
	Parent string
}

// Issue creates a scoped token for the user and returns it with its
// secret, the only time the secret is ever seen. It checks the name, the
// scopes (known names, within in.Ceiling), the expiry, the rate limit and
// the user's number of live tokens (setting lms_tokens.max_per_user).
// The device login calls it once a request is approved. With in.Parent
// it also keeps the token within its parent's expiry and rate limit.
func (s *Service) Issue(ctx context.Context, t *platform.Tenant, userID int64, in NewToken) (Created, error) {
	name := strings.TrimSpace(in.Name)
	if name == "" || utf8.RuneCountInString(name) > maxNameLen {
		return Created{}, apperr.Field("name", "The name must be 1 to 100 characters.")
	}
	scopes, err := Check(in.Scopes)
	if err != nil {
		return Created{}, err
	}
	if in.Ceiling != nil && !Within(scopes, in.Ceiling) {
		return Created{}, apperr.New(apperr.Forbidden, wideningMessage)
	}
	if r := in.RateLimitPerMinute; r != nil && (*r < 1 || *r > MaxRateLimit) {
		return Created{}, apperr.Field("rate_limit_per_minute", "The rate_limit_per_minute must be an integer from 1 to 6000.")
	}
	now := s.Clock.Now()
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return Created{}, apperr.Field("expires_at", "The expires_at must be a time in the future.")
	}
	max, err := s.setting(ctx, t, MaxPerUserKey, DefaultMaxPerUser)
	if err != nil {
		return Created{}, err
	}
	id, secret := newSecret()
	out := Created{Secret: secret, Token: Token{ID: id, UserID: userID, Name: name, Scopes: scopes,
		RateLimitPerMinute: in.RateLimitPerMinute, CreatedAt: now, ExpiresAt: in.ExpiresAt}}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		var live int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM personal_tokens WHERE user_id = $1
			AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)`, userID, now).Scan(&live); err != nil {
			return fmt.Errorf("tokens: count live tokens: %w", err)
		}
		if live >= max {
			return apperr.Field("tokens", fmt.Sprintf(limitReachedFormat, max))
		}
		var parent *string
		if in.Parent != "" {
			if err := withinParent(ctx, tx, now, in.Parent, &out.Token); err != nil {
				return err
			}
			parent = &in.Parent
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO personal_tokens (id, user_id, name, scopes, secret_hash,
			rate_limit_per_minute, created_at, expires_at, parent_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			id, userID, name, strings.Join(scopes, " "), HashSecret(secret), out.RateLimitPerMinute, now, out.ExpiresAt, parent)
		if err != nil {
			return fmt.Errorf("tokens: record token: %w", err)
		}
		return nil
	})
	return out, err
}

// withinParent bounds a new token by the live parent token that asks for
// it: the parent's expiry and rate limit are the child's when it names
// none, and a child asking for more is refused. The parent's row is
// locked (a write that changes nothing) until the child is recorded, so a
// revocation of the parent either comes first and refuses the child, or
// comes after and finds the child to revoke with it.
func withinParent(ctx context.Context, tx *sqldb.Tx, now time.Time, parentID string, child *Token) error {
	var (
		limit   sql.NullInt64
		expires sql.NullTime
	)
	err := tx.QueryRowContext(ctx, `UPDATE personal_tokens SET revoked_at = revoked_at
		WHERE id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
		RETURNING rate_limit_per_minute, expires_at`, parentID, now).Scan(&limit, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return apperr.New(apperr.Unauthorized, revokedMessage)
	}
	if err != nil {
		return fmt.Errorf("tokens: lock parent token: %w", err)
	}
	if expires.Valid {
		switch at := expires.Time; {
		case child.ExpiresAt == nil:
			child.ExpiresAt = &at
		case child.ExpiresAt.After(at):
			return apperr.Field("expires_at", "The expires_at must be at most "+at.UTC().Format(time.RFC3339)+
				", when the token that creates it expires.")
		}
	}
	if limit.Valid {
		switch n := int(limit.Int64); {
		case child.RateLimitPerMinute == nil:
			child.RateLimitPerMinute = &n
		case *child.RateLimitPerMinute > n:
			return apperr.Field("rate_limit_per_minute", "The rate_limit_per_minute must be at most "+strconv.Itoa(n)+
				", the limit of the token that creates it.")
		}
	}
	return nil
}

func (s *Service) setting(ctx context.Context, t *platform.Tenant, key string, def int) (int, error) {
	if s.Settings == nil {
		return def, nil
	}
	n, err := s.Settings.Int(ctx, t, key)
	if err != nil {
		return 0, err
	}
	if n < 1 {
		return def, nil
	}
	return n, nil
}

const tokenColumns = `id, user_id, name, scopes, rate_limit_per_minute, created_at, expires_at, revoked_at,
	last_used_at, last_used_ip`

func scanToken(row interface{ Scan(...any) error }) (Token, error) {
	var (
		tok                    Token
		scopes                 string
		limit                  sql.NullInt64
		expires, revoked, last sql.NullTime
		ip                     sql.NullString
	)
	if err := row.Scan(&tok.ID, &tok.UserID, &tok.Name, &scopes, &limit, &tok.CreatedAt, &expires, &revoked,
		&last, &ip); err != nil {
		return tok, err
	}
	tok.Scopes = strings.Fields(scopes)
	if limit.Valid {
		n := int(limit.Int64)
		tok.RateLimitPerMinute = &n
	}
	tok.ExpiresAt = timePtr(expires)
	tok.RevokedAt = timePtr(revoked)
	tok.LastUsedAt = timePtr(last)
	if ip.Valid {
		tok.LastUsedIP = &ip.String
	}
	return tok, nil
}

func timePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time
	return &v
}

// Filter selects tokens for List.
type Filter struct {
	UserID         int64 // 0: every user
	IncludeRevoked bool
	Offset, Limit  int
}

// List returns one page of the tenant's tokens, newest first, and how
// many match.
func (s *Service) List(ctx context.Context, t *platform.Tenant, f Filter) ([]Token, int64, error) {
	where := []string{"1 = 1"}
	var args []any
	if f.UserID != 0 {
		args = append(args, f.UserID)
		where = append(where, "user_id = $"+strconv.Itoa(len(args)))
	}
	if !f.IncludeRevoked {
		where = append(where, "revoked_at IS NULL")
	}
	cond := strings.Join(where, " AND ")
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM personal_tokens WHERE `+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("tokens: count: %w", err)
	}
	if f.Limit <= 0 {
		f.Limit = 100
	}
	args = append(args, f.Limit, f.Offset)
	rows, err := t.DB.QueryContext(ctx, `SELECT `+tokenColumns+` FROM personal_tokens WHERE `+cond+
		` ORDER BY created_at DESC, id LIMIT $`+strconv.Itoa(len(args)-1)+` OFFSET $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("tokens: list: %w", err)
	}
	defer rows.Close()
	out := []Token{}
	for rows.Next() {
		tok, err := scanToken(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, tok)
	}
	return out, total, rows.Err()
}

// Get returns one token; NotFound when the tenant has none with the id.
func (s *Service) Get(ctx context.Context, t *platform.Tenant, id string) (Token, error) {
	tok, err := scanToken(t.DB.QueryRowContext(ctx, `SELECT `+tokenColumns+` FROM personal_tokens WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return tok, apperr.New(apperr.NotFound, "Token not found.")
	}
	return tok, err
}

// RevokeOwn revokes one of the user's tokens; revoking a revoked one
// again succeeds. Another user's token is not found.
func (s *Service) RevokeOwn(ctx context.Context, t *platform.Tenant, userID int64, id string) error {
	tok, err := s.Get(ctx, t, id)
	if err == nil && tok.UserID != userID {
		err = apperr.New(apperr.NotFound, "Token not found.")
	}
	if err != nil {
		return err
	}
	return s.revoke(ctx, t, id)
}

// RevokeAny revokes any token of the tenant (admins with token_manage).
func (s *Service) RevokeAny(ctx context.Context, t *platform.Tenant, id string) error {
	if _, err := s.Get(ctx, t, id); err != nil {
		return err
	}
	return s.revoke(ctx, t, id)
}

// revoke revokes the token and every live token it made, transitively,
// and tells every process to drop them from its caches. The descendants
// are found by a second statement, once the token's row is locked by the
// first: a child being issued at the same time has then either been
// recorded (and is found) or is refused (see withinParent). Revoking a
// revoked token again still revokes what it made.
func (s *Service) revoke(ctx context.Context, t *platform.Tenant, id string) error {
	now := s.Clock.Now()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE personal_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`,
			now, id)
		if err != nil {
			return fmt.Errorf("tokens: revoke: %w", err)
		}
		var ids []string
		if n, _ := res.RowsAffected(); n > 0 {
			ids = append(ids, id)
		}
		children, err := sqldb.Column[string](tx.QueryContext(ctx, `UPDATE personal_tokens SET revoked_at = $1
			WHERE revoked_at IS NULL AND id IN (
				WITH RECURSIVE made(id) AS (
					SELECT id FROM personal_tokens WHERE parent_id = $2
					UNION SELECT c.id FROM personal_tokens c JOIN made ON c.parent_id = made.id)
				SELECT id FROM made)
			RETURNING id`, now, id))
		if err != nil {
			return fmt.Errorf("tokens: revoke the tokens made by %s: %w", id, err)
		}
		if ids = append(ids, children...); len(ids) > 0 {
			sqldb.Changed(tx, access.TokenKeys(ids)...)
		}
		return nil
	})
}

// RevokeUser revokes every live token of a user, inside the transaction
// that blocks the user or resets the password; every process drops what
// it cached of them once it commits.
func RevokeUser(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) error {
	ids, err := sqldb.Column[string](q.QueryContext(ctx, `UPDATE personal_tokens SET revoked_at = $1
		WHERE user_id = $2 AND revoked_at IS NULL RETURNING id`, now, userID))
	if err != nil || len(ids) == 0 {
		return err
	}
	sqldb.Changed(q, access.TokenKeys(ids)...)
	return nil
}

// Record is what authentication needs of a token's row.
type Record struct {
	ID         string
	UserID     int64
	Scopes     []string
	SecretHash string
	RateLimit  int // 0: none
	ExpiresAt  *time.Time
	Revoked    bool
}

// Load reads the row of a token id for authentication; a 401 when there
// is none. It only reads.
func Load(ctx context.Context, q sqldb.Querier, id string) (Record, error) {
	var (
		r       Record
		scopes  string
		limit   sql.NullInt64
		expires sql.NullTime
		revoked sql.NullTime
	)
	err := q.QueryRowContext(ctx, `SELECT id, user_id, scopes, secret_hash, rate_limit_per_minute, expires_at, revoked_at
		FROM personal_tokens WHERE id = $1`, id).Scan(&r.ID, &r.UserID, &scopes, &r.SecretHash, &limit, &expires, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return r, apperr.New(apperr.Unauthorized, invalidMessage)
	}
	if err != nil {
		return r, fmt.Errorf("tokens: load: %w", err)
	}
	r.Scopes = strings.Fields(scopes)
	r.RateLimit = int(limit.Int64)
	r.ExpiresAt = timePtr(expires)
	r.Revoked = revoked.Valid
	return r, nil
}

// Usable refuses a revoked or expired token with a 401.
func (r Record) Usable(now time.Time) error {
	if r.Revoked {
		return apperr.New(apperr.Unauthorized, revokedMessage)
	}
	if r.ExpiresAt != nil && !now.Before(*r.ExpiresAt) {
		return apperr.New(apperr.Unauthorized, expiredMessage)
	}
	return nil
}

// Refused is the 401 of a malformed or unknown secret.
func Refused() error { return apperr.New(apperr.Unauthorized, invalidMessage) }
