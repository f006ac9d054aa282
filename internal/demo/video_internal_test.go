package demo

import (
	"context"
	"math"
	"os"
	"os/exec"
	"testing"

	"github.com/lms-platform/lms/internal/demo/media"
)

// With ffmpeg the films get a spoken voice-over of some seconds; without
// it, none (the film falls back to a chime).
func TestVoiceOver(t *testing.T) {
	path, err := exec.LookPath("ffmpeg")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI installs ffmpeg:", err)
		}
		t.Skip("no ffmpeg here")
	}
	s := &Service{FFmpeg: path}
	voice, err := s.voiceOver(context.Background(), progressFilm.Voice)
	if err != nil {
		t.Fatal(err)
	}
	seconds := float64(len(voice)) / media.SampleRate
	var energy float64
	for _, v := range voice {
		energy += float64(v) * float64(v)
	}
	if rms := math.Sqrt(energy / float64(len(voice))); seconds < 3 || rms < 300 {
		t.Fatalf("voice-over of %.1f s at RMS %.0f", seconds, rms)
	}
	none := &Service{FFmpeg: ""}
	if v, err := none.voiceOver(context.Background(), "hello"); v != nil || err != nil {
		t.Fatalf("without ffmpeg: %d samples, %v", len(v), err)
	}
}
