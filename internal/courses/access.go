package courses

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The course-access rule, written once: a user holds access to a course
// when assigned to it directly, or when a group they belong to, or an
// ancestor of such a group, is assigned to it; each assignment counts until
// its end date. Groups and their tree belong to accounts, which answers
// the membership questions; the assignments are this package's.

// assignedTo lists the courses assigned at now to the user directly or to
// one of groups (ancestors already included). userID 0 asks only about the
// groups.
func assignedTo(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, groups []int64) ([]int64, error) {
	a := sqldb.Args{now}
	query := `SELECT course_id FROM course_users WHERE user_id = ` + a.Add(userID) + ` AND (end_date IS NULL OR end_date > $1)`
	if len(groups) > 0 {
		query += ` UNION SELECT course_id FROM course_groups WHERE (end_date IS NULL OR end_date > $1)
			AND group_id IN (` + a.List(groups) + `)`
	}
	ids, err := sqldb.Column[int64](q.QueryContext(ctx, query+` ORDER BY 1`, a...))
	if err != nil {
		return nil, fmt.Errorf("courses: assigned courses: %w", err)
	}
	return ids, nil
}

// AssignedCourses lists the ids of the courses the user holds access to at
// now by assignment.
func AssignedCourses(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) ([]int64, error) {
	groups, err := accounts.MemberGroups(ctx, q, userID)
	if err != nil {
		return nil, err
	}
	if groups, err = accounts.WithAncestors(ctx, q, groups); err != nil {
		return nil, err
	}
	return assignedTo(ctx, q, now, userID, groups)
}

// Assigned reports whether the user holds access to the course at now by
// assignment.
func Assigned(ctx context.Context, q sqldb.Querier, now time.Time, userID, courseID int64) (bool, error) {
	ids, err := AssignedCourses(ctx, q, now, userID)
	return slices.Contains(ids, courseID), err
}

// accessHolders lists the users who hold access to the course at now by
// assignment: the same rule read from the course's side.
func accessHolders(ctx context.Context, q sqldb.Querier, courseID int64, now time.Time) ([]int64, error) {
	direct, err := int64s(ctx, q, `SELECT user_id FROM course_users
		WHERE course_id = $1 AND (end_date IS NULL OR end_date > $2)`, courseID, now)
	if err != nil {
		return nil, err
	}
	groups, err := int64s(ctx, q, `SELECT group_id FROM course_groups
		WHERE course_id = $1 AND (end_date IS NULL OR end_date > $2)`, courseID, now)
	if err != nil {
		return nil, err
	}
	members, err := accounts.MembersWithin(ctx, q, groups)
	if err != nil {
		return nil, err
	}
	out := sqldb.UniqueIDs(append(direct, members...))
	slices.Sort(out)
	return out, nil
}

// CanLearn reports whether p may read the program of c: editors of the
// course always; anyone for a public published course; assigned users
// otherwise. It does not say whether the course is active now.
func CanLearn(ctx context.Context, q sqldb.Querier, now time.Time, p *access.Principal, c Course) (bool, error) {
	if p != nil && (CanEdit(p, c) || CanRead(p, c)) {
		return true, nil
	}
	if c.Status != Published && c.Status != PublishedUnactivated {
		return false, nil
	}
	if c.Public {
		return true, nil
	}
	if p == nil {
		return false, nil
	}
	return Assigned(ctx, q, now, p.UserID, c.ID)
}
