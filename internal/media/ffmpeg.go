package media

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// FFmpeg runs Debian's ffmpeg and ffprobe.
type FFmpeg struct {
	FFmpeg, FFprobe string
}

// ErrMissing says that ffmpeg or ffprobe is not installed.
var ErrMissing = errors.New("ffmpeg is not installed on the server (Debian package ffmpeg), so uploaded videos cannot be transcoded")

// FindFFmpeg looks ffmpeg and ffprobe up on the PATH; either may be
// empty when missing, which Missing reports.
func FindFFmpeg() FFmpeg {
	var f FFmpeg
	f.FFmpeg, _ = exec.LookPath("ffmpeg")
	f.FFprobe, _ = exec.LookPath("ffprobe")
	return f
}

// Missing returns ErrMissing when a program is not there.
func (f FFmpeg) Missing() error {
	if f.FFmpeg == "" || f.FFprobe == "" {
		return ErrMissing
	}
	return nil
}

// Probe is what ffprobe tells of a video.
type Probe struct {
	Duration      float64
	Width, Height int
	HasAudio      bool
}

// errCorrupt is a file ffmpeg cannot read as a video; no retry helps.
type errCorrupt struct{ reason string }

func (e errCorrupt) Error() string { return "The file is not a playable video: " + e.reason }

// Probe reads the duration, picture size and streams of the file at path.
func (f FFmpeg) Probe(ctx context.Context, path string) (Probe, error) {
	var out, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, f.FFprobe, "-v", "error", "-print_format", "json", "-show_format", "-show_streams", path)
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return Probe{}, ctx.Err()
		}
		return Probe{}, errCorrupt{reason: toolMessage(stderr.String(), path)}
	}
	var doc struct {
		Format struct {
			Duration string `json:"duration"`
		} `json:"format"`
		Streams []struct {
			CodecType string `json:"codec_type"`
			Width     int    `json:"width"`
			Height    int    `json:"height"`
			Duration  string `json:"duration"`
		} `json:"streams"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		return Probe{}, errCorrupt{reason: "ffprobe's answer cannot be read"}
	}
	var p Probe
	p.Duration, _ = strconv.ParseFloat(doc.Format.Duration, 64)
	for _, s := range doc.Streams {
		switch s.CodecType {
		case "video":
			if p.Width == 0 && s.Width > 0 && s.Height > 0 {
				p.Width, p.Height = s.Width, s.Height
				if p.Duration == 0 {
					p.Duration, _ = strconv.ParseFloat(s.Duration, 64)
				}
			}
		case "audio":
			p.HasAudio = true
		}
	}
	if p.Width == 0 {
		return p, errCorrupt{reason: "it has no video stream"}
	}
	if p.Duration <= 0 {
		return p, errCorrupt{reason: "its duration is unknown"}
	}
	return p, nil
}

// toolMessage is the last line of ffmpeg's error output, with the server's
// temporary path taken out, short enough to show a user.
func toolMessage(stderr, path string) string {
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	msg := strings.TrimSpace(lines[len(lines)-1])
	msg = strings.ReplaceAll(msg, path, "the upload")
	msg = strings.ReplaceAll(msg, filepath.Dir(path), "")
	if msg == "" {
		msg = "ffmpeg could not read it"
	}
	if len(msg) > 300 {
		msg = msg[:300]
	}
	return msg
}

// Variant is one rendition of the HLS output.
type Variant struct {
	Height int
	Kbps   int
}

// Name is how a variant is shown: "360p@800k".
func (v Variant) Name() string { return fmt.Sprintf("%dp@%dk", v.Height, v.Kbps) }

// HLSArgs are ffmpeg's arguments that transcode in to HLS under dir: one
// pass decodes the input once and encodes every variant, each with its
// own playlist (v0/index.m3u8, ...), segments of four seconds cut on
// forced key frames, and master.m3u8 naming them all.
func HLSArgs(in, dir string, p Probe, variants []Variant) []string {
	args := []string{"-hide_banner", "-nostdin", "-y", "-i", in}
	var split strings.Builder
	fmt.Fprintf(&split, "[0:v:0]split=%d", len(variants))
	for i := range variants {
		fmt.Fprintf(&split, "[s%d]", i)
	}
	for i, v := range variants {
		// Even sizes: H.264 needs them.
		fmt.Fprintf(&split, ";[s%d]scale=-2:%d[o%d]", i, v.Height, i)
	}
	args = append(args, "-filter_complex", split.String())
	var streamMap []string
	for i, v := range variants {
		n := strconv.Itoa(i)
		args = append(args, "-map", "[o"+n+"]",
			"-c:v:"+n, "libx264", "-b:v:"+n, fmt.Sprintf("%dk", v.Kbps),
			"-maxrate:v:"+n, fmt.Sprintf("%dk", v.Kbps*107/100), "-bufsize:v:"+n, fmt.Sprintf("%dk", v.Kbps*3/2))
		entry := "v:" + n
		if p.HasAudio {
			args = append(args, "-map", "0:a:0")
			entry += ",a:" + n
		}
		streamMap = append(streamMap, entry)
	}
	if p.HasAudio {
		args = append(args, "-c:a", "aac", "-b:a", "128k", "-ac", "2")
	}
	args = append(args, "-preset", "veryfast", "-pix_fmt", "yuv420p", "-sc_threshold", "0",
		"-force_key_frames", "expr:gte(t,n_forced*4)",
		"-f", "hls", "-hls_time", "4", "-hls_playlist_type", "vod", "-hls_list_size", "0",
		"-hls_segment_filename", filepath.Join(dir, "v%v", "seg%05d.ts"),
		"-master_pl_name", "master.m3u8", "-var_stream_map", strings.Join(streamMap, " "),
		filepath.Join(dir, "v%v", "index.m3u8"))
	return args
}

// Transcode runs ffmpeg with args, calling progress with the seconds of
// output written so far.
func (f FFmpeg) Transcode(ctx context.Context, args []string, progress func(seconds float64)) error {
	args = append(append([]string{}, args[:len(args)-1]...), "-progress", "pipe:1", "-nostats", args[len(args)-1])
	cmd := exec.CommandContext(ctx, f.FFmpeg, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{b: &stderr, max: 64 << 10}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("media: start ffmpeg: %w", err)
	}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		// out_time_us is in microseconds (out_time_ms too, despite its name).
		if v, ok := strings.CutPrefix(sc.Text(), "out_time_us="); ok && progress != nil {
			if us, err := strconv.ParseInt(v, 10, 64); err == nil && us > 0 {
				progress(float64(us) / 1e6)
			}
		}
	}
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errCorrupt{reason: toolMessage(stderr.String(), args[4])}
	}
	return nil
}

// Poster writes one frame at second at as a JPEG at most 720 pixels high.
func (f FFmpeg) Poster(ctx context.Context, in, out string, at float64) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, f.FFmpeg, "-hide_banner", "-nostdin", "-y", "-ss", strconv.FormatFloat(at, 'f', 2, 64),
		"-i", in, "-frames:v", "1", "-vf", "scale=-2:'min(720,ih)'", "-q:v", "3", out)
	cmd.Stderr = &limitedBuffer{b: &stderr, max: 64 << 10}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return errCorrupt{reason: toolMessage(stderr.String(), in)}
	}
	return nil
}

// limitedBuffer keeps the last max bytes of a tool's error output, where
// ffmpeg says what went wrong.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.b.Write(p)
	if extra := l.b.Len() - l.max; extra > 0 {
		l.b.Next(extra)
	}
	return len(p), nil
}
