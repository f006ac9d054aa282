package topics

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Remnants are the stored files of topics whose rows are being deleted:
// collected inside the deleting transaction, removed once it commits, so a
// rolled-back delete keeps its files and a committed one leaves none.
type Remnants struct {
	s      *Service
	topics []Topic
	keys   []string
}

// Which topics a delete takes with it.
const (
	oneTopic = `SELECT id FROM topics WHERE id = $1`
	// A lesson takes its nested lessons' topics too.
	lessonTopics = `WITH RECURSIVE sub(id) AS (
			SELECT id FROM lessons WHERE id = $1
			UNION SELECT l.id FROM lessons l JOIN sub ON l.parent_id = sub.id)
		SELECT id FROM topics WHERE lesson_id IN (SELECT id FROM sub)`
	courseTopics = `SELECT id FROM topics WHERE course_id = $1`
)

// lessonRemnants collects the files of a lesson's topics, nested lessons
// included, before the lesson is deleted.
func (s *Service) lessonRemnants(ctx context.Context, q sqldb.Querier, lessonID int64) (*Remnants, error) {
	return s.remnants(ctx, q, lessonTopics, lessonID)
}

// courseRemnants collects the files of a course's topics before the course
// is deleted.
func (s *Service) courseRemnants(ctx context.Context, q sqldb.Querier, courseID int64) (*Remnants, error) {
	return s.remnants(ctx, q, courseTopics, courseID)
}

func (s *Service) remnants(ctx context.Context, q sqldb.Querier, which string, id int64) (*Remnants, error) {
	r := &Remnants{s: s}
	rows, err := q.QueryContext(ctx, `SELECT `+topicColumns+` FROM topics WHERE id IN (`+which+`)`, id)
	if err != nil {
		return nil, fmt.Errorf("topics: collect topics: %w", err)
	}
	for rows.Next() {
		tp, err := scanTopic(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		r.topics = append(r.topics, tp)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	paths, err := sqldb.Column[string](q.QueryContext(ctx, `SELECT path FROM topic_resources WHERE topic_id IN (`+which+`)
		UNION ALL SELECT path FROM project_submissions WHERE topic_id IN (`+which+`)`, id))
	if err != nil {
		return nil, fmt.Errorf("topics: collect topic files: %w", err)
	}
	r.keys = append(r.keys, paths...)
	return r, nil
}

// Remove deletes the collected files. A failure only leaves orphan files,
// so it is logged, not returned.
func (r *Remnants) Remove(ctx context.Context, t *platform.Tenant) {
	if r == nil {
		return
	}
	for _, tp := range r.topics {
		kind, _ := r.s.Kinds.ByClass(tp.TopicableType)
		r.s.removeContent(ctx, t, kind, tp.ID, tp.Content)
		if err := t.Blob.DeletePrefix(context.WithoutCancel(ctx), submissionsPrefix(tp.ID)); err != nil {
			httpx.Log(ctx).Warn("topics: remove submissions", "tenant", t.ID, "topic", tp.ID, "error", err)
		}
	}
	r.s.deleteBlobs(ctx, t, r.keys)
}
