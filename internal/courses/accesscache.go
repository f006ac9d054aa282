package courses

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/versioned"
)

// Every learner request asks the access rule, which costs two queries (the
// user's groups up the tree, then the assignments). So each tenant keeps
// the assigned courses of its recent users, checked on every read against
// access_version, a counter that database triggers move whenever an
// assignment, a group membership or the group tree changes, whoever
// changes it. An entry also expires when the first of its assignments
// ends, and after accessTTL, so that a counter that went back (a database
// restored from a backup) cannot keep an old answer for long.
//
// Only reads of the tenant's database use it: an entry built inside a
// transaction could hold changes that are rolled back.
const (
	accessTTL     = 5 * time.Minute
	accessEntries = 4096
)

type accessCacheKey struct{}

func accessCacheOf(t *platform.Tenant) *versioned.Cache[int64, []int64] {
	return t.Local(accessCacheKey{}, func() any {
		return versioned.New[int64, []int64](accessEntries)
	}).(*versioned.Cache[int64, []int64])
}

// accessVersion reads the tenant's access counter. It is read before the
// assignments, so a change committed in between makes the entry stale
// rather than wrongly fresh.
func accessVersion(ctx context.Context, q sqldb.Querier) (int64, error) {
	var v int64
	if err := q.QueryRowContext(ctx, `SELECT version FROM access_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("courses: access version: %w", err)
	}
	return v, nil
}

// assignedNow lists the courses the user holds access to at now by
// assignment, as AssignedCourses reads them from the tenant's database,
// from the cache when it is current.
func assignedNow(ctx context.Context, t *platform.Tenant, now time.Time, userID int64) ([]int64, error) {
	version, err := accessVersion(ctx, t.DB)
	if err != nil {
		return nil, err
	}
	cache := accessCacheOf(t)
	if ids, ok := cache.Get(userID, version, now); ok {
		return ids, nil
	}
	ids, firstEnd, err := assignedCourses(ctx, t.DB, now, userID)
	if err != nil {
		return nil, err
	}
	expires := now.Add(accessTTL)
	if firstEnd != nil && firstEnd.Before(expires) {
		expires = *firstEnd
	}
	cache.Put(userID, version, expires, now, ids)
	return ids, nil
}
