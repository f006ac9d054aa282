// Package jitsi receives the recordings of Jitsi meetings: a signed
// webhook (Standard Webhooks, keyed with the tenant's lms_jitsi.secret)
// names a finished recording and its meeting, and the recording becomes
// a video topic of the lesson the meeting belongs to, fetched through the
// outbound-fetch guard and transcoded like any upload.
package jitsi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
	"github.com/lms-platform/lms/internal/webhooks"
)

// source names the receipts of this webhook (webhooks.Receive).
const source = "jitsi"

// Settings reads the tenant's settings (package settings).
type Settings interface {
	String(ctx context.Context, t *platform.Tenant, key string) (string, error)
}

// Topics creates the recording's topic (package topics).
type Topics interface {
	CreateBody(ctx context.Context, t *platform.Tenant, p *access.Principal, contentType string, body io.Reader) (topics.View, error)
}

// Service turns recordings into video topics.
type Service struct {
	Clock    clock.Clock
	Settings Settings
	Topics   Topics
	// Fetch downloads recordings; its MaxBody should be the video kind's
	// upload cap and its Timeout long enough for a whole file.
	Fetch *fetch.Client
	// VideoClass is the topicable class of video topics.
	VideoClass string
}

// Recording is the body of POST /api/jitsi/recorded-video.
type Recording struct {
	Meeting string `json:"meeting" doc:"The meeting's room: lesson-<lesson id>, also as app/room (JaaS) or a meeting URL ending in it."`
	URL     string `json:"url" doc:"Where the recording (mp4, webm, ogg or mov) can be downloaded; http(s), a public address."`
	Title   string `json:"title,omitempty" maxLength:"255" doc:"The topic's title; default: Recording of <room>."`
}

// room matches the room name of a lesson's meeting.
var room = regexp.MustCompile(`^lesson-([1-9][0-9]{0,15})$`)

// LessonOf is the lesson whose meeting a room name (or app/room, or a
// meeting URL) names.
func LessonOf(meeting string) (int64, bool) {
	name := strings.ToLower(strings.TrimSpace(meeting))
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	m := room.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	return id, err == nil
}

// RoomOf is the room name of a lesson's meeting.
func RoomOf(lessonID int64) string { return "lesson-" + strconv.FormatInt(lessonID, 10) }

// Receive checks a recording webhook and makes its topic.
func (s *Service) Receive(ctx context.Context, t *platform.Tenant, h webhooks.Signed, body []byte) (topics.View, error) {
	secret, err := s.secret(ctx, t)
	if err != nil {
		return topics.View{}, err
	}
	now := s.Clock.Now()
	if err := webhooks.Verify(secret, h, body, now); err != nil {
		return topics.View{}, err
	}
	var rec Recording
	if err := json.Unmarshal(body, &rec); err != nil {
		return topics.View{}, apperr.New(apperr.Invalid, "The body must be a JSON object {meeting, url, title}.")
	}
	lesson, ok := LessonOf(rec.Meeting)
	if !ok {
		return topics.View{}, apperr.Field("meeting", "The meeting must be the room lesson-<lesson id>.")
	}
	if _, err := fetch.CheckURL(rec.URL); err != nil {
		return topics.View{}, apperr.Field("url", "The url must be an http or https URL.")
	}
	if len(rec.Title) > 255 {
		return topics.View{}, apperr.Field("title", "The title may not be greater than 255 characters.")
	}
	if err := webhooks.Receive(ctx, t.DB, source, h.ID, now); err != nil {
		return topics.View{}, err
	}
	v, err := s.attach(ctx, t, lesson, rec)
	if err != nil {
		// The sender retries a message that failed; its id must pass again.
		if ferr := webhooks.Forget(context.WithoutCancel(ctx), t.DB, source, h.ID); ferr != nil {
			httpx.Log(ctx).Error("jitsi: forget receipt", "error", ferr)
		}
		return topics.View{}, err
	}
	return v, nil
}

// secret is the tenant's Jitsi secret, "" while the integration is off.
func (s *Service) secret(ctx context.Context, t *platform.Tenant) (string, error) {
	status, err := s.Settings.String(ctx, t, "lms_jitsi.package_status")
	if err != nil || status != "enabled" {
		return "", err
	}
	return s.Settings.String(ctx, t, "lms_jitsi.secret")
}

// attach downloads the recording and streams it, as the file of a topic
// create form, into the lesson.
func (s *Service) attach(ctx context.Context, t *platform.Tenant, lesson int64, rec Recording) (topics.View, error) {
	res, err := s.Fetch.Open(ctx, rec.URL, nil)
	if err != nil {
		return topics.View{}, err
	}
	defer res.Body.Close()
	if res.Status != 200 {
		return topics.View{}, apperr.New(apperr.Invalid, fmt.Sprintf("The recording could not be fetched: its URL answered %d.", res.Status))
	}
	title := strings.TrimSpace(rec.Title)
	if title == "" {
		title = "Recording of " + RoomOf(lesson)
	}
	pr, pw := io.Pipe()
	form := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(writeForm(form, lesson, title, s.VideoClass, fileName(rec.URL, res.Header.Get("Content-Type")), res.Body))
	}()
	v, err := s.Topics.CreateBody(ctx, t, access.System(access.CourseUpdate), form.FormDataContentType(), pr)
	// The topic's form may be refused before the file is read: the writer
	// must end all the same.
	pr.CloseWithError(errors.New("jitsi: form no longer read"))
	return v, err
}

// writeForm writes the topic create form; the file comes last, so the
// lesson is checked before it streams.
func writeForm(w *multipart.Writer, lesson int64, title, class, name string, file io.Reader) error {
	for _, f := range [][2]string{{"lesson", strconv.FormatInt(lesson, 10)}, {"title", title}, {"topicable", class}} {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(part, file); err != nil {
		return err
	}
	return w.Close()
}

// fileName is the recording's file name: the URL's when it has a video
// extension, else one made from the content type (mp4 by default), since
// the video kind tells the format by the extension.
func fileName(rawURL, contentType string) string {
	if u, err := url.Parse(rawURL); err == nil {
		base := path.Base(u.Path)
		switch strings.ToLower(path.Ext(base)) {
		case ".mp4", ".webm", ".ogg", ".mov":
			return base
		}
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "video/webm":
		return "recording.webm"
	case "video/ogg":
		return "recording.ogg"
	case "video/quicktime":
		return "recording.mov"
	}
	return "recording.mp4"
}
