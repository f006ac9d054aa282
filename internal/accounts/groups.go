package accounts

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Group is a node of the user-group tree.
type Group struct {
	ID           int64     `json:"id"`
	Name         string    `json:"name"`
	ParentID     *int64    `json:"parent_id"`
	Registerable bool      `json:"registerable"`
	CreatedAt    time.Time `json:"created_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

const groupColumns = `id, name, parent_id, registerable, created_at, updated_at`

func scanGroup(row interface{ Scan(...any) error }) (Group, error) {
	var g Group
	var parent sql.NullInt64
	err := row.Scan(&g.ID, &g.Name, &parent, &g.Registerable, &g.CreatedAt, &g.UpdatedAt)
	if parent.Valid {
		g.ParentID = &parent.Int64
	}
	return g, err
}

func queryGroups(ctx context.Context, q sqldb.Querier, query string, args ...any) ([]Group, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("accounts: groups: %w", err)
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		g, err := scanGroup(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, rows.Err()
}

// RegisterableGroups lists the groups a new account may join.
func RegisterableGroups(ctx context.Context, q sqldb.Querier) ([]Group, error) {
	return queryGroups(ctx, q, `SELECT `+groupColumns+` FROM user_groups WHERE registerable ORDER BY name, id`)
}

// JoinRegisterableGroups adds a newly registered user to the groups it
// chose; a group that is not registerable is a 422 on "groups".
func JoinRegisterableGroups(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, ids []int64) error {
	for _, id := range ids {
		var ok bool
		if err := q.QueryRowContext(ctx, `SELECT registerable FROM user_groups WHERE id = $1`, id).Scan(&ok); err != nil && !sqldb.NotFound(err) {
			return err
		}
		if !ok {
			return apperr.Field("groups", fmt.Sprintf("The group %d cannot be joined at registration.", id))
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO user_group_members (group_id, user_id, created_at) VALUES ($1, $2, $3)
			ON CONFLICT DO NOTHING`, id, userID, now); err != nil {
			return err
		}
	}
	return nil
}
