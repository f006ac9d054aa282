package learning

import (
	"context"
	"database/sql"
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

// TopicResult tells whether the learner's topic is complete, and its
// kept score (nil: none); content kinds that complete topics themselves
// (SCORM) read it to finish a completion, or pass on a better score, that
// an earlier request recorded on their side only.
func (s *Service) TopicResult(ctx context.Context, t *platform.Tenant, userID, topicID int64) (bool, *topics.TopicScore, error) {
	var status int
	var raw, outOf sql.NullFloat64
	err := t.DB.QueryRowContext(ctx, `SELECT status, score_raw, score_max FROM topic_progress WHERE user_id = $1 AND topic_id = $2`,
		userID, topicID).Scan(&status, &raw, &outOf)
	if sqldb.NotFound(err) {
		return false, nil, nil
	}
	if err != nil {
		return false, nil, fmt.Errorf("learning: topic %d result: %w", topicID, err)
	}
	return status == Complete, rowScore(raw, outOf), nil
}
