package accounts

import (
	"context"
	"fmt"
	"slices"

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

// GroupsOfMembers is GroupsOfMember for many users, for reads that many
// requests make at once (sqldb.Coalescer), on PostgreSQL (userIDs passed
// as one array). A user of no group has no entry. The tree is walked only
// when one of them belongs to a group: most learners of a class that is
// assigned a course one by one belong to none.
func GroupsOfMembers(ctx context.Context, q sqldb.Querier, userIDs []int64) (map[int64][]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT user_id, group_id FROM user_group_members WHERE user_id = ANY($1)`, userIDs)
	if err != nil {
		return nil, fmt.Errorf("accounts: groups of users: %w", err)
	}
	direct := map[int64][]int64{}
	var seeds []int64
	for rows.Next() {
		var user, group int64
		if err := rows.Scan(&user, &group); err != nil {
			rows.Close()
			return nil, fmt.Errorf("accounts: groups of users: %w", err)
		}
		direct[user] = append(direct[user], group)
		seeds = append(seeds, group)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: groups of users: %w", err)
	}
	if len(seeds) == 0 {
		return direct, nil
	}
	parents, err := parentsUp(ctx, q, sqldb.UniqueIDs(seeds))
	if err != nil {
		return nil, err
	}
	out := make(map[int64][]int64, len(direct))
	for user, groups := range direct {
		seen := map[int64]bool{}
		for _, g := range groups {
			// The walk stops at a group met before, so a cycle written
			// past the checks of checkParent cannot hold it.
			for ok := true; ok && !seen[g]; g, ok = parents[g] {
				seen[g] = true
			}
		}
		ids := make([]int64, 0, len(seen))
		for g := range seen {
			ids = append(ids, g)
		}
		slices.Sort(ids)
		out[user] = ids
	}
	return out, nil
}

// parentsUp maps each of the groups and of their ancestors to its parent,
// in one statement; a root has no entry.
func parentsUp(ctx context.Context, q sqldb.Querier, groupIDs []int64) (map[int64]int64, error) {
	rows, err := q.QueryContext(ctx, `
		WITH RECURSIVE up(id, parent_id) AS (
			SELECT id, parent_id FROM user_groups WHERE id = ANY($1)
			UNION
			SELECT g.id, g.parent_id FROM user_groups g JOIN up ON g.id = up.parent_id
		)
		SELECT id, parent_id FROM up WHERE parent_id IS NOT NULL`, groupIDs)
	if err != nil {
		return nil, fmt.Errorf("accounts: group tree: %w", err)
	}
	defer rows.Close()
	parents := map[int64]int64{}
	for rows.Next() {
		var id, parent int64
		if err := rows.Scan(&id, &parent); err != nil {
			return nil, fmt.Errorf("accounts: group tree: %w", err)
		}
		parents[id] = parent
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("accounts: group tree: %w", err)
	}
	return parents, nil
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
