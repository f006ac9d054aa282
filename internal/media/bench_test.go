package media_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/media"
	"github.com/lms-platform/lms/internal/media/mediatest"
)

// BenchmarkTranscode compares our transcoding of one upload (download
// from the tenant's store, probe, the HLS pass, the poster, storing the
// output) with plain ffmpeg making the same HLS variants from a local
// file. It reports both in seconds per run, their ratio (the goal: at most
// 1.10) and the load average, since the machine is shared.
func BenchmarkTranscode(b *testing.B) {
	mediatest.NeedFFmpeg(b)
	env := apitest.New(b, "sqlite", apitest.Options{})
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	ctx := context.Background()
	clip := mediatest.MP4(b, 20)
	key := "content/bench/clip.mp4"
	if err := tn.Blob.Put(ctx, key, strings.NewReader(string(clip)), int64(len(clip)), "video/mp4"); err != nil {
		b.Fatal(err)
	}
	local := filepath.Join(b.TempDir(), "clip.mp4")
	if err := os.WriteFile(local, clip, 0o600); err != nil {
		b.Fatal(err)
	}
	ff := media.FindFFmpeg()
	probe, err := ff.Probe(ctx, local)
	if err != nil {
		b.Fatal(err)
	}
	// Two variants no taller than the 360-line source, so both runs make
	// the same two.
	conf := media.Config{Enable: true, Variants: []media.Variant{{Height: 180, Kbps: 300}, {Height: 360, Kbps: 700}}}
	v := &media.Videos{FFmpeg: ff}
	var plain, ours time.Duration
	b.ResetTimer()
	for range b.N {
		out := b.TempDir()
		start := time.Now()
		if o, err := exec.Command(ff.FFmpeg, media.HLSArgs(local, out, probe, conf.Variants)...).CombinedOutput(); err != nil {
			b.Fatalf("plain ffmpeg: %v\n%s", err, o)
		}
		plain += time.Since(start)
		start = time.Now()
		if _, err := v.Transcode(ctx, tn, key, conf, func(int) {}); err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)
	}
	b.StopTimer()
	b.ReportMetric(plain.Seconds()/float64(b.N), "plain-s/run")
	b.ReportMetric(ours.Seconds()/float64(b.N), "lms-s/run")
	b.ReportMetric(ours.Seconds()/plain.Seconds(), "ratio")
	b.ReportMetric(20*float64(b.N)/ours.Seconds(), "video-s/s")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f, err := strconv.ParseFloat(strings.Fields(string(load))[0], 64); err == nil {
			b.ReportMetric(f, "load1")
		}
	}
}
