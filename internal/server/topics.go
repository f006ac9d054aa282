package server

import (
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/content/file"
	"github.com/lms-platform/lms/internal/content/h5pcontent"
	"github.com/lms-platform/lms/internal/content/layout"
	ltikind "github.com/lms-platform/lms/internal/content/lti"
	"github.com/lms-platform/lms/internal/content/oembed"
	"github.com/lms-platform/lms/internal/content/project"
	quizkind "github.com/lms-platform/lms/internal/content/quiz"
	"github.com/lms-platform/lms/internal/content/richtext"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/quiz"
	"github.com/lms-platform/lms/internal/topics"
)

// contentKinds registers the topic content kinds; a new kind is one more
// line here.
func (s *Server) contentKinds() *content.Registry {
	// H5P topics upload packages to the H5P service over HTTP, as to a
	// separate deployment; s.H5P is built after the kinds, so its
	// address is read on each call.
	h5p := h5pcontent.New(s.Config.InternalKey, func() string { return s.H5P.API.BaseURL() })
	return content.NewRegistry(
		richtext.Kind{},
		file.PDF(),
		file.Image(),
		file.Audio(),
		file.Video(),
		oembed.New(fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate}), s.Cache, s.Clock.Now),
		project.Kind{},
		h5p,
		// A layout's H5PFrame is checked with the H5P service through the
		// H5P kind's client.
		&layout.Kind{H5P: h5p},
		quizkind.Kind{},
		ltikind.Kind{},
	)
}

// topicRoutes registers signed file links, topic authoring and quiz
// attempts. A project topic completes when the learner submits, a quiz
// topic when an attempt passes, through learning, which is built first
// for that.
func (s *Server) topicRoutes() {
	files.Routes(s.API, s.Files)
	s.topics = &topics.Service{Clock: s.Clock, Kinds: s.Kinds, Files: s.Files, Progress: s.Learning,
		Scanner: s.Scanner}
	topics.Routes(s.API, s.topics)
	layout.Routes(s.API, &layout.Practice{Topics: s.topics, Progress: s.Learning})
	// Quiz attempts complete their topic through learning too.
	q := &quiz.Service{Clock: s.Clock, Settings: s.Settings, Topics: s.topics, Progress: s.Learning,
		Gate: s.Learning, Locker: s.Locker}
	quiz.Routes(s.API, q)
	if s.Jobs != nil {
		s.Jobs.Add(q.Jobs()...)
	}
}
