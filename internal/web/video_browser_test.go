package web

import (
	"bytes"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/media/mediatest"
	"github.com/lms-platform/lms/internal/queue/queuetest"
)

// TestVideoPlaysAsHLS: a real video made by ffmpeg is uploaded, goes
// queued → processing → ready with HLS at two bitrates, and Chromium
// plays it on the topic page (its time advances, with no media error).
func TestVideoPlaysAsHLS(t *testing.T) {
	data := mediatest.MP4(t, 12)
	env := apitest.New(t, "sqlite", apitest.Options{})
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	admin := env.As("admin")
	env.Call(t, 200, "POST", "/api/admin/config", admin.Token, map[string]any{"config": []map[string]any{
		{"key": "lms_video.enable", "value": true},
		{"key": "lms_video.bitrates", "value": []any{
			map[string]any{"kiloBitrate": 300, "scale": "320x180"}, map[string]any{"kiloBitrate": 700, "scale": "640x360"}}},
	}})
	c := seedCourse(t, env, env.Host, admin.Token, "Film course")

	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	w.WriteField("lesson", id(c.lesson))
	w.WriteField("title", "Test pattern")
	w.WriteField("topicable", `Lms\TopicTypes\Models\TopicContent\Video`)
	part, _ := w.CreateFormFile("file", "clip.mp4")
	part.Write(data)
	w.Close()
	created := env.Do(apitest.Request{Method: "POST", Path: "/api/admin/topics", Token: admin.Token, Body: body.Bytes(), Type: w.FormDataContentType()})
	if created.Status != 201 || created.String("data.topicable.processing") != "queued" {
		t.Fatalf("upload: %d %s", created.Status, created.Body)
	}
	topic := int64(created.Number("data.id"))

	// The queue's worker runs as in `lms serve`; the states are followed
	// through the operation, long-polled with its ETag.
	op := "/api/admin/operations/video:" + id(topic)
	first := env.Call(t, 200, "GET", op, admin.Token, nil)
	seen := []string{first.String("data.state")}
	tag := first.Header.Get("ETag")
	queuetest.Run(t, env.Server.Queue)
	for deadline := time.Now().Add(3 * time.Minute); seen[len(seen)-1] != "ready" && seen[len(seen)-1] != "failed"; {
		if time.Now().After(deadline) {
			t.Fatalf("not done: %v", seen)
		}
		res := env.Do(apitest.Request{Method: "GET", Path: op + "?wait=20", Token: admin.Token, Headers: map[string]string{"If-None-Match": tag}})
		if res.Status == 304 {
			continue
		}
		tag = res.Header.Get("ETag")
		seen = append(seen, res.String("data.state"))
	}
	if strings.Join(compact(seen), " ") != "queued processing ready" {
		t.Fatalf("states %v", seen)
	}

	learner := env.NewUser("student")
	_, frontPort, _ := strings.Cut(strings.TrimPrefix(f.srv.URL, "http://"), ":")
	origin := "http://" + env.Host + ":" + frontPort
	bctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host))
	run := (&browserRun{t: t, ctx: bctx}).run
	run("sign in", signIn(origin, learner), chromedp.WaitVisible(landed, chromedp.ByQuery))
	run("open", chromedp.Navigate(origin+"/learn/"+id(c.course)+"/"+id(topic)),
		browsertest.Until(`!!document.querySelector('video[data-hls]') && !!document.getElementById('topic-media').dataset.player`, nil))
	var player string
	run("player", chromedp.Evaluate(`document.getElementById('topic-media').dataset.player`, &player))
	if player != "hls.js" && player != "native" {
		t.Fatalf("played by %q, not HLS", player)
	}
	run("play", chromedp.Evaluate(`(function(){var v=document.getElementById('topic-media'); v.muted=true; v.play(); return true})()`, nil),
		browsertest.Until(`(function(){var v=document.getElementById('topic-media'); return !v.error && v.currentTime > 1.5})()`, nil))
	if player == "hls.js" {
		var levels string
		run("levels", chromedp.Evaluate(`document.getElementById('topic-media').dataset.levels || ''`, &levels))
		if levels != "2" {
			t.Fatalf("hls.js found %q variants", levels)
		}
	}
	browsertest.Screenshot(t, bctx, "web-video-hls")
}

// compact drops repeats: processing is reported at each step of progress.
func compact(states []string) []string {
	var out []string
	for _, s := range states {
		if len(out) == 0 || out[len(out)-1] != s {
			out = append(out, s)
		}
	}
	return out
}
