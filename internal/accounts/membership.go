package accounts

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/sqldb"
)

// Group membership as other capabilities see it: course access is given
// to groups and reaches the members of their subgroups, so courses asks
// these questions instead of reading the group tables.

// GroupsOfMember lists the ids of the groups the user belongs to and of
// every ancestor of them, in one statement.
func GroupsOfMember(ctx context.Context, q sqldb.Querier, userID int64) ([]int64, error) {
	ids, err := withAncestors(ctx, q, `SELECT group_id FROM user_group_members WHERE user_id = $1`, userID)
	if err != nil {
		return nil, fmt.Errorf("accounts: groups of user %d: %w", userID, err)
	}
	return ids, nil
}

// MembersWithin lists the users who belong to one of the groups or to a
// subgroup of one of them, at any depth.
func MembersWithin(ctx context.Context, q sqldb.Querier, groupIDs []int64) ([]int64, error) {
	if len(groupIDs) == 0 {
		return []int64{}, nil
	}
	var a sqldb.Args
	ids, err := sqldb.Column[int64](q.QueryContext(ctx, `
		WITH RECURSIVE down(id) AS (
			SELECT id FROM user_groups WHERE id IN (`+a.List(groupIDs)+`)
			UNION
			SELECT g.id FROM user_groups g JOIN down ON g.parent_id = down.id
		)
		SELECT DISTINCT m.user_id FROM user_group_members m JOIN down ON down.id = m.group_id ORDER BY 1`, a...))
	if err != nil {
		return nil, fmt.Errorf("accounts: members of groups: %w", err)
	}
	return ids, nil
}

// GroupAndAncestors lists the group's id and those of its ancestors, in
// one statement; none when the group does not exist.
func GroupAndAncestors(ctx context.Context, q sqldb.Querier, groupID int64) ([]int64, error) {
	ids, err := withAncestors(ctx, q, `SELECT id FROM user_groups WHERE id = $1`, groupID)
	if err != nil {
		return nil, fmt.Errorf("accounts: ancestors of group %d: %w", groupID, err)
	}
	return ids, nil
}

// withAncestors lists the groups seed selects (by its one argument) and
// every ancestor of them, in one statement, by id.
func withAncestors(ctx context.Context, q sqldb.Querier, seed string, arg int64) ([]int64, error) {
	return sqldb.Column[int64](q.QueryContext(ctx, `
		WITH RECURSIVE up(id) AS (
			`+seed+`
			UNION
			SELECT g.parent_id FROM user_groups g JOIN up ON g.id = up.id WHERE g.parent_id IS NOT NULL
		)
		SELECT id FROM up ORDER BY id`, arg))
}
