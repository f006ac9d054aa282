package server

import (
	"context"

	"github.com/lms-platform/lms/internal/media"
	"github.com/lms-platform/lms/internal/queue"
)

// newMedia builds the job queue and the video transcoding that runs on it;
// the topics service it reads and writes topics through is set by
// mediaRoutes, once built.
func (s *Server) newMedia() {
	s.Queue = queue.NewQueue(s.Clock, s.Tenants, s.Log)
	s.Videos = &media.Videos{Queue: s.Queue, Settings: s.Settings, FFmpeg: media.FindFFmpeg(), Log: s.Log}
	s.Videos.Register()
	if err := s.Videos.FFmpeg.Missing(); err != nil {
		s.Log.Warn("video transcoding is unavailable", "error", err)
	}
}

// mediaRoutes registers the operations route of background processing.
func (s *Server) mediaRoutes() {
	if s.Videos == nil {
		// A server built only for its routes (the OpenAPI description).
		s.Videos = &media.Videos{}
	}
	s.Videos.Topics = s.topics
	media.Routes(s.API, s.Videos)
}

// checkFFmpeg is the health check's line for ffmpeg: the rest of the
// platform works without it, so it is reported, not counted as down.
func (s *Server) checkFFmpeg(_ context.Context) (string, string) {
	if err := s.Videos.FFmpeg.Missing(); err != nil {
		return "missing", err.Error()
	}
	return "ok", ""
}
