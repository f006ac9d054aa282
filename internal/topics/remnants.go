package topics

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/courses"
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

// lessonRemnants collects the files of a lesson's topics, nested lessons
// included, before the lesson is deleted.
func (s *Service) lessonRemnants(ctx context.Context, q sqldb.Querier, lessonID int64) (*Remnants, error) {
	lessons, err := courses.LessonSubtree(ctx, q, lessonID)
	if err != nil || len(lessons) == 0 {
		return &Remnants{s: s}, err
	}
	var a sqldb.Args
	return s.remnants(ctx, q, `SELECT id FROM topics WHERE lesson_id IN (`+a.List(lessons)+`)`, a...)
}

// courseRemnants collects the files of a course's topics before the course
// is deleted.
func (s *Service) courseRemnants(ctx context.Context, q sqldb.Querier, courseID int64) (*Remnants, error) {
	return s.remnants(ctx, q, `SELECT id FROM topics WHERE course_id = $1`, courseID)
}

// remnants collects the topics the query which (their ids, from args)
// selects with their files.
func (s *Service) remnants(ctx context.Context, q sqldb.Querier, which string, args ...any) (*Remnants, error) {
	ids, err := sqldb.Column[int64](q.QueryContext(ctx, which, args...))
	if err != nil {
		return nil, fmt.Errorf("topics: collect topics: %w", err)
	}
	r := &Remnants{s: s}
	if len(ids) == 0 {
		return r, nil
	}
	var a sqldb.Args
	in := a.List(ids)
	if r.topics, err = queryTopics(ctx, q, `SELECT `+topicColumns+` FROM topics WHERE id IN (`+in+`)`, a...); err != nil {
		return nil, err
	}
	paths, err := sqldb.Column[string](q.QueryContext(ctx, `SELECT path FROM topic_resources WHERE topic_id IN (`+in+`)
		UNION ALL SELECT path FROM project_submissions WHERE topic_id IN (`+in+`)`, a...))
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
