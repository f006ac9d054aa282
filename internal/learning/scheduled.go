package learning

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// DeadlineJob is the name of the scheduled job of learning. Access expiry
// and course activation are jobs of courses, which owns both.
const DeadlineJob = "course-deadline-check"

const reminderDaysKey = "lms_courses.reminder_of_deadline_count_days"

// Jobs are the scheduled jobs of learning: the hourly deadline check.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{{Name: DeadlineJob, Schedule: jobs.MustCron("@hourly"), Run: s.RemindDeadlines}}
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
