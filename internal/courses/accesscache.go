package courses

import (
	"context"
	"fmt"
	"slices"
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

// assignment is a user's assigned courses and when that list may change
// by time alone: the first end among those assignments.
type assignment struct {
	courses []int64
	until   time.Time
}

func accessCacheOf(t *platform.Tenant) *versioned.Cache[int64, assignment] {
	return t.Local(accessCacheKey{}, func() any {
		return versioned.New[int64, assignment](accessEntries)
	}).(*versioned.Cache[int64, assignment])
}

// accessVersion reads the tenant's access counter. It is read before the
// assignments, so a change committed in between makes the entry stale
// rather than wrongly fresh. On PostgreSQL the reads of concurrent
// requests share one query (sqldb.Coalescer): a class starting its exam
// together misses the cache together.
func accessVersion(ctx context.Context, t *platform.Tenant) (int64, error) {
	if t.DB.Dialect == sqldb.Postgres {
		return versionReads(t).Get(ctx, struct{}{})
	}
	return readAccessVersion(ctx, t.DB)
}

func readAccessVersion(ctx context.Context, q sqldb.Querier) (int64, error) {
	var v int64
	if err := q.QueryRowContext(ctx, `SELECT version FROM access_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("courses: access version: %w", err)
	}
	return v, nil
}

type versionReadsKey struct{}

func versionReads(t *platform.Tenant) *sqldb.Coalescer[struct{}, int64] {
	return t.Local(versionReadsKey{}, func() any {
		return sqldb.NewCoalescer(func(ctx context.Context, _ []struct{}) (map[struct{}]int64, error) {
			v, err := readAccessVersion(ctx, t.DB)
			return map[struct{}]int64{{}: v}, err
		})
	}).(*sqldb.Coalescer[struct{}, int64])
}

// AssignedUntil reports whether the user holds access to the course at now
// by assignment, as Assigned reads it from the tenant's database, and until
// when at the latest that answer holds if nothing changes (the first end
// of the user's assignments, or the cache entry's expiry). The user's
// assigned courses come from the tenant's cache when it is current.
func AssignedUntil(ctx context.Context, t *platform.Tenant, now time.Time, userID, courseID int64) (bool, time.Time,
	error) {
	version, err := accessVersion(ctx, t)
	if err != nil {
		return false, time.Time{}, err
	}
	cache := accessCacheOf(t)
	a, ok := cache.Get(userID, version, now)
	if !ok {
		ids, firstEnd, err := assignedCourses(ctx, t.DB, now, userID)
		if err != nil {
			return false, time.Time{}, err
		}
		a = assignment{courses: ids, until: now.Add(accessTTL)}
		if firstEnd != nil && firstEnd.Before(a.until) {
			a.until = *firstEnd
		}
		cache.Put(userID, version, a.until, now, a)
	}
	return slices.Contains(a.courses, courseID), a.until, nil
}
