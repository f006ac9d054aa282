package server

import (
	"context"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// courseTopics lists a course's topics for the admin program of package
// courses, which cannot import topics (topics imports courses).
func courseTopics(ctx context.Context, q sqldb.Querier, courseID int64) ([]courses.AdminTopic, error) {
	list, err := topics.ForCourse(ctx, q, courseID)
	if err != nil {
		return nil, err
	}
	out := make([]courses.AdminTopic, len(list))
	for i, t := range list {
		out[i] = courses.AdminTopic{ID: t.ID, LessonID: t.LessonID, Title: t.Title, Summary: t.Summary,
			Position: t.Position, Active: t.Active, Preview: t.Preview, CanSkip: t.CanSkip, Duration: t.Duration,
			TopicableType: t.TopicableType, Content: t.Content}
	}
	return out, nil
}

// cloneLessonTopics copies a lesson's topics when package courses clones
// the lesson.
func (s *Server) cloneLessonTopics(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, fromLessonID, toLessonID int64) error {
	return topics.CloneLessonTopics(ctx, tx, t, s.Kinds, fromLessonID, toLessonID)
}
