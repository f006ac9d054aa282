package accounts

import (
	"context"
	"fmt"
	"strings"

	"github.com/lms-platform/lms/internal/sqldb"
)

// Users, groups and categories as other capabilities name them: courses
// shows its authors, assigned users and groups and its categories through
// these, instead of reading the accounts tables.

// Ref is a user as another capability shows one.
type Ref struct {
	ID         int64
	FirstName  string
	LastName   string
	Email      string
	Bio        *string
	AvatarPath *string
}

// Name is the full name.
func (r Ref) Name() string { return strings.TrimSpace(r.FirstName + " " + r.LastName) }

// RefFilter selects users. Zero fields select nothing out.
type RefFilter struct {
	// IDs, when not nil, keeps only these users.
	IDs []int64
	// Exclude leaves these users out.
	Exclude []int64
	// Roles keeps the users with one of these roles.
	Roles []string
	// Active keeps the active users.
	Active bool
	// Search keeps the users whose full name, or email when SearchEmail,
	// contains it (case-insensitive).
	Search      string
	SearchEmail bool
	// Offset and Limit page the result; Limit 0 means every user.
	Offset, Limit int
}

// FindRefs returns the users f selects, by id, and how many there are in
// all.
func FindRefs(ctx context.Context, q sqldb.Querier, f RefFilter) ([]Ref, int64, error) {
	if f.IDs != nil && len(f.IDs) == 0 {
		return []Ref{}, 0, nil
	}
	var a sqldb.Args
	var where []string
	if f.IDs != nil {
		where = append(where, `id IN (`+a.List(f.IDs)+`)`)
	}
	if len(f.Exclude) > 0 {
		where = append(where, `id NOT IN (`+a.List(f.Exclude)+`)`)
	}
	if len(f.Roles) > 0 {
		names := make([]string, len(f.Roles))
		for i, r := range f.Roles {
			names[i] = a.Add(r)
		}
		where = append(where, `id IN (SELECT user_id FROM user_roles WHERE role IN (`+strings.Join(names, ", ")+`))`)
	}
	if f.Active {
		where = append(where, `is_active = `+a.Add(true))
	}
	if s := strings.TrimSpace(f.Search); s != "" {
		ph := a.Add(sqldb.Contains(s))
		cond := `LOWER(first_name || ' ' || last_name) LIKE LOWER(` + ph + `) ESCAPE '\'`
		if f.SearchEmail {
			cond = `(LOWER(email) LIKE LOWER(` + ph + `) ESCAPE '\' OR ` + cond + `)`
		}
		where = append(where, cond)
	}
	cond := sqldb.Where(where)
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`+cond, a...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("accounts: count users: %w", err)
	}
	query := `SELECT id, first_name, last_name, email, bio, avatar_path FROM users` + cond + ` ORDER BY id`
	if f.Limit > 0 {
		query += ` LIMIT ` + a.Add(f.Limit) + ` OFFSET ` + a.Add(f.Offset)
	}
	rows, err := q.QueryContext(ctx, query, a...)
	if err != nil {
		return nil, 0, fmt.Errorf("accounts: list users: %w", err)
	}
	defer rows.Close()
	out := []Ref{}
	for rows.Next() {
		var r Ref
		if err := rows.Scan(&r.ID, &r.FirstName, &r.LastName, &r.Email, &r.Bio, &r.AvatarPath); err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, total, rows.Err()
}

// Refs loads the users of ids that exist, by id.
func Refs(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64]Ref, error) {
	list, _, err := FindRefs(ctx, q, RefFilter{IDs: sqldb.UniqueIDs(ids)})
	if err != nil {
		return nil, err
	}
	out := make(map[int64]Ref, len(list))
	for _, r := range list {
		out[r.ID] = r
	}
	return out, nil
}

// Named is a group or a category: an id and a name.
type Named struct {
	ID   int64
	Name string
}

// GroupNames returns the names of the groups of ids that exist.
func GroupNames(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64]string, error) {
	return names(ctx, q, "user_groups", ids)
}

// CategoryNames returns the names of the categories of ids that exist.
func CategoryNames(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64]string, error) {
	return names(ctx, q, "categories", ids)
}

// AllCategories lists every category by name.
func AllCategories(ctx context.Context, q sqldb.Querier) ([]Named, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM categories ORDER BY name, id`)
	if err != nil {
		return nil, fmt.Errorf("accounts: list categories: %w", err)
	}
	defer rows.Close()
	out := []Named{}
	for rows.Next() {
		var n Named
		if err := rows.Scan(&n.ID, &n.Name); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}

// names reads id and name of the rows of table (a fixed name, never
// input) whose id is in ids.
func names(ctx context.Context, q sqldb.Querier, table string, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	ids = sqldb.UniqueIDs(ids)
	if len(ids) == 0 {
		return out, nil
	}
	var a sqldb.Args
	rows, err := q.QueryContext(ctx, `SELECT id, name FROM `+table+` WHERE id IN (`+a.List(ids)+`)`, a...)
	if err != nil {
		return nil, fmt.Errorf("accounts: names of %s: %w", table, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[id] = name
	}
	return out, rows.Err()
}
