package courses

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The course-access rule, written once: a user holds access to a course
// when assigned to it directly, or when a group they belong to, or an
// ancestor of such a group, is assigned to it; each assignment counts until
// its end date. Groups and their tree belong to accounts, which answers
// the membership questions; the assignments are this package's.

// assignedTo lists the courses assigned at now to the user directly or to
// one of groups (ancestors already included), with the earliest end date
// after now among those assignments (nil when none ends). userID 0 asks
// only about the groups.
func assignedTo(ctx context.Context, q sqldb.Querier, now time.Time, userID int64, groups []int64) ([]int64,
	*time.Time, error) {
	a := sqldb.Args{now}
	query := `SELECT course_id, end_date FROM course_users WHERE user_id = ` + a.Add(userID) +
		` AND (end_date IS NULL OR end_date > $1)`
	if len(groups) > 0 {
		query += ` UNION ALL SELECT course_id, end_date FROM course_groups WHERE (end_date IS NULL OR end_date > $1)
			AND group_id IN (` + a.List(groups) + `)`
	}
	rows, err := q.QueryContext(ctx, query, a...)
	if err != nil {
		return nil, nil, fmt.Errorf("courses: assigned courses: %w", err)
	}
	defer rows.Close()
	var list []held
	for rows.Next() {
		var h held
		if err := rows.Scan(&h.course, &h.end); err != nil {
			return nil, nil, fmt.Errorf("courses: assigned courses: %w", err)
		}
		list = append(list, h)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("courses: assigned courses: %w", err)
	}
	ids, firstEnd := heldAt(list, now)
	return ids, firstEnd, nil
}

// held is an assignment of a course, to a user or one of their groups,
// and its end (none when not valid).
type held struct {
	course int64
	end    sql.NullTime
}

// heldAt lists the courses of the assignments that hold at now, once each
// and by id, with the earliest end among them (nil when none ends).
func heldAt(list []held, now time.Time) ([]int64, *time.Time) {
	var ids []int64
	var firstEnd *time.Time
	for _, h := range list {
		if h.end.Valid && !h.end.Time.After(now) {
			continue
		}
		ids = append(ids, h.course)
		if h.end.Valid && (firstEnd == nil || h.end.Time.Before(*firstEnd)) {
			v := h.end.Time.UTC()
			firstEnd = &v
		}
	}
	ids = sqldb.UniqueIDs(ids)
	slices.Sort(ids)
	return ids, firstEnd
}

// AssignedCourses lists the ids of the courses the user holds access to at
// now by assignment.
func AssignedCourses(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) ([]int64, error) {
	ids, _, err := assignedCourses(ctx, q, now, userID)
	return ids, err
}

