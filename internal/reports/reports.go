// Package reports is the gradebook: tutors and admins read the progress of
// a course's learners (one row per learner, or one learner topic by topic
// with what each topic's kind kept of their work) and export both as CSV.
// It reads through the owners of the data (learning, courses, accounts,
// the kinds) and writes nothing.
package reports

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/learning"
	"github.com/lms-platform/lms/internal/platform"
)

// Progress is what the gradebook reads of learners' progress (package
// learning).
type Progress interface {
	Gradebook(ctx context.Context, t *platform.Tenant, courseID int64, only []int64) (learning.Gradebook, error)
	GradebookCells(ctx context.Context, t *platform.Tenant, courseID int64, userIDs []int64) (map[int64]map[int64]learning.GradebookCell, error)
}

// TrackSource fills in what one kind kept of a learner's work in some
// topics of a course (only those of its kind find anything), into tracks
// by topic id. One call answers for every topic: a source never queries
// topic by topic.
type TrackSource func(ctx context.Context, t *platform.Tenant, userID int64, topicIDs []int64, tracks map[int64]*LearnerTracks) error

// Service answers the gradebook routes.
type Service struct {
	Clock    clock.Clock
	Progress Progress
	// Tracks are the kinds' sources of a learner's tracks, summed up.
	Tracks []TrackSource
	// TopicSources are the kinds' sources of a learner's records in one
	// topic, in full, by the name of the kind they keep records of.
	TopicSources map[string]TopicSource
}

func (s *Service) now() time.Time { return s.Clock.Now().UTC() }

var errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")

// CanRead reports whether p may read the progress of c's learners:
// admins, who read every course and user, or an author of c who reads the
// users of the courses they author (tutors).
func CanRead(p *access.Principal, c courses.Course) bool {
	if p == nil {
		return false
	}
	if p.Has(access.CourseRead) && p.Has(access.UserRead) {
		return true
	}
	return p.Has(access.CourseReadAuthored) && p.Has(access.UserReadCourseAuthored) && c.HasAuthor(p.UserID)
}

// course loads the course p asks about: 404 when it does not exist, 403
// when p may not read its gradebook.
func course(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (courses.Course, error) {
	c, err := courses.ByID(ctx, t.DB, id)
	if err != nil {
		return c, err
	}
	if !CanRead(p, c) {
		return c, errUnauthorized
	}
	return c, nil
}
