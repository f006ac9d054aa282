package learning

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// AddTopicTime adds time a content kind measured itself (a SCORM SCO's
// session time) to the learner's time on a topic, and marks the topic in
// progress unless it is complete. The caller has checked that the learner
// may record progress there.
func (s *Service) AddTopicTime(ctx context.Context, q sqldb.Querier, userID, topicID, seconds int64) error {
	if seconds <= 0 {
		return nil
	}
	courseID, err := topics.CourseOf(ctx, q, topicID)
	if err != nil {
		return err
	}
	now := s.now()
	_, err = q.ExecContext(ctx, `INSERT INTO topic_progress (user_id, topic_id, course_id, status, seconds, started_at, updated_at)
		VALUES ($1, $2, $3, 2, $4, $5, $5)
		ON CONFLICT (user_id, topic_id) DO UPDATE SET
			seconds = topic_progress.seconds + $4,
			status = CASE WHEN topic_progress.status = 1 THEN 1 ELSE 2 END,
			started_at = COALESCE(topic_progress.started_at, $5),
			updated_at = $5`, userID, topicID, courseID, seconds, now)
	if err != nil {
		return fmt.Errorf("learning: add time to topic %d: %w", topicID, err)
	}
	return nil
}

// TopicComplete tells whether the learner's topic is complete; content
// kinds that complete topics themselves (SCORM) read it to finish a
// completion that an earlier request recorded on their side only.
func (s *Service) TopicComplete(ctx context.Context, t *platform.Tenant, userID, topicID int64) (bool, error) {
	var n int
	err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM topic_progress WHERE user_id = $1 AND topic_id = $2 AND status = $3`,
		userID, topicID, Complete).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("learning: topic %d status: %w", topicID, err)
	}
	return n > 0, nil
}
