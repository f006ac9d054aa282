package server

import (
	"context"

	"github.com/lms-platform/lms/internal/queue"
)

// newMedia builds the job queue; the video transcoding that runs on it
// is built with the topics it reads and writes (mediaRoutes).
func (s *Server) newMedia() {
	s.Queue = queue.NewQueue(s.Clock, s.Tenants, s.Log)
}

// checkFFmpeg is the health check's line for ffmpeg: the rest of the
// platform works without it, so it is reported, not counted as down.
func (s *Server) checkFFmpeg(_ context.Context) (string, string) {
	if err := s.Videos.FFmpeg.Missing(); err != nil {
		return "missing", err.Error()
	}
	return "ok", ""
}
