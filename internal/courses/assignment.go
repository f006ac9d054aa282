package courses

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Assignments give users access to a course: directly, or through a group
// (and so to the members of its subgroups too), each with an optional end.

// AssignedUser is a user assigned to a course directly.
type AssignedUser struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Email     string     `json:"email"`
	EndDate   *time.Time `json:"end_date"`
	CreatedAt time.Time  `json:"created_at"`
}

// AssignedGroup is a group assigned to a course.
type AssignedGroup struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	EndDate   *time.Time `json:"end_date"`
	CreatedAt time.Time  `json:"created_at"`
}

// Assignments are a course's assigned users and groups.
type Assignments struct {
	Users  []AssignedUser  `json:"users"`
	Groups []AssignedGroup `json:"groups"`
}

// Grant gives a user or a group access, until EndDate when set.
type Grant struct {
	ID      int64
	EndDate *time.Time
}

// Assignments lists who is assigned to the course.
func (s *Service) Assignments(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64) (Assignments, error) {
	c, err := ByID(ctx, t.DB, courseID)
	if err != nil {
		return Assignments{}, err
	}
	if err := allow(CanRead(p, c) || CanEdit(p, c)); err != nil {
		return Assignments{}, err
	}
	return assignments(ctx, t.DB, courseID)
}

func assignments(ctx context.Context, q sqldb.Querier, courseID int64) (Assignments, error) {
	out := Assignments{Users: []AssignedUser{}, Groups: []AssignedGroup{}}
	type row struct {
		id      int64
		end     *time.Time
		created time.Time
	}
	read := func(query string) ([]row, error) {
		rows, err := q.QueryContext(ctx, query, courseID)
		if err != nil {
			return nil, fmt.Errorf("courses: list assignments: %w", err)
		}
		defer rows.Close()
		var list []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.end, &r.created); err != nil {
				return nil, err
			}
			list = append(list, r)
		}
		return list, rows.Err()
	}
	users, err := read(`SELECT user_id, end_date, created_at FROM course_users WHERE course_id = $1 ORDER BY user_id`)
	if err != nil {
		return out, err
	}
	groups, err := read(`SELECT group_id, end_date, created_at FROM course_groups WHERE course_id = $1 ORDER BY group_id`)
	if err != nil {
		return out, err
	}
	ids := func(list []row) []int64 {
		out := make([]int64, len(list))
		for i, r := range list {
			out[i] = r.id
		}
		return out
	}
	people, err := accounts.Refs(ctx, q, ids(users))
	if err != nil {
		return out, err
	}
	for _, r := range users {
		if u, ok := people[r.id]; ok {
			out.Users = append(out.Users, AssignedUser{ID: r.id, Name: u.Name(), Email: u.Email,
				EndDate: utc(r.end), CreatedAt: r.created.UTC()})
		}
	}
	names, err := accounts.GroupNames(ctx, q, ids(groups))
	if err != nil {
		return out, err
	}
	for _, r := range groups {
		if name, ok := names[r.id]; ok {
			out.Groups = append(out.Groups, AssignedGroup{ID: r.id, Name: name, EndDate: utc(r.end), CreatedAt: r.created.UTC()})
		}
	}
	return out, nil
}

// Assign gives users and groups access to the course, or changes the end
// of an existing assignment. A user assigned for the first time records
// CourseAssigned; every user who gains access records CourseAccessStarted.
func (s *Service) Assign(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64, users, groups []Grant) (Assignments, error) {
	now := s.now()
	var out Assignments
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		c, err := s.editable(ctx, tx, p, courseID)
		if err != nil {
			return err
		}
		if err := checkGrants(ctx, tx, now, users, groups); err != nil {
			return err
		}
		for _, g := range users {
			added, err := grant(ctx, tx, now, "course_users", "user_id", courseID, g)
			if err != nil {
				return err
			}
			if added {
				if err := events.Emit(ctx, tx, now, events.Event{Name: events.CourseAssigned, UserID: g.ID,
					Payload: coursePayload(c)}); err != nil {
					return err
				}
			}
		}
		for _, g := range groups {
			if _, err := grant(ctx, tx, now, "course_groups", "group_id", courseID, g); err != nil {
				return err
			}
		}
		if err := settleCourse(ctx, tx, now, c); err != nil {
			return err
		}
		out, err = assignments(ctx, tx, courseID)
		return err
	})
	return out, err
}

// editable loads the course for a change by p.
func (s *Service) editable(ctx context.Context, q sqldb.Querier, p *access.Principal, courseID int64) (Course, error) {
	c, err := ByID(ctx, q, courseID)
	if err != nil {
		return c, err
	}
	return c, allow(CanEdit(p, c))
}

