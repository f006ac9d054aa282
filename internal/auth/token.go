// Package auth issues and checks access tokens and carries the login,
// registration, password and impersonation flows.
package auth

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/tokens"
)

// RememberLifetime is the lifetime of a remember-me token.
const RememberLifetime = 30 * 24 * time.Hour

// Claims are the claims of an access token.
type Claims struct {
	Tenant int64 `json:"tenant"`
	jwt.RegisteredClaims
}

// Issued is a freshly signed token.
type Issued struct {
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Issue records and signs a token for the user in the tenant. Inside tx so
// the token exists only if the surrounding change (a login event) commits.
func Issue(ctx context.Context, tx sqldb.Querier, t *platform.Tenant, now time.Time, userID int64,
	lifetime time.Duration, remember bool, impersonator int64) (Issued, error) {
	jti := make([]byte, 16)
	if _, err := rand.Read(jti); err != nil {
		return Issued{}, err
	}
	id := base64.RawURLEncoding.EncodeToString(jti)
	exp := now.Add(lifetime).Truncate(time.Second)
	var imp any
	if impersonator != 0 {
		imp = impersonator
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO access_tokens (id, user_id, remember, impersonator_id, created_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, id, userID, remember, imp, now, exp); err != nil {
		return Issued{}, fmt.Errorf("auth: record token: %w", err)
	}
	claims := Claims{Tenant: t.ID, RegisteredClaims: jwt.RegisteredClaims{
		Subject:   strconv.FormatInt(userID, 10),
		ID:        id,
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
		Issuer:    t.PrimaryHost(),
	}}
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = t.Keys.ID
	signed, err := tok.SignedString(t.Keys.Private)
	if err != nil {
		return Issued{}, fmt.Errorf("auth: sign token: %w", err)
	}
	return Issued{Token: signed, ExpiresAt: exp}, nil
}

// Parse checks the signature and times of a token with the tenant's public
// key. A token of another tenant fails here: its kid, key and tenant claim
// all differ. A token string already verified for this tenant skips the RSA
// check; its times are still checked against now on every call.
func Parse(t *platform.Tenant, now time.Time, raw string, leeway time.Duration) (*Claims, error) {
	cache := state(t).verified
	claims, ok := cache.get(raw)
	if !ok {
		var err error
		if claims, err = verify(t, raw); err != nil {
			return nil, err
		}
		cache.put(raw, claims)
	}
	if err := checkTimes(claims, now, leeway); err != nil {
		return nil, err
	}
	return claims, nil
}

func verify(t *platform.Tenant, raw string) (*Claims, error) {
	claims := &Claims{}
	// Times are checked by checkTimes, so the parser skips them.
	_, err := jwt.ParseWithClaims(raw, claims, func(tok *jwt.Token) (any, error) {
		if kid, _ := tok.Header["kid"].(string); kid != t.Keys.ID {
			return nil, errors.New("unknown key id")
		}
		return t.Keys.Public, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithoutClaimsValidation())
	if err != nil {
		return nil, apperr.Wrap(apperr.Unauthorized, err, "Invalid token.")
	}
	if claims.Tenant != t.ID || claims.ID == "" || claims.ExpiresAt == nil {
		return nil, apperr.New(apperr.Unauthorized, "Invalid token.")
	}
	return claims, nil
}

func checkTimes(c *Claims, now time.Time, leeway time.Duration) error {
	if !now.Before(c.ExpiresAt.Add(leeway)) {
		return apperr.New(apperr.Unauthorized, "Token expired.")
	}
	if c.NotBefore != nil && now.Add(leeway).Before(c.NotBefore.Time) {
		return apperr.New(apperr.Unauthorized, "Token not valid yet.")
	}
	if c.IssuedAt != nil && now.Add(leeway).Before(c.IssuedAt.Time) {
		return apperr.New(apperr.Unauthorized, "Token used before issued.")
	}
	return nil
}

// LoadPrincipal turns checked claims into the caller: the token must still
// be recorded and unrevoked, and its user active. One query reads token,
// user and roles; the principal is then kept until its data changes (see
// principalCache), so the principal it returns is shared and read-only.
func LoadPrincipal(ctx context.Context, t *platform.Tenant, now time.Time, c *Claims) (*access.Principal, error) {
	cache := state(t).principals
	p, gen, ok := cache.get(c.ID, now)
	if ok {
		return p, nil
	}
	p, err := loadPrincipal(ctx, t, now, c)
	if err != nil {
		return nil, err
	}
	// Kept no longer than the token lives.
	expires := now.Add(principalTTL)
	if c.ExpiresAt.Before(expires) {
		expires = c.ExpiresAt.Time
	}
	cache.put(c.ID, p, gen, expires)
	return p, nil
}

func loadPrincipal(ctx context.Context, t *platform.Tenant, now time.Time, c *Claims) (*access.Principal, error) {
	row, err := tokenRowOf(ctx, t, c.ID)
	if err != nil {
		return nil, fmt.Errorf("auth: load principal: %w", err)
	}
	if !row.found {
		return nil, apperr.New(apperr.Unauthorized, "Invalid token.")
	}
	if row.revoked.Valid || strconv.FormatInt(row.user.ID, 10) != c.Subject || !now.Before(row.expires) {
		return nil, apperr.New(apperr.Unauthorized, "Token revoked.")
	}
	p, err := userPrincipal(t, row.user)
	if err != nil {
		return nil, err
	}
	p.TokenID, p.ImpersonatorID = c.ID, row.impersonator.Int64
	return p, nil
}

// tokenRow is a recorded access token and its user; found is false when
// either is absent.
type tokenRow struct {
	found        bool
	user         accounts.User
	revoked      sql.NullTime
	expires      time.Time
	impersonator sql.NullInt64
}

// tokenAlong reads the token's columns into r, with its user.
func tokenAlong(r *tokenRow) accounts.Along {
	return accounts.Along{Table: "access_tokens x", Key: "id", Columns: "x.revoked_at, x.expires_at, x.impersonator_id",
		Into: []any{&r.revoked, &r.expires, &r.impersonator}}
}

// tokenRowOf reads the token and its user in one round trip: a replica
// meets every token of a class for the first time at the start of its
// exam. On PostgreSQL the reads of concurrent requests share one query
// (sqldb.Coalescer), which still sees every revocation committed before
// the request asked.
func tokenRowOf(ctx context.Context, t *platform.Tenant, id string) (tokenRow, error) {
	if t.DB.Dialect == sqldb.Postgres {
		return state(t).tokenRows.Get(ctx, id)
	}
	var r tokenRow
	u, err := accounts.ByRowOf(ctx, t.DB, tokenAlong(&r), id)
	if apperr.Is(err, apperr.NotFound) {
		return tokenRow{}, nil
	}
	r.found, r.user = err == nil, u
	return r, err
}

// tokenRowsOf is tokenRowOf for many tokens in one PostgreSQL query.
func tokenRowsOf(ctx context.Context, t *platform.Tenant, ids []string) (map[string]tokenRow, error) {
	out := make(map[string]tokenRow, len(ids))
	for _, id := range ids {
		out[id] = tokenRow{}
	}
	var r tokenRow
	err := accounts.ByRowsOf(ctx, t.DB, tokenAlong(&r), ids, func(id string, u accounts.User) {
		r.found, r.user = true, u
		out[id] = r
	})
	return out, err
}

// UserPrincipal is an active user as a principal with the permissions of
// its roles, for acts done later on a user's behalf (the topics an LTI
// tool returns to the author who asked for them); a blocked user is
// refused.
func UserPrincipal(t *platform.Tenant, u accounts.User) (*access.Principal, error) {
	return userPrincipal(t, u)
}

// userPrincipal is an active user as a principal with the permissions of
// its roles; a blocked user is refused.
func userPrincipal(t *platform.Tenant, u accounts.User) (*access.Principal, error) {
	if !u.IsActive {
		return nil, apperr.New(apperr.Unauthorized, "Your account is blocked.")
	}
	p := &access.Principal{UserID: u.ID, Email: u.Email, Roles: []string{}, Permissions: map[access.Permission]bool{}}
	for _, role := range u.Roles {
		p.Roles = append(p.Roles, role)
		for _, perm := range t.RolePermissions[role] {
			p.Permissions[perm] = true
		}
	}
	return p, nil
}

// Revoke marks one token revoked; every process drops what it cached for
// it once the transaction commits.
func Revoke(ctx context.Context, q sqldb.Querier, now time.Time, tokenID string) error {
	_, err := q.ExecContext(ctx, `UPDATE access_tokens SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL`, now, tokenID)
	if err == nil {
		sqldb.Changed(q, access.TokenKey(tokenID))
	}
	return err
}

// RevokeAll revokes every token of a user (blocking, password reset).
func RevokeAll(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) error {
	return RevokeSessions(ctx, q, now, userID, "")
}

// RevokeSessions revokes every token of a user but keep (empty: none).
// Ending every session (blocking, a password reset or set by an admin)
// also revokes the user's scoped tokens.
func RevokeSessions(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, keep string) error {
	if keep == "" {
		if err := tokens.RevokeUser(ctx, q, now, userID); err != nil {
			return err
		}
	}
	ids, err := sqldb.Column[string](q.QueryContext(ctx, `UPDATE access_tokens SET revoked_at = $1
		WHERE user_id = $2 AND revoked_at IS NULL AND id <> $3 RETURNING id`, now, userID, keep))
	if err != nil || len(ids) == 0 {
		return err
	}
	sqldb.Changed(q, access.TokenKeys(ids)...)
	return nil
}

// LastLogin is when the tenant last issued an access token (a login, a
// refresh), nil when never: the platform's list of tenants shows it as
// their last activity.
func LastLogin(ctx context.Context, q sqldb.Querier) (*time.Time, error) {
	var at time.Time
	err := q.QueryRowContext(ctx, `SELECT created_at FROM access_tokens ORDER BY created_at DESC LIMIT 1`).Scan(&at)
	if sqldb.NotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: last login: %w", err)
	}
	return &at, nil
}
