package server

import (
	"context"

	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/kinds/cmi5"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/kinds/h5pcontent"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/layout"
	"github.com/lms-platform/lms/internal/kinds/liascript"
	"github.com/lms-platform/lms/internal/kinds/lti"
	"github.com/lms-platform/lms/internal/kinds/oembed"
	"github.com/lms-platform/lms/internal/kinds/project"
	"github.com/lms-platform/lms/internal/kinds/quiz"
	"github.com/lms-platform/lms/internal/kinds/richtext"
	"github.com/lms-platform/lms/internal/kinds/scorm"
	"github.com/lms-platform/lms/internal/media"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// topicRoutes registers signed file links and topic authoring, then
// builds every topic kind on topics and learning, which are built first
// (newLearning) and hold the registry the kinds join, and registers each
// kind with its routes, jobs and listeners in one loop.
func (s *Server) topicRoutes(authService *auth.Service) {
	files.Routes(s.API, s.Files)
	s.topics = &topics.Service{Clock: s.Clock, Kinds: s.Kinds, Files: s.Files, Progress: s.Learning,
		Scanner: s.Scanner}
	s.mediaRoutes()
	deps := kinds.Deps{Clock: s.Clock, Settings: s.Settings, Cache: s.Cache, Locker: s.Locker, Limiter: s.Limiter,
		Scanner: s.Scanner, Topics: s.topics, Learning: s.Learning, FileURL: s.Files.URL, Videos: s.Videos,
		H5P: s.H5P.API, Config: kinds.Config{InternalKey: s.Config.InternalKey, FetchAllowPrivate: s.Config.FetchAllowPrivate,
			ScormPlayerDir: s.Config.ScormPlayerDir, LiaScriptDir: s.Config.LiaScriptDir}}
	for _, k := range s.topicKinds(deps, authService) {
		s.Kinds.Register(k)
		if r, ok := k.(kinds.Router); ok {
			r.Routes(s.API)
		}
		if j, ok := k.(kinds.Scheduler); ok && s.Jobs != nil {
			s.Jobs.Add(j.Jobs()...)
		}
		if l, ok := k.(kinds.Listener); ok && s.Dispatcher != nil {
			for _, r := range l.Listeners() {
				s.Dispatcher.ListenTo(r.Name, events.Named(r.On...), r.Run)
			}
		}
	}
	// The topic routes document the fields of every registered kind.
	topics.Routes(s.API, s.topics)
}

// topicKinds are the topic content kinds, in the order of registration; a
// new kind is one more line here.
func (s *Server) topicKinds(deps kinds.Deps, authService *auth.Service) []content.Kind {
	// H5P topics upload packages to the H5P service over HTTP, as to a
	// separate deployment.
	h5p := h5pcontent.New(deps)
	lia := liascript.New(deps)
	list := []content.Kind{richtext.New(deps)}
	list = append(list, file.New(deps)...)
	return append(list,
		oembed.New(deps),
		project.New(deps),
		h5p,
		// A layout's H5PFrame is checked with the H5P service through the
		// H5P kind's client, its LiaScriptLesson with the LiaScript courses.
		layout.New(deps, h5p, lia.Service),
		quiz.New(deps),
		scorm.New(deps),
		cmi5.New(deps, cmi5.Options{Principal: s.lrsPrincipal}),
		interactive.New(deps),
		lia,
		// The tool role's launches log users in through auth and land on
		// the frontend's /lti/launch.
		lti.New(deps, lti.Options{
			Issue: func(ctx context.Context, t *platform.Tenant, userID int64) (auth.Issued, error) {
				return authService.LoginUser(ctx, t, userID, false)
			},
			FrontURL: s.frontURL}),
	)
}

// mediaRoutes builds the video transcoding on the queue and the topics,
// and registers the operations route of background processing.
func (s *Server) mediaRoutes() {
	s.Videos = &media.Videos{Queue: s.Queue, Settings: s.Settings, FFmpeg: media.FindFFmpeg(), Log: s.Log, Topics: s.topics}
	if s.Queue != nil {
		s.Videos.Register()
		if err := s.Videos.FFmpeg.Missing(); err != nil {
			s.Log.Warn("video transcoding is unavailable", "error", err)
		}
	}
	media.Routes(s.API, s.Videos)
}
