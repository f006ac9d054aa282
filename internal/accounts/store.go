package accounts

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

const userColumns = `id, email, first_name, last_name, phone, bio, password_hash, is_active,
	email_verified_at, avatar_path, created_at, updated_at`

// scanUser reads the userColumns of a row, then any further columns into
// extra.
func scanUser(row interface{ Scan(...any) error }, extra ...any) (User, error) {
	var u User
	var verified sql.NullTime
	var phone, bio, avatar sql.NullString
	err := row.Scan(append([]any{&u.ID, &u.Email, &u.FirstName, &u.LastName, &phone, &bio, &u.PasswordHash, &u.IsActive,
		&verified, &avatar, &u.CreatedAt, &u.UpdatedAt}, extra...)...)
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
	sqldb.Changed(q, access.UserKey(userID))
	for _, role := range roles {
		if !slices.Contains(access.Roles, role) {
			return apperr.Field("roles", fmt.Sprintf("The role %q does not exist.", role))
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO user_roles (user_id, role) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
			userID, role); err != nil {
			return fmt.Errorf("accounts: set role %s: %w", role, err)
		}
	}
	return nil
}

// ByID loads a user with roles; NotFound when absent.
func ByID(ctx context.Context, q sqldb.Querier, id int64) (User, error) {
	return userWhere(ctx, q, `u.id = $1`, id)
}

// Exists reports whether the user exists (deleted users do not).
func Exists(ctx context.Context, q sqldb.Querier, id int64) (bool, error) {
	_, err := account(ctx, q, id)
	if err == nil {
		return true, nil
	}
	if apperr.Is(err, apperr.NotFound) {
		return false, nil
	}
	return false, err
}

// ByEmail loads a user by address (case-insensitive); NotFound when absent.
func ByEmail(ctx context.Context, q sqldb.Querier, email string) (User, error) {
	return userWhere(ctx, q, `u.email = $1`, strings.ToLower(strings.TrimSpace(email)))
}

// account loads a user without its roles; NotFound when absent.
func account(ctx context.Context, q sqldb.Querier, id int64) (User, error) {
	u, err := scanUser(q.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return User{}, errUserNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("accounts: load user %d: %w", id, err)
	}
	return u, nil
}

// userWhere loads the user the condition selects and its roles in one
// query: one row per role, or one row with no role.
func userWhere(ctx context.Context, q sqldb.Querier, cond string, arg any) (User, error) {
	return usersRow(ctx, q, "", "", cond, arg)
}

// Along is a row of another table that names a user in its user_id
// column, read in the same query as the user: Table is the table with an
// alias x, Key the column of x that finds the row, Columns the columns of
// x read into Into.
type Along struct {
	Table, Key, Columns string
	Into                []any
}

// ByRowOf loads the user that the row with key of a.Table names, and
// scans a.Columns of that row into a.Into, in one query: one round trip
// for a user and the row that led to them (an access token). NotFound when
// either is absent.
func ByRowOf(ctx context.Context, q sqldb.Querier, a Along, key any) (User, error) {
	return usersRow(ctx, q, "JOIN "+a.Table+" ON x.user_id = u.id", a.Columns, "x."+a.Key+" = $1", key, a.Into...)
}

