// Package media does the background work on uploaded media: it
// transcodes uploaded videos to HLS with ffmpeg, as jobs of the job queue
// (internal/queue), and tells clients how far the work is through the
// operations route.
//
// A video topic's content (content/file's Value) carries the processing
// state: queued when stored, processing with a percentage while ffmpeg
// runs, then ready (with the duration, a poster image and, when
// transcoding is on, the HLS master playlist of one variant per bitrate)
// or failed with the reason. The output lives beside the upload, under its
// value's prefix, so it goes when the value goes.
package media

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/sqldb"
)

// JobTranscode is the queue's job kind of a video's transcoding.
const JobTranscode = "video.transcode"

// Topics reads and rewrites the stored content of topics (package topics).
type Topics interface {
	Content(ctx context.Context, t *platform.Tenant, id int64) (string, json.RawMessage, error)
	EditableContent(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (string, json.RawMessage, error)
	UpdateContent(ctx context.Context, t *platform.Tenant, id int64, fn func(class string, value json.RawMessage) (json.RawMessage, error)) error
}

// Settings reads the tenant's lms_video.* settings.
type Settings interface {
	Get(ctx context.Context, t *platform.Tenant, key string) (any, error)
}

// Videos transcodes uploaded videos.
type Videos struct {
	Queue    *queue.Queue
	Topics   Topics
	Settings Settings
	FFmpeg   FFmpeg
	Log      *slog.Logger
	// TempDir holds the work files of a transcoding ("": the system's).
	TempDir string
}

// Register adds the transcoding job to the queue. A missing ffmpeg is
// retried for about an hour (an operator may install it), then fails.
func (v *Videos) Register() {
	v.Queue.Handle(queue.Kind{Name: JobTranscode, Run: v.run, Failed: v.failed, MaxAttempts: 8, Backoff: 30 * time.Second})
}

// Enqueue queues the transcoding of the topic's video inside tx (the
// video kind's content/file.Process).
func (v *Videos) Enqueue(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, topicID int64) error {
	return v.Queue.Enqueue(ctx, t, tx, queue.New{Kind: JobTranscode, Key: OperationKey(topicID),
		Payload: payload{TopicID: topicID}})
}

// OperationKey names a video's transcoding: the spec's operation
// video:<topic_id>, also the key of its job.
func OperationKey(topicID int64) string { return "video:" + strconv.FormatInt(topicID, 10) }

type payload struct {
	TopicID int64 `json:"topic_id"`
}

// errGone says the topic or its upload changed while the job waited: the
// job has nothing to do (a newer job, if any, does the new upload).
var errGone = errors.New("the video was replaced or deleted")

func (v *Videos) run(ctx context.Context, t *platform.Tenant, j queue.Job) error {
	var p payload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return queue.Permanent(fmt.Errorf("media: payload: %w", err))
	}
	val, err := v.load(ctx, t, p.TopicID)
	if errors.Is(err, errGone) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := v.FFmpeg.Missing(); err != nil {
		v.Log.Error("media: cannot transcode", "tenant", t.ID, "topic", p.TopicID, "error", err)
		v.update(ctx, t, p.TopicID, val.Path, func(x *file.Value) { x.Processing, x.Error = file.Queued, err.Error() })
		return err
	}
	conf, err := v.config(ctx, t)
	if err != nil {
		return err
	}
	if err := v.update(ctx, t, p.TopicID, val.Path, func(x *file.Value) {
		x.Processing, x.Progress, x.Error = file.Processing, 0, ""
	}); err != nil {
		return err
	}
	out, err := v.Transcode(ctx, t, val.Path, conf, func(pct int) {
		v.update(ctx, t, p.TopicID, val.Path, func(x *file.Value) { x.Progress = pct })
	})
	var corrupt errCorrupt
	if errors.As(err, &corrupt) {
		return queue.Permanent(corrupt)
	}
	if err != nil {
		return err
	}
	return v.update(ctx, t, p.TopicID, val.Path, func(x *file.Value) {
		x.Processing, x.Progress, x.Error = file.Ready, 100, ""
		x.Duration, x.HLS, x.Poster, x.Variants = out.Duration, out.HLS, out.Poster, out.Variants
	})
}

