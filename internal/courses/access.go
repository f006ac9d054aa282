package courses

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Assigned reports whether the user has access to the course by
// assignment: directly, or through a group whose ancestor (or itself) was
// assigned, with any end date still ahead.
func Assigned(ctx context.Context, q sqldb.Querier, now time.Time, userID, courseID int64) (bool, error) {
	var n int
	err := q.QueryRowContext(ctx, `
		WITH RECURSIVE member_groups(id) AS (
			SELECT group_id FROM user_group_members WHERE user_id = $1
			UNION
			SELECT g.parent_id FROM user_groups g JOIN member_groups m ON g.id = m.id WHERE g.parent_id IS NOT NULL
		)
		SELECT
			(SELECT COUNT(*) FROM course_users cu WHERE cu.course_id = $2 AND cu.user_id = $1
				AND (cu.end_date IS NULL OR cu.end_date > $3))
			+ (SELECT COUNT(*) FROM course_groups cg JOIN member_groups m ON m.id = cg.group_id
				WHERE cg.course_id = $2 AND (cg.end_date IS NULL OR cg.end_date > $3))`,
		userID, courseID, now).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("courses: check assignment: %w", err)
	}
	return n > 0, nil
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
