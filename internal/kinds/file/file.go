// Package file holds the content kinds that are one uploaded file: PDF,
// image, audio and video. One implementation serves all four; each kind is
// that implementation with its own rules (extensions, size cap, content
// checks). The type of an upload follows its extension and must match the
// file's content, so a renamed executable is never stored as a PDF.
//
// Video topics hold either an uploaded file or the URL of a video on a
// video site (videoSiteUrl). An uploaded video carries a processing state
// for the background transcoding: queued when stored, then processing,
// ready or failed. Embedded videos are ready at once.
package file

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Processing states of an uploaded video.
const (
	Queued     = "queued"
	Processing = "processing"
	Ready      = "ready"
	Failed     = "failed"
)

const (
	classPrefix = `Lms\TopicTypes\Models\TopicContent\`
	mib         = 1 << 20
)

// fileType is one accepted extension: the content type it is stored with
// and the check of the file's first bytes.
type fileType struct {
	contentType string
	matches     func(head []byte) bool
	// svg files are also read whole for scripts.
	svg bool
}

// rules are what makes one kind of this package.
type rules struct {
	class, name string
	types       map[string]fileType
	max         int64
	maxLabel    string
	// siteURL lets the kind hold a video site URL instead of a file.
	siteURL bool
	// processed files start in the Queued state.
	processed bool
	// process enqueues the background work of a stored Queued value.
	process Process
}

// Process enqueues the processing of the topic's uploaded file inside tx,
// the transaction that stores it (media transcodes videos).
type Process func(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, topicID int64) error

// Kind is one file content kind; make it with PDF, Image, Audio or Video.
type Kind struct{ r *rules }

// PDF is the kind of PDF documents: .pdf up to 50 MiB.
func PDF() Kind {
	return Kind{&rules{class: classPrefix + "PDF", name: "pdf", max: 50 * mib, maxLabel: "50 MiB",
		types: map[string]fileType{".pdf": {"application/pdf", isPDF, false}}}}
}

// Image is the kind of images: .png .jpg .jpeg .gif .webp .svg up to
// 10 MiB; SVG images with scripts are refused.
func Image() Kind {
	return Kind{&rules{class: classPrefix + "Image", name: "image", max: 10 * mib, maxLabel: "10 MiB",
		types: map[string]fileType{
			".png":  {"image/png", isPNG, false},
			".jpg":  {"image/jpeg", isJPEG, false},
			".jpeg": {"image/jpeg", isJPEG, false},
			".gif":  {"image/gif", isGIF, false},
			".webp": {"image/webp", isWebP, false},
			".svg":  {"image/svg+xml", looksLikeSVG, true},
		}}}
}

// Audio is the kind of audio files: .mp3 .ogg up to 100 MiB.
func Audio() Kind {
	return Kind{&rules{class: classPrefix + "Audio", name: "audio", max: 100 * mib, maxLabel: "100 MiB",
		types: map[string]fileType{
			".mp3": {"audio/mpeg", isMP3, false},
			".ogg": {"audio/ogg", isOgg, false},
		}}}
}

// Video is the kind of videos: an uploaded .mp4 .ogg .webm .mov up to
// 2 GiB, queued for processing, or a videoSiteUrl.
func Video() Kind {
	return Kind{&rules{class: classPrefix + "Video", name: "video", max: 2048 * mib, maxLabel: "2 GiB",
		siteURL: true, processed: true,
		types: map[string]fileType{
			".mp4":  {"video/mp4", isMP4, false},
			".ogg":  {"video/ogg", isOgg, false},
			".webm": {"video/webm", isWebM, false},
			".mov":  {"video/quicktime", isMOV, false},
		}}}
}

// ProcessedBy is the kind whose stored uploads are queued for processing
// through fn.
func (k Kind) ProcessedBy(fn Process) Kind {
	r := *k.r
	r.process = fn
	return Kind{&r}
}

// Enqueue asks for the processing of a value just stored, when it waits
// for it (content.Processed).
func (k Kind) Enqueue(ctx context.Context, tx *sqldb.Tx, env content.Env, value json.RawMessage) error {
	if k.r.process == nil {
		return nil
	}
	v, err := parse(value)
	if err != nil || v.Path == "" || v.Processing != Queued {
		return err
	}
	return k.r.process(ctx, tx, env.Tenant, env.TopicID)
}

func (k Kind) Class() string    { return k.r.class }
func (k Kind) Name() string     { return k.r.name }
func (k Kind) MaxUpload() int64 { return k.r.max }

// Extensions lists the accepted extensions, sorted.
func (k Kind) Extensions() []string {
	out := make([]string, 0, len(k.r.types))
	for ext := range k.r.types {
		out = append(out, ext)
	}
	slices.Sort(out)
	return out
}

// Value is what a file topic stores. Path is the blob key of the file;
// clients never set it. An embedded video has SiteURL instead.
type Value struct {
	Path        string `json:"path,omitempty"`
	Name        string `json:"name,omitempty"`
	Size        int64  `json:"size,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	SiteURL     string `json:"video_site_url,omitempty"`
	Processing  string `json:"processing,omitempty"`
	// What the processing of a video made of it (media): the progress in
	// percent while processing, the reason when failed, and when ready
	// the duration in seconds, the key of the HLS master playlist (none
	// when transcoding is off: the original is played) and of the poster.
	Progress int      `json:"progress,omitempty"`
	Error    string   `json:"error,omitempty"`
	Duration float64  `json:"duration,omitempty"`
	HLS      string   `json:"hls,omitempty"`
	Poster   string   `json:"poster,omitempty"`
	Variants []string `json:"variants,omitempty"`
}

