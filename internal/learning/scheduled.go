package learning

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Names of the scheduled jobs of learning.
const (
	DeadlineJob     = "course-deadline-check"
	AccessExpiryJob = "course-access-expiry"
	ActivationJob   = "course-activation"
)

// accessExpiryPeriod is how often the access expiry runs, and the window
// its first run looks back over.
const accessExpiryPeriod = time.Hour

const reminderDaysKey = "lms_courses.reminder_of_deadline_count_days"

// Jobs are the scheduled jobs of learning: the hourly deadline check and
// access expiry, and the daily course activation.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{
		{Name: DeadlineJob, Schedule: jobs.MustCron("@hourly"), Run: s.RemindDeadlines},
		{Name: AccessExpiryJob, Schedule: jobs.Every(accessExpiryPeriod), Run: s.ExpireAccess},
		{Name: ActivationJob, Schedule: jobs.MustCron("@daily"), Run: s.ActivateCourses},
	}
}

// RemindDeadlines emits CourseDeadlineSoon for every learner whose
// unfinished course's deadline falls within the next
// lms_courses.reminder_of_deadline_count_days days, once per learner and
// course: deadline_notified_at records the reminder.
func (s *Service) RemindDeadlines(ctx context.Context, t *platform.Tenant, now time.Time) error {
	days := 3
	if s.Settings != nil {
		n, err := s.Settings.Int(ctx, t, reminderDaysKey)
		if err != nil {
			return err
		}
		if n > 0 {
			days = n
		}
	}
	type due struct {
		user, course int64
		deadline     time.Time
	}
	var list []due
	rows, err := t.DB.QueryContext(ctx, `SELECT user_id, course_id, deadline FROM course_progress
		WHERE finished_at IS NULL AND deadline_notified_at IS NULL AND deadline > $1 AND deadline <= $2`,
		now, now.Add(time.Duration(days)*24*time.Hour))
	if err != nil {
		return fmt.Errorf("learning: find deadlines: %w", err)
	}
	for rows.Next() {
		var d due
		if err := rows.Scan(&d.user, &d.course, &d.deadline); err != nil {
			rows.Close()
			return err
		}
		list = append(list, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	// One transaction per reminder keeps SQLite's write lock short.
	for _, d := range list {
		err := t.Tx(ctx, func(tx *sqldb.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE course_progress SET deadline_notified_at = $1
				WHERE user_id = $2 AND course_id = $3 AND deadline_notified_at IS NULL AND finished_at IS NULL`,
				now, d.user, d.course)
			if err != nil {
				return fmt.Errorf("learning: note reminder: %w", err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return err
			}
			return emit(ctx, tx, now, events.CourseDeadlineSoon, d.user, map[string]any{"course_id": d.course,
				"deadline": d.deadline.UTC()})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ActivateCourses publishes the courses waiting for activation
// (published_unactivated) whose active_from has come, with
// CourseStatusChanged and, when the course is open, CoursedPublished.
func (s *Service) ActivateCourses(ctx context.Context, t *platform.Tenant, now time.Time) error {
	type waiting struct {
		id    int64
		title string
		to    sql.NullTime
	}
	var list []waiting
	rows, err := t.DB.QueryContext(ctx, `SELECT id, title, active_to FROM courses
		WHERE status = $1 AND active_from IS NOT NULL AND active_from <= $2 ORDER BY id`,
		string(courses.PublishedUnactivated), now)
	if err != nil {
		return fmt.Errorf("learning: find courses to activate: %w", err)
	}
	for rows.Next() {
		var w waiting
		if err := rows.Scan(&w.id, &w.title, &w.to); err != nil {
			rows.Close()
			return err
		}
		list = append(list, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, w := range list {
		err := t.Tx(ctx, func(tx *sqldb.Tx) error {
			res, err := tx.ExecContext(ctx, `UPDATE courses SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4`,
				string(courses.Published), now, w.id, string(courses.PublishedUnactivated))
			if err != nil {
				return fmt.Errorf("learning: activate course %d: %w", w.id, err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				return err
			}
			if err := emit(ctx, tx, now, events.CourseStatusChanged, 0, map[string]any{"course_id": w.id, "title": w.title,
				"from": courses.PublishedUnactivated, "to": courses.Published}); err != nil {
				return err
			}
			if w.to.Valid && !now.Before(w.to.Time) {
				return nil
			}
			return emit(ctx, tx, now, events.CoursedPublished, 0, map[string]any{"course_id": w.id, "title": w.title})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ExpireAccess emits CourseAccessFinished (reason "expired") for the users
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
		type loss struct{ course, user int64 }
		var list []loss
		rows, err := tx.QueryContext(ctx, `
			WITH RECURSIVE ended_groups(course_id, id) AS (
				SELECT course_id, group_id FROM course_groups WHERE end_date > $1 AND end_date <= $2
				UNION
				SELECT e.course_id, g.id FROM user_groups g JOIN ended_groups e ON g.parent_id = e.id
			)
			SELECT course_id, user_id FROM course_users WHERE end_date > $1 AND end_date <= $2
			UNION
			SELECT e.course_id, m.user_id FROM user_group_members m JOIN ended_groups e ON e.id = m.group_id
			ORDER BY 1, 2`, from, now)
		if err != nil {
			return fmt.Errorf("learning: find ended assignments: %w", err)
		}
		for rows.Next() {
			var l loss
			if err := rows.Scan(&l.course, &l.user); err != nil {
				rows.Close()
				return err
			}
			list = append(list, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, l := range list {
			kept, err := courses.Assigned(ctx, tx, now, l.user, l.course)
			if err != nil {
				return err
			}
			if kept {
				continue
			}
			if err := emit(ctx, tx, now, events.CourseAccessFinished, l.user, map[string]any{"course_id": l.course,
				"reason": "expired"}); err != nil {
				return err
			}
		}
		return nil
	})
}
