package server

import (
	"github.com/lms-platform/lms/internal/content"
	cmi5kind "github.com/lms-platform/lms/internal/content/cmi5"
	interactivekind "github.com/lms-platform/lms/internal/content/interactive"
	liascriptkind "github.com/lms-platform/lms/internal/content/liascript"
	ltikind "github.com/lms-platform/lms/internal/content/lti"
	quizkind "github.com/lms-platform/lms/internal/content/quiz"
	scormkind "github.com/lms-platform/lms/internal/content/scorm"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/interactive"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
	"github.com/lms-platform/lms/internal/kinds/layout"
	"github.com/lms-platform/lms/internal/kinds/oembed"
	"github.com/lms-platform/lms/internal/kinds/project"
	"github.com/lms-platform/lms/internal/kinds/richtext"
	"github.com/lms-platform/lms/internal/liascript"
	"github.com/lms-platform/lms/internal/quiz"
	"github.com/lms-platform/lms/internal/scorm"
	"github.com/lms-platform/lms/internal/topics"
)

// contentKinds registers the topic content kinds; a new kind is one more
// line here.
func (s *Server) contentKinds() *content.Registry {
	// H5P topics upload packages to the H5P service over HTTP, as to a
	// separate deployment; s.H5P is built after the kinds, so its
	// address is read on each call.
	h5p := h5pcontent.New(s.Config.InternalKey, func() string { return s.H5P.API.BaseURL() })
	// A layout's LiaScriptLesson is checked with the LiaScript service.
	lia := s.liascriptKind()
	return content.NewRegistry(
		richtext.Kind{},
		file.PDF(),
		file.Image(),
		file.Audio(),
		file.Video().ProcessedBy(s.Videos.Enqueue),
		oembed.New(fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate}), s.Cache, s.Clock.Now),
		project.Kind{},
		h5p,
		// A layout's H5PFrame is checked with the H5P service through the
		// H5P kind's client.
		&layout.Kind{H5P: h5p, LiaScript: s.liascript},
		quizkind.Kind{},
		// SCORM topics store their packages through the SCORM service,
		// whose progress is wired in topicRoutes.
		scormkind.Kind{Packages: s.scormService()},
		&cmi5kind.Kind{Packages: s.cmi5},
		s.interactiveKind(),
		lia,
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
	s.mediaRoutes()
	layout.Routes(s.API, &layout.Practice{Topics: s.topics, Progress: s.Learning})
	// Quiz attempts complete their topic through learning too.
	q := &quiz.Service{Clock: s.Clock, Settings: s.Settings, Topics: s.topics, Progress: s.Learning,
		Gate: s.Learning, Locker: s.Locker}
	quiz.Routes(s.API, q)
	if s.Jobs != nil {
		s.Jobs.Add(q.Jobs()...)
	}
	// SCORM tracks complete their topic and add its time through learning.
	sc := s.scormService()
	sc.Progress = s.Learning
	scorm.Routes(s.API, sc)
	s.cmi5Routes()
	s.interactiveRoutes()
	s.liascriptRoutes()
}

// scormService is the one SCORM service of the server, made on first use.
func (s *Server) scormService() *scorm.Service {
	if s.scorm == nil {
		s.scorm = &scorm.Service{Clock: s.Clock, Scanner: s.Scanner, PlayerDir: s.Config.ScormPlayerDir}
	}
	return s.scorm
}

// interactiveKind is the interactive kind on the package library, which
// gets its topics and progress once they are built (interactiveRoutes).
func (s *Server) interactiveKind() content.Kind {
	s.interactive = &interactive.Service{Clock: s.Clock, Settings: s.Settings}
	return &interactivekind.Kind{Packages: s.interactive, Settings: s.Settings}
}

// interactiveRoutes serves packages, apps, their progress and CSP reports.
func (s *Server) interactiveRoutes() {
	s.interactive.Topics, s.interactive.Progress = s.topics, s.Learning
	interactive.Routes(s.API, s.interactive)
}

// liascriptKind is the LiaScript kind on the course store, which gets its
// topics and progress once they are built (liascriptRoutes).
func (s *Server) liascriptKind() content.Kind {
	s.liascript = &liascript.Service{Clock: s.Clock, RuntimeDir: s.Config.LiaScriptDir}
	return &liascriptkind.Kind{Courses: s.liascript}
}

// liascriptRoutes serves course uploads, progress and previews.
func (s *Server) liascriptRoutes() {
	s.liascript.Topics, s.liascript.Progress, s.liascript.FileURL = s.topics, s.Learning, s.Files.URL
	liascript.Routes(s.API, s.liascript)
}