// ByRowsOf is ByRowOf for many keys in one PostgreSQL query, for reads
// that many requests make at once (sqldb.Coalescer): keys holds values of
// a.Key, passed as one array. found is called once for each row found,
// with its key and user, while a.Into holds that row's columns; keys
// without a row, or whose row names no user, are not called.
func ByRowsOf[K any](ctx context.Context, q sqldb.Querier, a Along, keys []K, found func(key K, u User)) error {
	along := ""
	if a.Columns != "" {
		along = ", " + a.Columns
	}
	// A user's roles come as one JSON array, so that each key is one row.
	rows, err := q.QueryContext(ctx, `SELECT `+prefixed("u.", userColumns)+`,
		(SELECT json_agg(ur.role ORDER BY ur.role) FROM user_roles ur WHERE ur.user_id = u.id), x.`+a.Key+along+`
		FROM users u JOIN `+a.Table+` ON x.user_id = u.id WHERE x.`+a.Key+` = ANY($1)`, keys)
	if err != nil {
		return fmt.Errorf("accounts: load users: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var roles sql.NullString
		var key K
		u, err := scanUser(rows, append([]any{&roles, &key}, a.Into...)...)
		if err != nil {
			return fmt.Errorf("accounts: load users: %w", err)
		}
		u.Roles = []string{}
		if roles.Valid {
			if err := json.Unmarshal([]byte(roles.String), &u.Roles); err != nil {
				return fmt.Errorf("accounts: roles of user %d: %w", u.ID, err)
			}
		}
		found(key, u)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("accounts: load users: %w", err)
	}
	return nil
}

// usersRow loads the user matching cond, with the columns along of a
// joined table into into.
func usersRow(ctx context.Context, q sqldb.Querier, join, along, cond string, arg any, into ...any) (User, error) {
	if along != "" {
		along = ", " + along
	}
	rows, err := q.QueryContext(ctx, `SELECT `+prefixed("u.", userColumns)+`, ur.role`+along+` FROM users u `+join+`
		LEFT JOIN user_roles ur ON ur.user_id = u.id
		WHERE `+cond+` ORDER BY ur.role`, arg)
	if err != nil {
		return User{}, fmt.Errorf("accounts: load user: %w", err)
	}
	defer rows.Close()
	var u User
	found := false
	for rows.Next() {
		var role sql.NullString
		row, err := scanUser(rows, append([]any{&role}, into...)...)
		if err != nil {
			return User{}, fmt.Errorf("accounts: load user: %w", err)
		}
		if !found {
			found, u, u.Roles = true, row, []string{}
		}
		if role.Valid {
			u.Roles = append(u.Roles, role.String)
		}
	}
	if err := rows.Err(); err != nil {
		return User{}, fmt.Errorf("accounts: load user: %w", err)
	}
	if !found {
		return User{}, apperr.New(apperr.NotFound, "User not found.")
	}
	return u, nil
}

// Roles lists the user's role names, sorted.
func Roles(ctx context.Context, q sqldb.Querier, userID int64) ([]string, error) {
	roles, err := sqldb.Column[string](q.QueryContext(ctx, `SELECT role FROM user_roles WHERE user_id = $1 ORDER BY role`,
		userID))
	if err != nil {
		return nil, fmt.Errorf("accounts: load roles: %w", err)
	}
	return roles, nil
}

// column is one "name = value" of an UPDATE; names come from code only.
type column struct {
	name  string
	value any
}

// updateUser writes the columns and updated_at; NotFound when the user
// is gone. A taken e-mail is a 422 on "email".
func updateUser(ctx context.Context, q sqldb.Querier, now time.Time, id int64, cols []column) error {
	var a sqldb.Args
	sets := make([]string, 0, len(cols)+1)
	for _, c := range cols {
		sets = append(sets, c.name+" = "+a.Add(c.value))
	}
	sets = append(sets, "updated_at = "+a.Add(now))
	res, err := q.ExecContext(ctx, `UPDATE users SET `+strings.Join(sets, ", ")+` WHERE id = `+a.Add(id), a...)
	if sqldb.IsUniqueViolation(err) {
		return apperr.Field("email", "The email has already been taken.")
	}
	if err != nil {
		return fmt.Errorf("accounts: update user %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return errUserNotFound
	}
	// The e-mail address and the blocked flag are part of the principal.
	sqldb.Changed(q, access.UserKey(id))
	return nil
}

var errUserNotFound = apperr.New(apperr.NotFound, "User not found.")

// UserFilter selects a page of users for the admin list.
type UserFilter struct {
	Search  string // part of the e-mail, first, last or full name
	Role    string
	Status  string // "", "active" or "blocked"
	GroupID int64  // 0: any; else only the group's members
	OrderBy string // id, email, created_at, first_name or last_name
	Desc    bool
	Offset  int
	Limit   int
}

var userOrder = map[string]string{"": "id", "id": "id", "email": "email", "created_at": "created_at",
	"first_name": "first_name", "last_name": "last_name"}

// listUsers returns one page of the users f selects and how many there are.
func listUsers(ctx context.Context, q sqldb.Querier, f UserFilter) ([]User, int64, error) {
	var a sqldb.Args
	var where []string
	if strings.TrimSpace(f.Search) != "" {
		p := a.Add(sqldb.Contains(f.Search))
		where = append(where, `(LOWER(email) LIKE LOWER(`+p+`) ESCAPE '\' OR LOWER(first_name) LIKE LOWER(`+p+`) ESCAPE '\'
			OR LOWER(last_name) LIKE LOWER(`+p+`) ESCAPE '\' OR LOWER(first_name || ' ' || last_name) LIKE LOWER(`+p+`) ESCAPE '\')`)
	}
	if f.Role != "" {
		where = append(where, `EXISTS (SELECT 1 FROM user_roles ur WHERE ur.user_id = users.id AND ur.role = `+
			a.Add(f.Role)+`)`)
	}
	if f.GroupID != 0 {
		where = append(where, `EXISTS (SELECT 1 FROM user_group_members m WHERE m.user_id = users.id
			AND m.group_id = `+a.Add(f.GroupID)+`)`)
	}
	switch f.Status {
	case "active":
		where = append(where, "is_active = "+a.Add(true))
	case "blocked":
		where = append(where, "is_active = "+a.Add(false))
	}
	cond := sqldb.Where(where)
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`+cond, a...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count users: %w", err)
	}
	order := userOrder[f.OrderBy]
	if order == "" {
		order = "id"
	}
	dir := sqldb.Direction(f.Desc)
	query := `SELECT ` + userColumns + ` FROM users` + cond + ` ORDER BY ` + order + dir + `, id` + dir +
		` LIMIT ` + a.Add(f.Limit) + ` OFFSET ` + a.Add(f.Offset)
	users, err := queryUsers(ctx, q, query, a...)
	return users, total, err
}

// queryUsers runs a query selecting userColumns and loads the roles of the
// users it finds.
func queryUsers(ctx context.Context, q sqldb.Querier, query string, a ...any) ([]User, error) {
	rows, err := q.QueryContext(ctx, query, a...)
	if err != nil {
		return nil, fmt.Errorf("accounts: list users: %w", err)
	}
	var users []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("accounts: list users: %w", err)
		}
		users = append(users, u)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: list users: %w", err)
	}
	ids := make([]int64, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	roles, err := rolesOf(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	for i := range users {
		users[i].Roles = roles[users[i].ID]
		if users[i].Roles == nil {
			users[i].Roles = []string{}
		}
	}
	return users, nil
}

// rolesOf loads the role names of many users at once, sorted.
func rolesOf(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(ids) == 0 {
		return out, nil
	}
	var a sqldb.Args
	rows, err := q.QueryContext(ctx, `SELECT user_id, role FROM user_roles
		WHERE user_id IN (`+a.List(ids)+`) ORDER BY user_id, role`, a...)
	if err != nil {
		return nil, fmt.Errorf("accounts: load roles: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = append(out[id], name)
	}
	return out, rows.Err()
}

// detailOf loads the categories, interests and groups of a loaded user in
// one query. The groups come first so that SQLite reports the declared
// types of their time columns.
func detailOf(ctx context.Context, q sqldb.Querier, u User) (Detail, error) {
	rows, err := q.QueryContext(ctx, `SELECT 0 AS kind, g.id, g.name, '' AS slug, g.parent_id, g.registerable,
			g.created_at, g.updated_at
		FROM user_groups g JOIN user_group_members m ON m.group_id = g.id WHERE m.user_id = $1
		UNION ALL SELECT x.kind, c.id, c.name, c.slug, c.parent_id, FALSE, NULL, NULL FROM (
			SELECT 1 AS kind, category_id FROM user_categories WHERE user_id = $1
			UNION ALL SELECT 2, category_id FROM user_interests WHERE user_id = $1) x
		JOIN categories c ON c.id = x.category_id
		ORDER BY 1, 3, 2`, u.ID)
	if err != nil {
		return Detail{}, fmt.Errorf("accounts: load user %d details: %w", u.ID, err)
	}
	defer rows.Close()
	d := Detail{Summary: SummaryOf(u), Categories: []Category{}, Interests: []Category{}, Groups: []Group{}}
	for rows.Next() {
		var kind int
		var id int64
		var name, slug string
		var parent sql.NullInt64
		var registerable bool
		var created, updated sql.NullTime
		if err := rows.Scan(&kind, &id, &name, &slug, &parent, &registerable, &created, &updated); err != nil {
			return Detail{}, fmt.Errorf("accounts: load user %d details: %w", u.ID, err)
		}
		var parentID *int64
		if parent.Valid {
			parentID = &parent.Int64
		}
		switch kind {
		case 0:
			d.Groups = append(d.Groups, Group{ID: id, Name: name, ParentID: parentID, Registerable: registerable,
				CreatedAt: created.Time, UpdatedAt: updated.Time})
		case 1:
			d.Categories = append(d.Categories, Category{ID: id, Name: name, Slug: slug, ParentID: parentID})
		default:
			d.Interests = append(d.Interests, Category{ID: id, Name: name, Slug: slug, ParentID: parentID})
		}
	}
	if err := rows.Err(); err != nil {
		return Detail{}, fmt.Errorf("accounts: load user %d details: %w", u.ID, err)
	}
	return d, nil
}

// Count is how many users the tenant has, for the platform's list of
// tenants.
func Count(ctx context.Context, q sqldb.Querier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&n); err != nil {
		return 0, fmt.Errorf("accounts: count users: %w", err)
	}
	return n, nil
}