func assignedCourses(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) ([]int64, *time.Time, error) {
	groups, err := accounts.GroupsOfMember(ctx, q, userID)
	if err != nil {
		return nil, nil, err
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
// otherwise. It does not say whether the course is active now. Asked of
// the tenant's database (q is t.DB), the user's assignments come from the
// tenant's access cache (see assignedNow); asked inside a transaction, from
// the transaction.
func CanLearn(ctx context.Context, t *platform.Tenant, q sqldb.Querier, now time.Time, p *access.Principal,
	c Course) (bool, error) {
	return LearnRule(p, c, func() (bool, error) {
		if db, ok := q.(*sqldb.DB); ok && db == t.DB {
			ok, _, err := AssignedUntil(ctx, t, now, p.UserID, c.ID)
			return ok, err
		}
		return Assigned(ctx, q, now, p.UserID, c.ID)
	})
}

// LearnRule is the rule of CanLearn, for callers that keep its answer:
// assigned tells whether p is assigned to c, and is asked only when the
// rule needs it (a signed-in caller who neither edits nor reads every
// course, of a published course that is not public).
func LearnRule(p *access.Principal, c Course, assigned func() (bool, error)) (bool, error) {
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
	return assigned()
}

// Access transitions. course_access holds who holds access as last
// computed; each change recomputes the rule for what it touches and
// compares. A row added records CourseAccessStarted and a row removed
// CourseAccessFinished, so every transition is recorded once, whichever of
// the request, the membership listener, the expiry job or a redelivered
// event finds it first: a concurrent second finder changes no row.

// accessLock is the PostgreSQL advisory lock that orders the transactions
// comparing access with course_access.
const accessLock = 7_271_001

// lockAccess makes the transactions that compare access with course_access
// take turns, so none compares with a state another is about to change:
// two listeners settling the same learner's join and leave, say. SQLite
// already runs one writing transaction at a time.
func lockAccess(ctx context.Context, tx *sqldb.Tx) error {
	if tx.Dialect != sqldb.Postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, accessLock); err != nil {
		return fmt.Errorf("courses: lock access: %w", err)
	}
	return nil
}

// startAccess records that the user holds access to c.
func startAccess(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course, userID int64, payload map[string]any) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO course_access (course_id, user_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		c.ID, userID)
	if err != nil {
		return fmt.Errorf("courses: record access: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return events.Emit(ctx, tx, now, events.Event{Name: events.CourseAccessStarted, UserID: userID, Payload: payload})
}

// finishAccess records that the user no longer holds access to c.
func finishAccess(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course, userID int64, payload map[string]any) error {
	res, err := tx.ExecContext(ctx, `DELETE FROM course_access WHERE course_id = $1 AND user_id = $2`, c.ID, userID)
	if err != nil {
		return fmt.Errorf("courses: record end of access: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return err
	}
	return events.Emit(ctx, tx, now, events.Event{Name: events.CourseAccessFinished, UserID: userID, Payload: payload})
}

// settleCourse brings the recorded access to c in line with the rule at
// now, after its assignments changed.
func settleCourse(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course) error {
	if err := lockAccess(ctx, tx); err != nil {
		return err
	}
	holders, err := accessHolders(ctx, tx, c.ID, now)
	if err != nil {
		return err
	}
	held, err := int64s(ctx, tx, `SELECT user_id FROM course_access WHERE course_id = $1 ORDER BY user_id`, c.ID)
	if err != nil {
		return err
	}
	for _, id := range holders {
		if !slices.Contains(held, id) {
			if err := startAccess(ctx, tx, now, c, id, coursePayload(c)); err != nil {
				return err
			}
		}
	}
	for _, id := range held {
		if !slices.Contains(holders, id) {
			if err := finishAccess(ctx, tx, now, c, id, coursePayload(c)); err != nil {
				return err
			}
		}
	}
	return nil
}

// settleUser brings the recorded access of the user in line with the rule
// at now, after their group memberships changed.
func settleUser(ctx context.Context, tx *sqldb.Tx, now time.Time, userID int64) error {
	if err := lockAccess(ctx, tx); err != nil {
		return err
	}
	holds, err := AssignedCourses(ctx, tx, now, userID)
	if err != nil {
		return err
	}
	held, err := int64s(ctx, tx, `SELECT course_id FROM course_access WHERE user_id = $1 ORDER BY course_id`, userID)
	if err != nil {
		return err
	}
	for _, list := range []struct {
		ids, other []int64
		record     func(context.Context, *sqldb.Tx, time.Time, Course, int64, map[string]any) error
	}{{holds, held, startAccess}, {held, holds, finishAccess}} {
		for _, id := range list.ids {
			if slices.Contains(list.other, id) {
				continue
			}
			c, err := ByID(ctx, tx, id)
			if err != nil {
				return err
			}
			if err := list.record(ctx, tx, now, c, userID, coursePayload(c)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListenerEvents are the events Service.Listener settles access on.
var ListenerEvents = []string{events.UserAddedToGroup, events.UserRemovedFromGroup, events.GroupTreeChanged}

// Listener gives and takes course access when group membership changes:
// a learner added to a group gains the courses of the group and of its
// ancestors, one removed loses those they hold no other way, each with
// the event of the transition. A group deleted or moved under another
// parent (GroupTreeChanged) settles every user it names the same way.
// Redelivery changes nothing more.
func (s *Service) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	var users []int64
	switch ev.Name {
	case events.UserAddedToGroup, events.UserRemovedFromGroup:
		users = []int64{ev.UserID}
	case events.GroupTreeChanged:
		var err error
		if users, err = treeChangeUsers(ev); err != nil {
			return err
		}
	default:
		return nil
	}
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		now := s.now()
		for _, id := range users {
			if err := settleUser(ctx, tx, now, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// treeChangeUsers reads the user_ids of a GroupTreeChanged.
func treeChangeUsers(ev events.Stored) ([]int64, error) {
	raw, _ := ev.Payload["user_ids"].([]any)
	users := make([]int64, len(raw))
	for i, v := range raw {
		id, ok := v.(float64)
		if !ok {
			return nil, fmt.Errorf("courses: %s %d: user id %v", ev.Name, ev.ID, v)
		}
		users[i] = int64(id)
	}
	return users, nil
}

// AssignedGroups lists the ids of the groups assigned to the course,
// those whose access ended included (their members may have progress).
func AssignedGroups(ctx context.Context, q sqldb.Querier, courseID int64) ([]int64, error) {
	return int64s(ctx, q, `SELECT group_id FROM course_groups WHERE course_id = $1 ORDER BY group_id`, courseID)
}