// View is what clients see of a file topic: a signed link to the file, or
// the site URL of an embedded video.
type View struct {
	URL          string `json:"url"`
	Name         string `json:"name,omitempty"`
	Size         int64  `json:"size,omitempty"`
	ContentType  string `json:"content_type,omitempty"`
	VideoSiteURL string `json:"video_site_url,omitempty"`
	Processing   string `json:"processing,omitempty"`
	// Video processing: progress (percent) while processing, error when
	// failed; when ready the duration (seconds), the signed link of the
	// HLS master playlist (absent when transcoding is off), of the poster
	// image, and the variants' names ("360p@800k").
	Progress  int      `json:"progress,omitempty"`
	Error     string   `json:"error,omitempty"`
	Duration  float64  `json:"duration,omitempty"`
	HLSURL    string   `json:"hls_url,omitempty"`
	PosterURL string   `json:"poster_url,omitempty"`
	Variants  []string `json:"variants,omitempty"`
}

// fileFields are the form fields an upload may come in: the spec's file,
// and value, the generic create's field.
var fileFields = []string{"file", "value"}

// Build stores an uploaded file (field file or value), or for videos takes
// videoSiteUrl. An update that sends neither keeps the old value. The
// value never comes from the client as a stored path: a client naming a
// key could otherwise point a topic at any file of the tenant.
func (k Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	f, field, hasFile := content.FileFrom(in, fileFields...)
	site, hasSite := "", false
	if k.r.siteURL {
		site, hasSite = in.Sent("videoSiteUrl", "video_site_url")
		if !hasSite && !hasFile {
			var s string
			if len(in.Value) > 0 && json.Unmarshal(in.Value, &s) == nil && s != "" {
				site, hasSite = s, true
			}
		}
	}
	switch {
	case hasFile && hasSite:
		return nil, apperr.Field("file", "Send either a file or a videoSiteUrl, not both.")
	case hasSite:
		return k.buildSite(site)
	case hasFile:
		return k.buildFile(ctx, env, field, f)
	case old != nil:
		return old, nil
	}
	return nil, apperr.Field("file", "The file field is required.")
}

func (k Kind) buildSite(raw string) (json.RawMessage, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(raw) > 2048 {
		return nil, apperr.Field("videoSiteUrl", "The videoSiteUrl must be an http or https URL.")
	}
	return json.Marshal(Value{SiteURL: u.String(), Processing: Ready})
}

