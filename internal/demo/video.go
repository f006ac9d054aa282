package demo

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/demo/media"
)

// film is a demo video: drawn by package media when the seed runs, with a
// voice-over spoken by ffmpeg's flite source where ffmpeg is installed (a
// chime otherwise), and uploaded like any video, so the job queue
// transcodes it to HLS and the demo plays it offline. Without ffmpeg the
// topic is still made: it waits, and says it waits for ffmpeg.
type film struct {
	// Make draws the clip with its sound, seconds long.
	Make func(sound []int16, seconds float64) media.Clip
	// Voice is the text of the voice-over.
	Voice string
	// Seconds is the least length; a longer voice-over lengthens it.
	Seconds float64
}

var progressFilm = &film{Make: media.ProgressFilm, Seconds: 9,
	Voice: "Each topic you finish moves your progress bar. Read, watch, hand in. " +
		"Finish them all, and the lesson is complete."}

var thirdsFilm = &film{Make: media.ThirdsFilm, Seconds: 9,
	Voice: "Watch the sun cross the sky. Where it meets the lines of thirds, " +
		"the picture feels balanced. In the dead centre, it feels still."}

// hasFilm reports whether the course has a film: seeding it turns
// transcoding on.
func hasFilm(c course) bool {
	for _, l := range c.Lessons {
		for _, tp := range l.Topics {
			if tp.Film != nil {
				return true
			}
		}
	}
	return false
}

// videoSettings turns transcoding on for the demo's films (the films
// are QuickTime files of JPEG frames, which browsers do not play as they
// are) with two qualities: 240p at 400 kbit/s and 360p at 800 kbit/s.
func videoSettings(ctx context.Context, api *client.Client) error {
	_, err := api.PostAdminConfig(ctx, client.UpdateInputBody{Config: []client.Item{
		{Key: "lms_video.enable", Value: true},
		{Key: "lms_video.bitrates", Value: []any{
			map[string]any{"kiloBitrate": 400, "scale": "426x240"},
			map[string]any{"kiloBitrate": 800, "scale": "640x360"}}},
	}})
	if err != nil {
		return fmt.Errorf("demo: video settings: %w", err)
	}
	return nil
}

// made keeps the films rendered in this process, by film and ffmpeg
// (filmKey): a film comes out the same each time, and each reset of a
// demo tenant seeds it again. Rendering one takes seconds of CPU.
var made sync.Map

type filmKey struct {
	film   *film
	ffmpeg string
}

// movie renders the film as a QuickTime file.
func (s *Service) movie(ctx context.Context, f *film) []byte {
	ffmpeg := s.FFmpeg
	key := filmKey{f, ffmpeg}
	if b, ok := made.Load(key); ok {
		return b.([]byte)
	}
	sound, err := s.voiceOver(ctx, f.Voice)
	if err != nil {
		s.logger().Warn("demo: no voice-over, a chime instead", "error", err)
	}
	if sound == nil {
		sound = media.Tone([]float64{392, 523.25, 659.25, 783.99}, 1.2)
	}
	seconds := max(f.Seconds, float64(len(sound))/media.SampleRate+0.8)
	b := f.Make(sound, seconds).MOV()
	if err == nil {
		// A voice-over that failed may work next time.
		made.Store(key, b)
	}
	return b
}

// voiceOver speaks text with ffmpeg's flite source as mono samples at
// media.SampleRate; nil, and no error, without ffmpeg.
func (s *Service) voiceOver(ctx context.Context, text string) ([]int16, error) {
	ffmpeg := s.FFmpeg
	if ffmpeg == "" {
		return nil, nil
	}
	// The text goes through a file: flite's text option would need the
	// filter graph's escaping.
	dir, err := os.MkdirTemp("", "lms-demo-voice-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "voice.txt")
	if err := os.WriteFile(script, []byte(text), 0o600); err != nil {
		return nil, err
	}
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, ffmpeg, "-hide_banner", "-nostdin", "-v", "error",
		"-f", "lavfi", "-i", "flite=textfile="+script+":voice=slt",
		"-f", "s16le", "-ar", fmt.Sprint(media.SampleRate), "-ac", "1", "pipe:1")
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("ffmpeg's flite voice: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	if out.Len() < media.SampleRate {
		return nil, fmt.Errorf("ffmpeg's flite voice: %d bytes of sound", out.Len())
	}
	samples := make([]int16, out.Len()/2)
	binary.Read(bytes.NewReader(out.Bytes()[:2*len(samples)]), binary.LittleEndian, samples)
	return samples, nil
}
