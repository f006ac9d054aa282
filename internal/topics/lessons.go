package topics

import (
	"context"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Service is the courses.TopicStore: what courses asks of the topics of
// its lessons, for the admin program, lesson clones and deletes.
var _ courses.TopicStore = (*Service)(nil)

// AdminTopics lists every topic of a course as the admin program shows it.
func (s *Service) AdminTopics(ctx context.Context, q sqldb.Querier, courseID int64) ([]courses.AdminTopic, error) {
	list, err := ForCourse(ctx, q, courseID)
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

// CloneLessonTopics copies a lesson's topics when courses clones the
// lesson, inside the clone's transaction.
func (s *Service) CloneLessonTopics(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, fromLessonID, toLessonID int64) error {
	return CloneLessonTopics(ctx, tx, t, s.Kinds, fromLessonID, toLessonID)
}

// TopicFiles collects the files of the topics a course or lesson delete
// takes with it, and returns what removes them once the delete commits.
func (s *Service) TopicFiles(ctx context.Context, q sqldb.Querier, courseID, lessonID int64) (func(context.Context, *platform.Tenant), error) {
	var rest *Remnants
	var err error
	if lessonID != 0 {
		rest, err = s.lessonRemnants(ctx, q, lessonID)
	} else {
		rest, err = s.courseRemnants(ctx, q, courseID)
	}
	return rest.Remove, err
}
