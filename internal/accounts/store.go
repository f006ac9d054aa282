package accounts

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

const userColumns = `id, email, first_name, last_name, phone, bio, password_hash, is_active,
	email_verified_at, avatar_path, created_at, updated_at`

func scanUser(row interface{ Scan(...any) error }) (User, error) {
	var u User
	var verified sql.NullTime
	var phone, bio, avatar sql.NullString
	err := row.Scan(&u.ID, &u.Email, &u.FirstName, &u.LastName, &phone, &bio, &u.PasswordHash, &u.IsActive,
		&verified, &avatar, &u.CreatedAt, &u.UpdatedAt)
	if verified.Valid {
		t := verified.Time
		u.EmailVerifiedAt = &t
	}
	u.Phone = nullString(phone)
	u.Bio = nullString(bio)
	u.AvatarPath = nullString(avatar)
	return u, err
}

func nullString(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// NewUser is the input of Create. PasswordHash is already hashed.
type NewUser struct {
	Email        string
	FirstName    string
	LastName     string
	PasswordHash string
	Roles        []string
	IsActive     bool
	Verified     bool
}

// Create inserts a user with roles. A taken e-mail is a 422 on "email".
func Create(ctx context.Context, q sqldb.Querier, now time.Time, in NewUser) (User, error) {
	email, ok := NormalizeEmail(in.Email)
	if !ok {
		return User{}, apperr.Field("email", "The email must be a valid email address.")
	}
	var verified any
	if in.Verified {
		verified = now
	}
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO users (email, first_name, last_name, password_hash, is_active,
		email_verified_at, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7) RETURNING id`,
		email, in.FirstName, in.LastName, in.PasswordHash, in.IsActive, verified, now).Scan(&id)
	if sqldb.IsUniqueViolation(err) {
		return User{}, apperr.Field("email", "The email has already been taken.")
	}
	if err != nil {
		return User{}, fmt.Errorf("accounts: create user: %w", err)
	}
	if err := SetRoles(ctx, q, id, in.Roles); err != nil {
		return User{}, err
	}
	return ByID(ctx, q, id)
}

// SetRoles replaces the user's roles; unknown role names are a 422.
func SetRoles(ctx context.Context, q sqldb.Querier, userID int64, roles []string) error {
	if _, err := q.ExecContext(ctx, `DELETE FROM user_roles WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("accounts: clear roles: %w", err)
	}
	for _, role := range roles {
		res, err := q.ExecContext(ctx, `INSERT INTO user_roles (user_id, role_id)
			SELECT $1, id FROM roles WHERE name = $2 ON CONFLICT DO NOTHING`, userID, role)
		if err != nil {
			return fmt.Errorf("accounts: set role %s: %w", role, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var exists bool
			q.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM roles WHERE name = $1)`, role).Scan(&exists)
			if !exists {
				return apperr.Field("roles", fmt.Sprintf("The role %q does not exist.", role))
			}
		}
	}
	return nil
}

// ByID loads a user with roles; NotFound when absent.
func ByID(ctx context.Context, q sqldb.Querier, id int64) (User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	return withRoles(ctx, q, u, err)
}

// ByEmail loads a user by address (case-insensitive); NotFound when absent.
func ByEmail(ctx context.Context, q sqldb.Querier, email string) (User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE email = $1`,
		strings.ToLower(strings.TrimSpace(email))))
	return withRoles(ctx, q, u, err)
}

func withRoles(ctx context.Context, q sqldb.Querier, u User, err error) (User, error) {
	if sqldb.NotFound(err) {
		return u, apperr.New(apperr.NotFound, "User not found.")
	}
	if err != nil {
		return u, fmt.Errorf("accounts: load user: %w", err)
	}
	u.Roles, err = Roles(ctx, q, u.ID)
	return u, err
}

// Roles lists the user's role names, sorted.
func Roles(ctx context.Context, q sqldb.Querier, userID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT r.name FROM user_roles ur JOIN roles r ON r.id = ur.role_id
		WHERE ur.user_id = $1 ORDER BY r.name`, userID)
	if err != nil {
		return nil, fmt.Errorf("accounts: load roles: %w", err)
	}
	defer rows.Close()
	roles := []string{}
	for rows.Next() {
		var r string
		if err := rows.Scan(&r); err != nil {
			return nil, err
		}
		roles = append(roles, r)
	}
	return roles, rows.Err()
}
