package learning

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// ListenerEvents are the events Service.Listener reacts to.
var ListenerEvents = []string{events.CourseContentChanged}

// Listener reacts to the changes of other capabilities that learning's
// state follows: CourseContentChanged runs CourseChanged, which is
// idempotent, so redelivery is harmless.
func (s *Service) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	if ev.Name != events.CourseContentChanged {
		return nil
	}
	id, ok := ev.Payload["course_id"].(float64)
	if !ok {
		return fmt.Errorf("learning: %s %d without course_id", ev.Name, ev.ID)
	}
	return s.CourseChanged(ctx, t, int64(id))
}

// CourseChanged brings every learner's finished state of a course in line
// with its program after authoring changed it: a finished learner who now
// has a visible topic left to complete (an active topic was added, a
// lesson or topic was activated) is finished no longer, and an unfinished
// learner who has now completed every visible topic (the last open topic
// was removed or hidden) is finished, with CourseFinished.
//
// The finished state is kept in course_progress rather than worked out at
// read time so that CourseFinished is emitted exactly once per finishing;
// so every change of a course's lessons or topics records
// CourseContentChanged, which Listener answers with this.
func (s *Service) CourseChanged(ctx context.Context, t *platform.Tenant, courseID int64) error {
	now := s.now()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		tr, err := loadTree(ctx, tx, courseID, now)
		if err != nil {
			return err
		}
		finished := map[int64]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT user_id, finished_at FROM course_progress
			WHERE course_id = $1 AND started_at IS NOT NULL`, courseID)
		if err != nil {
			return fmt.Errorf("learning: list learners of course %d: %w", courseID, err)
		}
		for rows.Next() {
			var user int64
			var at sql.NullTime
			if err := rows.Scan(&user, &at); err != nil {
				rows.Close()
				return err
			}
			finished[user] = at.Valid
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		status := map[int64]map[int64]int{}
		srows, err := tx.QueryContext(ctx, `SELECT user_id, topic_id, status FROM topic_progress WHERE course_id = $1`, courseID)
		if err != nil {
			return fmt.Errorf("learning: load statuses of course %d: %w", courseID, err)
		}
		for srows.Next() {
			var user, topic int64
			var st int
			if err := srows.Scan(&user, &topic, &st); err != nil {
				srows.Close()
				return err
			}
			if status[user] == nil {
				status[user] = map[int64]int{}
			}
			status[user][topic] = st
		}
		srows.Close()
		if err := srows.Err(); err != nil {
			return err
		}
		for user, was := range finished {
			is := tr.finished(status[user])
			switch {
			case was && !is:
				if _, err := tx.ExecContext(ctx, `UPDATE course_progress SET finished_at = NULL, updated_at = $1
					WHERE user_id = $2 AND course_id = $3`, now, user, courseID); err != nil {
					return fmt.Errorf("learning: reopen course %d: %w", courseID, err)
				}
			case !was && is:
				done, err := finishCourse(ctx, tx, now, user, courseID)
				if err != nil {
					return err
				}
				if done {
					if err := emit(ctx, tx, now, events.CourseFinished, user, map[string]any{"course_id": courseID}); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}
