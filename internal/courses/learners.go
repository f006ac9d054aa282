package courses

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// Learners lists the users who hold access to the course at now by
// assignment, directly or through a group, for the gradebook (package
// reports): the rule of Assigned read from the course's side.
func Learners(ctx context.Context, q sqldb.Querier, courseID int64, now time.Time) ([]int64, error) {
	return accessHolders(ctx, q, courseID, now)
}
