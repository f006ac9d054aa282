package file

import (
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/kinds"
)

// New is the four file kinds: PDF, image, audio and video, whose uploads
// deps.Videos transcodes when set.
func New(d kinds.Deps) []content.Kind {
	video := Video()
	if d.Videos != nil {
		video = video.ProcessedBy(d.Videos.Enqueue)
	}
	return []content.Kind{PDF(), Image(), Audio(), video}
}
