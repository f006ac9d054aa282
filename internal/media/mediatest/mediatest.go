// Package mediatest helps tests that need Debian's ffmpeg: they run
// where it is installed, and CI (CI=true), whose .ci/run installs it,
// fails them when it is missing instead of skipping.
package mediatest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/lms-platform/lms/internal/media"
)

// NeedFFmpeg skips the test without ffmpeg, except under CI.
func NeedFFmpeg(t testing.TB) {
	t.Helper()
	if err := media.FindFFmpeg().Missing(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// MP4 has ffmpeg make a small MP4 of the given length: a moving test
// picture of 640 × 360 and a tone.
func MP4(t testing.TB, seconds int) []byte {
	t.Helper()
	NeedFFmpeg(t)
	out := filepath.Join(t.TempDir(), "clip.mp4")
	cmd := exec.Command("ffmpeg", "-hide_banner", "-nostdin", "-y",
		"-f", "lavfi", "-i", "testsrc2=size=640x360:rate=25:duration="+strconv.Itoa(seconds),
		"-f", "lavfi", "-i", "sine=frequency=440:duration="+strconv.Itoa(seconds),
		"-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-c:a", "aac", "-shortest", out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v\n%s", err, b)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