// failed records the reason of a transcoding that failed for good.
func (v *Videos) failed(ctx context.Context, t *platform.Tenant, j queue.Job, reason string) error {
	var p payload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return nil
	}
	val, err := v.load(ctx, t, p.TopicID)
	if err != nil {
		return nil // gone: nothing to tell
	}
	return v.update(ctx, t, p.TopicID, val.Path, func(x *file.Value) {
		x.Processing, x.Progress, x.Error = file.Failed, 0, reason
	})
}

// load reads the topic's video value; errGone when it holds no upload.
func (v *Videos) load(ctx context.Context, t *platform.Tenant, topicID int64) (file.Value, error) {
	var val file.Value
	_, raw, err := v.Topics.Content(ctx, t, topicID)
	if apperr.Is(err, apperr.NotFound) {
		return val, errGone
	}
	if err != nil {
		return val, err
	}
	if json.Unmarshal(raw, &val) != nil || val.Path == "" {
		return val, errGone
	}
	return val, nil
}

// update changes the topic's video value, unless its upload is no longer
// the one at key (replaced meanwhile: its own job reports on it).
func (v *Videos) update(ctx context.Context, t *platform.Tenant, topicID int64, key string, fn func(*file.Value)) error {
	err := v.Topics.UpdateContent(context.WithoutCancel(ctx), t, topicID, func(_ string, raw json.RawMessage) (json.RawMessage, error) {
		var val file.Value
		if json.Unmarshal(raw, &val) != nil || val.Path != key {
			return nil, nil
		}
		fn(&val)
		return json.Marshal(val)
	})
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	return err
}

// Config is what the lms_video settings ask of a transcoding.
type Config struct {
	// Enable off keeps the original: no HLS, only the duration and poster.
	Enable bool
	// Variants as listed by lms_video.bitrates (a default ladder when
	// empty).
	Variants []Variant
	// NonStrict keeps variants taller than the source (upscaling); by
	// default they are dropped.
	NonStrict bool
}

// defaultVariants serve when lms_video.bitrates is empty.
var defaultVariants = []Variant{{360, 800}, {720, 2500}}

func (v *Videos) config(ctx context.Context, t *platform.Tenant) (Config, error) {
	var c Config
	enable, err := v.Settings.Get(ctx, t, "lms_video.enable")
	if err != nil {
		return c, err
	}
	nonStrict, err := v.Settings.Get(ctx, t, "lms_video.non_strict_value")
	if err != nil {
		return c, err
	}
	bitrates, err := v.Settings.Get(ctx, t, "lms_video.bitrates")
	if err != nil {
		return c, err
	}
	c.Enable, _ = enable.(bool)
	c.NonStrict, _ = nonStrict.(bool)
	list, _ := bitrates.([]any)
	c.Variants = ParseBitrates(list)
	return c, nil
}

// ParseBitrates reads lms_video.bitrates: each entry a number (the video
// bitrate in kbit/s; the height follows from it) or an object
// {"kiloBitrate": n, "scale": "WIDTHxHEIGHT"}. Entries that are neither,
// or out of range (50 to 50,000 kbit/s, 144 to 4320 lines), are skipped;
// an empty result is the default ladder (360p at 800k, 720p at 2500k).
func ParseBitrates(list []any) []Variant {
	var out []Variant
	for _, e := range list {
		var kbps float64
		height := 0
		switch e := e.(type) {
		case float64:
			kbps = e
		case map[string]any:
			kbps, _ = e["kiloBitrate"].(float64)
			if scale, ok := e["scale"].(string); ok {
				if _, h, ok := strings.Cut(scale, "x"); ok {
					height, _ = strconv.Atoi(h)
				}
			}
		}
		if kbps < 50 || kbps > 50000 || math.IsNaN(kbps) {
			continue
		}
		if height == 0 {
			height = heightFor(int(kbps))
		}
		if height < 144 || height > 4320 {
			continue
		}
		height -= height % 2
		vr := Variant{Height: height, Kbps: int(kbps)}
		if !slices.Contains(out, vr) {
			out = append(out, vr)
		}
	}
	if len(out) == 0 {
		return slices.Clone(defaultVariants)
	}
	slices.SortFunc(out, func(a, b Variant) int { return a.Kbps - b.Kbps })
	return out
}