// buildFile checks the upload against the kind's rules, then streams it to
// the blob store. Nothing is stored when a check fails.
func (k Kind) buildFile(ctx context.Context, env content.Env, field string, f content.File) (json.RawMessage, error) {
	ext := content.Ext(f.Name)
	ft, ok := k.r.types[ext]
	if !ok {
		return nil, apperr.Field(field, fmt.Sprintf("The %s must be a file of type: %s.", field, k.extList()))
	}
	if f.Size > k.r.max {
		return nil, apperr.New(apperr.TooLarge, fmt.Sprintf("The %s may not be greater than %s.", field, k.r.maxLabel))
	}
	if f.Size == 0 {
		return nil, apperr.Field(field, fmt.Sprintf("The %s is empty.", field))
	}
	if err := verify(f, field, ext, ft.matches, ft.svg); err != nil {
		return nil, err
	}
	v := Value{Path: env.FilePrefix + content.SafeName(f.Name), Name: f.Name, Size: f.Size, ContentType: ft.contentType}
	if len(v.Name) > 255 {
		v.Name = content.SafeName(f.Name)
	}
	if k.r.processed {
		v.Processing = Queued
	}
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("file: open upload: %w", err)
	}
	defer rc.Close()
	if err := env.Tenant.Blob.Put(ctx, v.Path, io.LimitReader(rc, f.Size), f.Size, ft.contentType); err != nil {
		return nil, fmt.Errorf("file: store %s: %w", v.Path, err)
	}
	return json.Marshal(v)
}

func (k Kind) extList() string {
	exts := k.Extensions()
	for i, e := range exts {
		exts[i] = strings.TrimPrefix(e, ".")
	}
	return strings.Join(exts, ", ")
}

// Copy copies the file under env.FilePrefix. A copied video is queued
// again: what processing made of the original is not copied.
func (k Kind) Copy(ctx context.Context, env content.Env, value json.RawMessage) (json.RawMessage, error) {
	v, err := parse(value)
	if err != nil || v.Path == "" {
		return value, err
	}
	rc, info, err := env.Tenant.Blob.Get(ctx, v.Path)
	if err != nil {
		return nil, fmt.Errorf("file: copy %s: %w", v.Path, err)
	}
	defer rc.Close()
	v.Path = env.FilePrefix + path.Base(v.Path)
	if err := env.Tenant.Blob.Put(ctx, v.Path, rc, info.Size, info.ContentType); err != nil {
		return nil, fmt.Errorf("file: copy to %s: %w", v.Path, err)
	}
	if k.r.processed {
		v = Value{Path: v.Path, Name: v.Name, Size: v.Size, ContentType: v.ContentType, Processing: Queued}
	}
	return json.Marshal(v)
}

// Remove deletes the value's file, and what processing made of it.
func (k Kind) Remove(ctx context.Context, env content.Env, value json.RawMessage) error {
	v, err := parse(value)
	if err != nil || v.Path == "" {
		return err
	}
	if k.r.processed {
		if err := env.Tenant.Blob.DeletePrefix(ctx, ProcessedPrefix(v.Path)); err != nil {
			return err
		}
	}
	return env.Tenant.Blob.Delete(ctx, v.Path)
}

// ProcessedPrefix is where the processing of the upload at key stores its
// output (HLS playlists and segments, poster): beside it, under the value's
// own fresh prefix, so removing the value finds them.
func ProcessedPrefix(key string) string { return path.Dir(key) + "/hls/" }

// View links the file through env.FileURL.
func (k Kind) View(env content.Env, value json.RawMessage) (any, error) {
	v, err := parse(value)
	if err != nil {
		return nil, err
	}
	out := View{Name: v.Name, Size: v.Size, ContentType: v.ContentType, VideoSiteURL: v.SiteURL, Processing: v.Processing,
		Progress: v.Progress, Error: v.Error, Duration: v.Duration, Variants: v.Variants}
	switch {
	case v.SiteURL != "":
		out.URL = v.SiteURL
	case v.Path != "" && env.FileURL != nil:
		out.URL = env.FileURL(v.Path)
		if v.HLS != "" {
			out.HLSURL = env.FileURL(v.HLS)
		}
		if v.Poster != "" {
			out.PosterURL = env.FileURL(v.Poster)
		}
	}
	return out, nil
}

func parse(value json.RawMessage) (Value, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return v, fmt.Errorf("file: parse value: %w", err)
	}
	return v, nil
}