// checkGrants notes unknown users and groups and end dates already past.
func checkGrants(ctx context.Context, q sqldb.Querier, now time.Time, users, groups []Grant) error {
	pr := problems{}
	for _, list := range []struct {
		field  string
		exist  func(context.Context, sqldb.Querier, []int64) (map[int64]bool, error)
		grants []Grant
	}{
		{"users", usersExist, users},
		{"groups", groupsExist, groups},
	} {
		if len(list.grants) == 0 {
			continue
		}
		ids := make([]int64, len(list.grants))
		for i, g := range list.grants {
			ids[i] = g.ID
		}
		found, err := list.exist(ctx, q, ids)
		if err != nil {
			return err
		}
		for i, g := range list.grants {
			field := list.field + "." + strconv.Itoa(i)
			if !found[g.ID] {
				pr.add(field+".id", fmt.Sprintf("The %s %d does not exist.", strings.TrimSuffix(list.field, "s"), g.ID))
			}
			if g.EndDate != nil && !g.EndDate.After(now) {
				pr.add(field+".end_date", "The end date must be in the future.")
			}
		}
	}
	return pr.err()
}

// usersExist returns which of the users exist.
func usersExist(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64]bool, error) {
	users, err := accounts.Refs(ctx, q, ids)
	found := map[int64]bool{}
	for id := range users {
		found[id] = true
	}
	return found, err
}

// groupsExist returns which of the groups exist.
func groupsExist(ctx context.Context, q sqldb.Querier, ids []int64) (map[int64]bool, error) {
	groups, err := accounts.GroupNames(ctx, q, ids)
	found := map[int64]bool{}
	for id := range groups {
		found[id] = true
	}
	return found, err
}

// grant inserts or updates one assignment row and reports whether it is
// new.
func grant(ctx context.Context, tx *sqldb.Tx, now time.Time, table, column string, courseID int64, g Grant) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE `+table+` SET end_date = $1 WHERE course_id = $2 AND `+column+` = $3`,
		utc(g.EndDate), courseID, g.ID)
	if err != nil {
		return false, fmt.Errorf("courses: update assignment: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+table+` (course_id, `+column+`, end_date, created_at) VALUES ($1, $2, $3, $4)`,
		courseID, g.ID, utc(g.EndDate), now); err != nil {
		return false, fmt.Errorf("courses: assign: %w", err)
	}
	return true, nil
}

// Unassign takes users and groups off the course. Each user whose direct
// assignment goes records CourseUnassigned; every user who loses access
// records CourseAccessFinished. Ids not assigned are ignored.
func (s *Service) Unassign(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64, users, groups []int64) (Assignments, error) {
	now := s.now()
	var out Assignments
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		c, err := s.editable(ctx, tx, p, courseID)
		if err != nil {
			return err
		}
		for _, id := range sqldb.UniqueIDs(users) {
			res, err := tx.ExecContext(ctx, `DELETE FROM course_users WHERE course_id = $1 AND user_id = $2`, courseID, id)
			if err != nil {
				return fmt.Errorf("courses: unassign user: %w", err)
			}
			if n, _ := res.RowsAffected(); n > 0 {
				if err := events.Emit(ctx, tx, now, events.Event{Name: events.CourseUnassigned, UserID: id,
					Payload: coursePayload(c)}); err != nil {
					return err
				}
			}
		}
		for _, id := range sqldb.UniqueIDs(groups) {
			if _, err := tx.ExecContext(ctx, `DELETE FROM course_groups WHERE course_id = $1 AND group_id = $2`, courseID, id); err != nil {
				return fmt.Errorf("courses: unassign group: %w", err)
			}
		}
		if err := settleCourse(ctx, tx, now, c); err != nil {
			return err
		}
		out, err = assignments(ctx, tx, courseID)
		return err
	})
	return out, err
}

// GrantAccess assigns one user to the course without an end, inside the
// caller's transaction, with the events of Assign. It is for grants the
// platform makes itself (an LTI launch), which no principal asks for.
func GrantAccess(ctx context.Context, tx *sqldb.Tx, now time.Time, courseID, userID int64) error {
	c, err := ByID(ctx, tx, courseID)
	if err != nil {
		return err
	}
	added, err := grant(ctx, tx, now, "course_users", "user_id", courseID, Grant{ID: userID})
	if err != nil {
		return err
	}
	if added {
		if err := events.Emit(ctx, tx, now, events.Event{Name: events.CourseAssigned, UserID: userID,
			Payload: coursePayload(c)}); err != nil {
			return err
		}
	}
	return settleCourse(ctx, tx, now, c)
}
