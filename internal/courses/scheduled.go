package courses

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Names of the scheduled jobs of courses.
const (
	AccessExpiryJob = "course-access-expiry"
	ActivationJob   = "course-activation"
)

// accessExpiryPeriod is how often the access expiry runs, and the window
// its first run looks back over.
const accessExpiryPeriod = time.Hour

// Jobs are the scheduled jobs of courses: the hourly access expiry and the
// daily course activation.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{
		{Name: AccessExpiryJob, Schedule: jobs.Every(accessExpiryPeriod), Run: s.ExpireAccess},
		{Name: ActivationJob, Schedule: jobs.MustCron("@daily"), Run: s.ActivateCourses},
	}
}

// ActivateCourses publishes the courses waiting for activation
// (published_unactivated) whose active_from has come. The events are those
// of any other status change (statusEvents): CourseStatusChanged and, when
// the course is open, CoursedPublished.
func (s *Service) ActivateCourses(ctx context.Context, t *platform.Tenant, now time.Time) error {
	ids, err := int64s(ctx, t.DB, `SELECT id FROM courses
		WHERE status = $1 AND active_from IS NOT NULL AND active_from <= $2 ORDER BY id`,
		string(PublishedUnactivated), now)
	if err != nil {
		return err
	}
	// One transaction per course keeps SQLite's write lock short.
	for _, id := range ids {
		err := t.Tx(ctx, func(tx *sqldb.Tx) error {
			before, err := ByID(ctx, tx, id)
			if err != nil {
				return err
			}
			after := before
			after.Status = Published
			res, err := tx.ExecContext(ctx, `UPDATE courses SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4`,
				string(Published), now, id, string(PublishedUnactivated))
			if err != nil {
				return fmt.Errorf("courses: activate course %d: %w", id, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return err
			}
			return statusEvents(ctx, tx, now, 0, &before, after)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ExpireAccess records CourseAccessFinished (reason "expired") for the users
// who lost access to a course because an assignment of theirs ended since
// the job's previous run: a direct assignment, or one of a group they or
// an ancestor group of theirs belong to. A user who still has access at
// now by another assignment gets nothing, and each user gets one event per
// course however many of their assignments ended. The window is claimed
// in the transaction of the events, so a second run for it emits nothing.
func (s *Service) ExpireAccess(ctx context.Context, t *platform.Tenant, now time.Time) error {
	now = now.UTC()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		from, err := jobs.Claim(ctx, tx, AccessExpiryJob, now, accessExpiryPeriod)
		if err != nil || !from.Before(now) {
			return err
		}
		if err := lockAccess(ctx, tx); err != nil {
			return err
		}
		ended, err := endedAssignments(ctx, tx, from, now)
		if err != nil {
			return err
		}
		for _, l := range ended {
			kept, err := Assigned(ctx, tx, now, l.user, l.course)
			if err != nil {
				return err
			}
			if kept {
				continue
			}
			c, err := ByID(ctx, tx, l.course)
			if err != nil {
				return err
			}
			payload := coursePayload(c)
			payload["reason"] = "expired"
			if err := finishAccess(ctx, tx, now, c, l.user, payload); err != nil {
				return err
			}
		}
		return nil
	})
}

type courseUser struct{ course, user int64 }

// endedAssignments lists, by course and user, who held an assignment that
// ended in (from, to]: directly, or as a member of the group or of one of
// its subgroups.
func endedAssignments(ctx context.Context, q sqldb.Querier, from, to time.Time) ([]courseUser, error) {
	seen := map[courseUser]bool{}
	var out []courseUser
	add := func(c courseUser) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	type row struct{ course, id int64 }
	for _, source := range []struct {
		query string
		group bool
	}{
		{`SELECT course_id, user_id FROM course_users WHERE end_date > $1 AND end_date <= $2 ORDER BY 1, 2`, false},
		{`SELECT course_id, group_id FROM course_groups WHERE end_date > $1 AND end_date <= $2 ORDER BY 1, 2`, true},
	} {
		rows, err := q.QueryContext(ctx, source.query, from, to)
		if err != nil {
			return nil, fmt.Errorf("courses: find ended assignments: %w", err)
		}
		var list []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.course, &r.id); err != nil {
				rows.Close()
				return nil, err
			}
			list = append(list, r)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for _, r := range list {
			if !source.group {
				add(courseUser{r.course, r.id})
				continue
			}
			members, err := accounts.MembersWithin(ctx, q, []int64{r.id})
			if err != nil {
				return nil, err
			}
			for _, u := range members {
				add(courseUser{r.course, u})
			}
		}
	}
	slices.SortFunc(out, func(a, b courseUser) int {
		return cmp.Or(cmp.Compare(a.course, b.course), cmp.Compare(a.user, b.user))
	})
	return out, nil
}