// heightFor is the picture height a bare bitrate is encoded at.
func heightFor(kbps int) int {
	switch {
	case kbps < 600:
		return 360
	case kbps < 1500:
		return 480
	case kbps < 3500:
		return 720
	default:
		return 1080
	}
}

// variantsFor drops, unless non-strict, the variants taller than the
// source; if none is left the source's own height is encoded at the
// lowest bitrate.
func variantsFor(c Config, p Probe) []Variant {
	if c.NonStrict {
		return c.Variants
	}
	var out []Variant
	for _, vr := range c.Variants {
		if vr.Height <= p.Height {
			out = append(out, vr)
		}
	}
	if len(out) == 0 {
		out = []Variant{{Height: p.Height - p.Height%2, Kbps: c.Variants[0].Kbps}}
	}
	return out
}

// Output is what a transcoding stored.
type Output struct {
	Duration float64
	HLS      string // key of the master playlist; "" when transcoding is off
	Poster   string
	Variants []string
}

// Transcode makes the HLS variants and the poster of the video stored at
// key, stores them under file.ProcessedPrefix(key), and reports the
// percentage done through progress.
func (v *Videos) Transcode(ctx context.Context, t *platform.Tenant, key string, c Config, progress func(int)) (Output, error) {
	dir, err := os.MkdirTemp(v.TempDir, "lms-video-")
	if err != nil {
		return Output{}, fmt.Errorf("media: work dir: %w", err)
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "source"+path.Ext(key))
	if err := download(ctx, t, key, in); err != nil {
		return Output{}, err
	}
	p, err := v.FFmpeg.Probe(ctx, in)
	if err != nil {
		return Output{}, err
	}
	outDir := filepath.Join(dir, "out")
	if err := os.Mkdir(outDir, 0o700); err != nil {
		return Output{}, err
	}
	out := Output{Duration: math.Round(p.Duration*100) / 100}
	if c.Enable {
		variants := variantsFor(c, p)
		last := -1
		err := v.FFmpeg.Transcode(ctx, HLSArgs(in, outDir, p, variants), func(sec float64) {
			// Whole steps of five: each is a write of the topic.
			pct := min(int(sec/p.Duration*100)/5*5, 99)
			if pct > last {
				last = pct
				progress(pct)
			}
		})
		if err != nil {
			return Output{}, err
		}
		for _, vr := range variants {
			out.Variants = append(out.Variants, vr.Name())
		}
	}
	if err := v.FFmpeg.Poster(ctx, in, filepath.Join(outDir, "poster.jpg"), min(1, p.Duration/10)); err != nil {
		return Output{}, err
	}
	prefix := file.ProcessedPrefix(key)
	// A retry after a failed upload starts from a clean prefix.
	if err := t.Blob.DeletePrefix(ctx, prefix); err != nil {
		return Output{}, fmt.Errorf("media: clear %s: %w", prefix, err)
	}
	if err := upload(ctx, t, outDir, prefix); err != nil {
		return Output{}, err
	}
	out.Poster = prefix + "poster.jpg"
	if c.Enable {
		out.HLS = prefix + "master.m3u8"
	}
	return out, nil
}

func download(ctx context.Context, t *platform.Tenant, key, to string) error {
	rc, _, err := t.Blob.Get(ctx, key)
	if err != nil {
		return fmt.Errorf("media: open %s: %w", key, err)
	}
	defer rc.Close()
	f, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, rc); err != nil {
		f.Close()
		return fmt.Errorf("media: download %s: %w", key, err)
	}
	return f.Close()
}

// contentTypes of the files a transcoding stores.
var contentTypes = map[string]string{
	".m3u8": "application/vnd.apple.mpegurl",
	".ts":   "video/mp2t",
	".jpg":  "image/jpeg",
}

func upload(ctx context.Context, t *platform.Tenant, dir, prefix string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		ct, ok := contentTypes[filepath.Ext(p)]
		if !ok {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			return err
		}
		key := prefix + filepath.ToSlash(rel)
		if err := t.Blob.Put(ctx, key, f, info.Size(), ct); err != nil {
			return fmt.Errorf("media: store %s: %w", key, err)
		}
		return nil
	})
}
