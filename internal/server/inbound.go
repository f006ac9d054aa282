package server

import (
	"time"

	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/jitsi"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/kinds/richtext"
	"github.com/lms-platform/lms/internal/livingcourse"
)

// recordingTimeout bounds the download of one meeting recording, which
// may be as large as any video upload.
const recordingTimeout = 30 * time.Minute

// inboundRoutes registers the webhooks other systems call, authenticated
// by signature: Jitsi recordings and living-course sources.
func (s *Server) inboundRoutes() {
	video := file.Video()
	jitsi.Routes(s.API, &jitsi.Service{Clock: s.Clock, Settings: s.Settings, Topics: s.topics,
		Fetch: fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate, MaxBody: video.MaxUpload(),
			Timeout: recordingTimeout}),
		VideoClass: video.Class()})
	living := &livingcourse.Service{Clock: s.Clock, Topics: s.topics, Queue: s.Queue, RichTextClass: richtext.Class,
		Fetch: fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate, MaxBody: richtext.MaxLength})}
	livingcourse.Routes(s.API, living)
	if s.Queue != nil {
		s.Queue.Handle(living.Job())
	}
}
