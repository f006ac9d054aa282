package server

import (
	"context"

	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/content/file"
	"github.com/lms-platform/lms/internal/content/h5pcontent"
	"github.com/lms-platform/lms/internal/content/oembed"
	"github.com/lms-platform/lms/internal/content/project"
	"github.com/lms-platform/lms/internal/content/richtext"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// contentKinds registers the topic content kinds; a new kind is one more
// line here.
func (s *Server) contentKinds() *content.Registry {
	return content.NewRegistry(
		richtext.Kind{},
		file.PDF(),
		file.Image(),
		file.Audio(),
		file.Video(),
		oembed.New(fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate}), s.Cache, s.Clock.Now),
		project.Kind{},
		// H5P topics upload packages to the H5P service over HTTP, as to a
		// separate deployment; s.H5P is built after the kinds, so its
		// address is read on each call.
		h5pcontent.New(s.Config.InternalKey, func() string { return s.H5P.API.BaseURL() }),
	)
}

// topicRoutes registers signed file links and topic authoring.
func (s *Server) topicRoutes() {
	files.Routes(s.API, s.Files)
	s.topics = &topics.Service{Clock: s.Clock, Kinds: s.Kinds, Files: s.Files, Scanner: s.Scanner,
		// A project topic completes when the learner submits. s.Learning is
		// built after these routes, so it is read when a submission arrives.
		OnProjectSubmitted: func(ctx context.Context, t *platform.Tenant, userID, topicID int64) error {
			return s.Learning.CompleteTopic(ctx, t, userID, topicID)
		},
		ContentChanged: s.courseChanged}
	topics.Routes(s.API, s.topics)
}

// topicFiles collects the files of the topics a course or lesson delete
// takes with it, for package courses, which cannot import topics.
func (s *Server) topicFiles(ctx context.Context, q sqldb.Querier, courseID, lessonID int64) (func(context.Context, *platform.Tenant), error) {
	var rest *topics.Remnants
	var err error
	if lessonID != 0 {
		rest, err = s.topics.LessonRemnants(ctx, q, lessonID)
	} else {
		rest, err = s.topics.CourseRemnants(ctx, q, courseID)
	}
	return rest.Remove, err
}

// courseChanged lets learning re-open finished courses that gained an
// active topic, after topics or lessons change. s.Learning is built after
// the authoring routes, so it is read when a change arrives.
func (s *Server) courseChanged(ctx context.Context, t *platform.Tenant, courseID int64) error {
	return s.Learning.CourseChanged(ctx, t, courseID)
}
