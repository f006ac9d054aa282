package accounts

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// A user has categories (set by admins) and interests (set by the user or
// an admin); both are rows of the shared categories table.

// categoriesOf lists the categories a user has in table (user_categories
// or user_interests), by name.
func categoriesOf(ctx context.Context, q sqldb.Querier, table string, userID int64) ([]Category, error) {
	rows, err := q.QueryContext(ctx, `SELECT c.id, c.name, c.slug, c.parent_id FROM `+table+` x
		JOIN categories c ON c.id = x.category_id WHERE x.user_id = $1 ORDER BY c.name, c.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("accounts: load %s: %w", table, err)
	}
	defer rows.Close()
	out := []Category{}
	for rows.Next() {
		var c Category
		var parent sql.NullInt64
		if err := rows.Scan(&c.ID, &c.Name, &c.Slug, &parent); err != nil {
			return nil, err
		}
		if parent.Valid {
			c.ParentID = &parent.Int64
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// checkCategories adds a problem on field for every id that names no
// category, and returns the ids without repeats.
func checkCategories(ctx context.Context, q sqldb.Querier, p problems, field string, ids []int64) ([]int64, error) {
	ids = sqldb.UniqueIDs(ids)
	if len(ids) == 0 {
		return ids, nil
	}
	var a sqldb.Args
	existing, err := sqldb.Column[int64](q.QueryContext(ctx, `SELECT id FROM categories WHERE id IN (`+a.List(ids)+`)`, a...))
	if err != nil {
		return nil, fmt.Errorf("accounts: check categories: %w", err)
	}
	found := map[int64]bool{}
	for _, id := range existing {
		found[id] = true
	}
	for _, id := range ids {
		if !found[id] {
			p.add(field, fmt.Sprintf("The category %d does not exist.", id))
		}
	}
	return ids, nil
}

// setCategories makes ids the user's rows in table; with add it only adds.
func setCategories(ctx context.Context, q sqldb.Querier, table string, userID int64, ids []int64, add bool) error {
	sqldb.Changed(q, access.UserKey(userID))
	if !add {
		if _, err := q.ExecContext(ctx, `DELETE FROM `+table+` WHERE user_id = $1`, userID); err != nil {
			return fmt.Errorf("accounts: clear %s: %w", table, err)
		}
	}
	for _, id := range ids {
		if _, err := q.ExecContext(ctx, `INSERT INTO `+table+` (user_id, category_id) VALUES ($1, $2)
			ON CONFLICT DO NOTHING`, userID, id); err != nil {
			return fmt.Errorf("accounts: add to %s: %w", table, err)
		}
	}
	return nil
}

// InterestChange says how a list of category ids changes a user's
// interests.
type InterestChange int

const (
	ReplaceInterests InterestChange = iota
	AddInterests
)

// Interests lists a user's interests.
func (s *Service) Interests(ctx context.Context, t *platform.Tenant, p *access.Principal, userID int64) ([]Category, error) {
	if err := allow(canReadInterests(p, userID)); err != nil {
		return nil, err
	}
	if _, err := ByID(ctx, t.DB, userID); err != nil {
		return nil, err
	}
	return categoriesOf(ctx, t.DB, "user_interests", userID)
}

// SetInterests replaces or extends a user's interests with category ids;
// an unknown id is a 422 on "interests" and changes nothing.
func (s *Service) SetInterests(ctx context.Context, t *platform.Tenant, p *access.Principal, userID int64,
	ids []int64, how InterestChange) ([]Category, error) {
	if err := allow(canUpdateInterests(p, userID)); err != nil {
		return nil, err
	}
	var out []Category
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		if _, err := ByID(ctx, tx, userID); err != nil {
			return err
		}
		probs := problems{}
		ids, err := checkCategories(ctx, tx, probs, "interests", ids)
		if err != nil {
			return err
		}
		if err := probs.err(); err != nil {
			return err
		}
		if err := setCategories(ctx, tx, "user_interests", userID, ids, how == AddInterests); err != nil {
			return err
		}
		out, err = categoriesOf(ctx, tx, "user_interests", userID)
		return err
	})
	return out, err
}

// RemoveInterest drops one interest of a user. An unknown category is a
// 404; a category the user is not interested in changes nothing.
func (s *Service) RemoveInterest(ctx context.Context, t *platform.Tenant, p *access.Principal, userID, categoryID int64) ([]Category, error) {
	if err := allow(canUpdateInterests(p, userID)); err != nil {
		return nil, err
	}
	var out []Category
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		if _, err := ByID(ctx, tx, userID); err != nil {
			return err
		}
		probs := problems{}
		if _, err := checkCategories(ctx, tx, probs, "interest_id", []int64{categoryID}); err != nil {
			return err
		}
		if len(probs) > 0 {
			return errInterestNotFound
		}
		sqldb.Changed(tx, access.UserKey(userID))
		if _, err := tx.ExecContext(ctx, `DELETE FROM user_interests WHERE user_id = $1 AND category_id = $2`,
			userID, categoryID); err != nil {
			return fmt.Errorf("accounts: remove interest: %w", err)
		}
		var err error
		out, err = categoriesOf(ctx, tx, "user_interests", userID)
		return err
	})
	return out, err
}

var errInterestNotFound = notFound("Interest not found.")
