package courses

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
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
	return platform.Coalesced(t, versionReadsKey{}, func(ctx context.Context, db *sqldb.DB, _ []struct{}) (map[struct{}]int64, error) {
		v, err := readAccessVersion(ctx, db)
		return map[struct{}]int64{{}: v}, err
	})
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
		ids, firstEnd, err := assignedNow(ctx, t, now, userID)
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

// assignedNow is assignedCourses asked of the tenant's database. On
// PostgreSQL the reads of concurrent requests share one query for their
// groups and one for their assignments (sqldb.Coalescer), as a class's
// first requests all miss the cache together.
func assignedNow(ctx context.Context, t *platform.Tenant, now time.Time, userID int64) ([]int64, *time.Time, error) {
	if t.DB.Dialect != sqldb.Postgres {
		return assignedCourses(ctx, t.DB, now, userID)
	}
	list, err := assignedReads(t).Get(ctx, userAt{user: userID, now: now})
	if err != nil {
		return nil, nil, err
	}
	ids, firstEnd := heldAt(list, now)
	return ids, firstEnd, nil
}

// userAt is a user whose assignments are asked for at now.
type userAt struct {
	user int64
	now  time.Time
}

type assignedReadsKey struct{}

func assignedReads(t *platform.Tenant) *sqldb.Coalescer[userAt, []held] {
	return platform.Coalesced(t, assignedReadsKey{}, assignmentsOf)
}

// assignmentsOf reads the assignments of several users, direct and by
// group, in two PostgreSQL queries: those that hold at the earliest of
// the keys' times, for each key to keep those that hold at its own.
func assignmentsOf(ctx context.Context, db *sqldb.DB, keys []userAt) (map[userAt][]held, error) {
	users := make([]int64, 0, len(keys))
	since := keys[0].now
	for _, k := range keys {
		users = append(users, k.user)
		if k.now.Before(since) {
			since = k.now
		}
	}
	groups, err := accounts.GroupsOfMembers(ctx, db, users)
	if err != nil {
		return nil, err
	}
	var members, memberGroups []int64
	for user, ids := range groups {
		for _, g := range ids {
			members, memberGroups = append(members, user), append(memberGroups, g)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT user_id, course_id, end_date FROM course_users
		WHERE user_id = ANY($1) AND (end_date IS NULL OR end_date > $2)
		UNION ALL SELECT m.user_id, c.course_id, c.end_date
		FROM unnest($3::bigint[], $4::bigint[]) AS m(user_id, group_id) JOIN course_groups c ON c.group_id = m.group_id
		WHERE c.end_date IS NULL OR c.end_date > $2`, users, since, members, memberGroups)
	if err != nil {
		return nil, fmt.Errorf("courses: assigned courses: %w", err)
	}
	defer rows.Close()
	byUser := map[int64][]held{}
	for rows.Next() {
		var user int64
		var h held
		if err := rows.Scan(&user, &h.course, &h.end); err != nil {
			return nil, fmt.Errorf("courses: assigned courses: %w", err)
		}
		byUser[user] = append(byUser[user], h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("courses: assigned courses: %w", err)
	}
	out := make(map[userAt][]held, len(keys))
	for _, k := range keys {
		out[k] = byUser[k.user]
	}
	return out, nil
}
