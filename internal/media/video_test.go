package media_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/media"
	"github.com/lms-platform/lms/internal/media/mediatest"
	"github.com/lms-platform/lms/internal/queue/queuetest"
)

const videoClass = `Lms\TopicTypes\Models\TopicContent\Video`

type course struct{ id, lesson int64 }

func newCourse(t *testing.T, c *client.Client) course {
	t.Helper()
	var out course
	out.id = apitest.Must(c.PostAdminCourses(t.Context(), client.CourseBody{Title: "Films", Status: client.Ptr("published")}))(t).ID
	out.lesson = apitest.Must(c.PostAdminLessons(t.Context(), client.CreateLessonInputBody{CourseID: out.id, Title: "Watch"}))(t).ID
	return out
}

func uploadVideo(t *testing.T, c *client.Client, lesson int64, name string, data []byte) *client.View {
	t.Helper()
	return apitest.Must(c.PostAdminTopicsMultipart(t.Context(), client.PostAdminTopicsForm{Lesson: lesson, Title: "A film",
		Topicable: videoClass, File: &client.File{Name: name, Content: bytes.NewReader(data)}}))(t)
}

// topicable is a topic's content as its kind shows it (the API document
// leaves its shape to the kind).
func topicable(t *testing.T, v *client.View) map[string]any {
	t.Helper()
	m, ok := v.Topicable.(map[string]any)
	if !ok {
		t.Fatalf("topicable of topic %d: %#v", v.ID, v.Topicable)
	}
	return m
}

// text is the string at key of a topicable, or "".
func text(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

func setVideo(t *testing.T, c *client.Client, enable bool, bitrates any) {
	t.Helper()
	apitest.Must(c.PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{
		{Key: "lms_video.enable", Value: enable}, {Key: "lms_video.bitrates", Value: bitrates}}}))(t)
}

// operation is the video operation's state without waiting.
func operation(c *client.Client, topic int64) (*client.Operation, error) {
	return c.GetAdminOperationsID(context.Background(), "video:"+strconv.FormatInt(topic, 10), client.GetAdminOperationsIDParams{})
}

// await long-polls the operation, from the state of ETag tag, until it is
// done, and returns every state it saw.
func await(t *testing.T, env *apitest.Env, token string, topic int64, tag string) (last *apitest.Response, seen []string) {
	t.Helper()
	return awaitUntil(t, env, token, topic, tag, func(res *apitest.Response) bool { return res.Get("data.done") == true })
}

// awaitUntil long-polls the operation, from the state of ETag tag, until
// a state it reads satisfies until (for at most three minutes), and
// returns every state it saw, the last one whole.
func awaitUntil(t *testing.T, env *apitest.Env, token string, topic int64, tag string,
	until func(*apitest.Response) bool) (last *apitest.Response, seen []string) {
	t.Helper()
	path := "/api/admin/operations/video:" + strconv.FormatInt(topic, 10) + "?wait=20"
	deadline := time.Now().Add(3 * time.Minute)
	for time.Now().Before(deadline) {
		res := env.Do(apitest.Request{Method: "GET", Path: path, Token: token, Headers: map[string]string{"If-None-Match": tag}})
		switch res.Status {
		case 304:
			continue
		case 200:
		default:
			t.Fatalf("operation: %d %s", res.Status, res.Body)
		}
		tag = res.Header.Get("ETag")
		state := res.String("data.state")
		if state == "processing" {
			state += ":" + strconv.Itoa(int(res.Number("data.progress")))
		}
		seen = append(seen, state)
		if until(res) {
			return res, seen
		}
	}
	t.Fatalf("the operation did not get there; saw %v", seen)
	return nil, nil
}

// An uploaded video goes queued → processing → ready, with HLS at two
// bitrates, a poster and its duration; its playlists are served through
// signed links that sign what they name.
func TestVideoTranscodedToHLS(t *testing.T) {
	clip := mediatest.MP4(t, 6)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, adminC := env.As("admin"), env.ClientAs("admin")
		setVideo(t, adminC, true, []any{
			map[string]any{"kiloBitrate": 300, "scale": "320x180"}, map[string]any{"kiloBitrate": 700, "scale": "640x360"},
			map[string]any{"kiloBitrate": 3000, "scale": "1920x1080"}, // taller than the source: dropped
		})
		c := newCourse(t, adminC)
		res := uploadVideo(t, adminC, c.lesson, "clip.mp4", clip)
		topic := res.ID
		if got := text(topicable(t, res), "processing"); got != "queued" {
			t.Fatalf("state after upload %q", got)
		}
		// The ETag and 304 of the operation are read from the wire.
		first := env.Call(t, 200, "GET", "/api/admin/operations/video:"+strconv.FormatInt(topic, 10), admin.Token, nil)
		if first.String("data.state") != "queued" || first.Get("data.done") != false || first.Header.Get("ETag") == "" {
			t.Fatalf("operation before a worker: %s", first.Body)
		}
		// Nothing changed: 304 with the same ETag.
		same := env.Do(apitest.Request{Method: "GET", Path: "/api/admin/operations/video:" + strconv.FormatInt(topic, 10),
			Token: admin.Token, Headers: map[string]string{"If-None-Match": first.Header.Get("ETag")}})
		if same.Status != 304 {
			t.Fatalf("unchanged state: %d", same.Status)
		}
		queuetest.Run(t, env.Server.Queue)
		done, seen := await(t, env, admin.Token, topic, first.Header.Get("ETag"))
		if done.String("data.state") != "ready" || !strings.HasPrefix(seen[0], "processing:") {
			t.Fatalf("states %v, last %s", seen, done.Body)
		}
		if vs := done.Get("data.variants"); len(vs.([]any)) != 2 || vs.([]any)[0] != "180p@300k" || vs.([]any)[1] != "360p@700k" {
			t.Fatalf("variants %v", vs)
		}
		if d := done.Number("data.duration"); d < 5.5 || d > 6.5 {
			t.Fatalf("duration %v", d)
		}
		view := topicable(t, apitest.Must(adminC.GetAdminTopicsID(t.Context(), topic))(t))
		hls, poster := text(view, "hls_url"), text(view, "poster_url")
		if hls == "" || poster == "" || text(view, "url") == "" {
			t.Fatalf("ready view: %v", view)
		}
		if p := env.Do(apitest.Request{Method: "GET", Path: poster}); p.Status != 200 || p.Header.Get("Content-Type") != "image/jpeg" {
			t.Fatalf("poster: %d %s", p.Status, p.Header.Get("Content-Type"))
		}
		master := env.Do(apitest.Request{Method: "GET", Path: hls})
		if master.Status != 200 || master.Header.Get("Content-Type") != "application/vnd.apple.mpegurl" {
			t.Fatalf("master: %d %s", master.Status, master.Header)
		}
		var variants []string
		for _, line := range strings.Split(string(master.Body), "\n") {
			if strings.HasPrefix(line, "/api/files/") {
				variants = append(variants, line)
			}
		}
		if len(variants) != 2 || !strings.Contains(string(master.Body), "BANDWIDTH=") {
			t.Fatalf("master playlist:\n%s", master.Body)
		}
		for _, v := range variants {
			pl := env.Do(apitest.Request{Method: "GET", Path: v})
			if pl.Status != 200 || !strings.Contains(string(pl.Body), "#EXT-X-ENDLIST") {
				t.Fatalf("variant %s: %d\n%s", v, pl.Status, pl.Body)
			}
			var segs []string
			for _, line := range strings.Split(string(pl.Body), "\n") {
				if strings.HasPrefix(line, "/api/files/") {
					segs = append(segs, line)
				}
			}
			if len(segs) < 2 {
				t.Fatalf("segments of %s:\n%s", v, pl.Body)
			}
			seg := env.Do(apitest.Request{Method: "GET", Path: segs[0]})
			if seg.Status != 200 || seg.Header.Get("Content-Type") != "video/mp2t" || len(seg.Body) == 0 || seg.Body[0] != 0x47 {
				t.Fatalf("segment: %d %s", seg.Status, seg.Header.Get("Content-Type"))
			}
			// A segment's link is signed for that segment only.
			tampered := strings.Replace(segs[0], "seg00000.ts", "seg00001.ts", 1)
			if r := env.Do(apitest.Request{Method: "GET", Path: tampered}); r.Status != 403 {
				t.Fatalf("a link signed for another segment: %d", r.Status)
			}
		}
		// Deleting the topic removes the upload and everything made of it.
		apitest.OK(t, adminC.DeleteAdminTopicsID(t.Context(), topic))
		if r := env.Do(apitest.Request{Method: "GET", Path: variants[0]}); r.Status != 404 {
			t.Fatalf("a variant after delete: %d", r.Status)
		}
	})
}

// A file that claims to be a video but is not one fails cleanly, with a
// reason, after one attempt; transcoding off keeps the original.
func TestCorruptVideoFailsAndOffKeepsOriginal(t *testing.T) {
	clip := mediatest.MP4(t, 2)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, adminC := env.As("admin"), env.ClientAs("admin")
		setVideo(t, adminC, true, []any{})
		c := newCourse(t, adminC)
		// An MP4 header followed by garbage passes the upload's type check.
		corrupt := append(append([]byte{}, clip[:64]...), bytes.Repeat([]byte{0x5a}, 4096)...)
		bad := uploadVideo(t, adminC, c.lesson, "broken.mp4", corrupt).ID
		queuetest.Run(t, env.Server.Queue)
		res, seen := await(t, env, admin.Token, bad, "")
		if res.String("data.state") != "failed" || !strings.HasPrefix(res.String("data.error"), "The file is not a playable video") {
			t.Fatalf("corrupt video: %v %s", seen, res.Body)
		}
		if strings.Contains(res.String("data.error"), os.TempDir()) {
			t.Fatalf("the reason shows a server path: %s", res.String("data.error"))
		}
		setVideo(t, adminC, false, []any{})
		good := uploadVideo(t, adminC, c.lesson, "clip.mp4", clip).ID
		res, seen = await(t, env, admin.Token, good, "")
		if res.String("data.state") != "ready" || res.Get("data.variants") != nil {
			t.Fatalf("transcoding off: %v %s", seen, res.Body)
		}
		view := topicable(t, apitest.Must(adminC.GetAdminTopicsID(t.Context(), good))(t))
		if text(view, "hls_url") != "" || text(view, "poster_url") == "" || text(view, "url") == "" {
			t.Fatalf("transcoding off: %v", view)
		}
		// The operation is for those who may edit the topic only.
		_, err := operation(env.ClientAs("student"), good)
		apitest.Refused(t, err, 403)
		_, err = adminC.GetAdminOperationsID(t.Context(), "quiz:1", client.GetAdminOperationsIDParams{})
		apitest.Refused(t, err, 422)
	})
}

// Without ffmpeg an upload waits: the job runs, finds no ffmpeg, and the
// topic stays queued with the reason, as the health check says; once
// ffmpeg is there the retry after the backoff transcodes it.
func TestMissingFFmpegWaits(t *testing.T) {
	clip := mediatest.MP4(t, 2)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		adminC, anonymous := env.ClientAs("admin"), env.ClientAs("anonymous")
		setVideo(t, adminC, true, []any{})
		installed := env.Server.Videos.FFmpeg
		env.Server.Videos.FFmpeg = media.FFmpeg{} // as on a server without the package
		c := newCourse(t, adminC)
		topic := uploadVideo(t, adminC, c.lesson, "clip.mp4", clip).ID
		if ran, err := env.Server.Queue.Work(context.Background()); !ran || err != nil {
			t.Fatalf("the job did not run: %v %v", ran, err)
		}
		res := apitest.Must(operation(adminC, topic))(t)
		if res.State != "queued" || res.Done || res.Error == nil || *res.Error != media.ErrMissing.Error() {
			t.Fatalf("without ffmpeg: %+v", res)
		}
		health := apitest.Must(anonymous.GetHealth(t.Context()))(t)
		if health.Services["ffmpeg"] != "missing" || !health.Ok || !strings.Contains(fmt.Sprint(health.Warnings), "ffmpeg") {
			t.Fatalf("health without ffmpeg: %+v", health)
		}
		// Installed: the next attempt, after the backoff, makes the video.
		env.Server.Videos.FFmpeg = installed
		if ran, _ := env.Server.Queue.Work(context.Background()); ran {
			t.Fatal("the job ran again before its backoff")
		}
		env.Clock.Advance(30 * time.Second)
		if ran, err := env.Server.Queue.Work(context.Background()); !ran || err != nil {
			t.Fatalf("the retry did not run: %v %v", ran, err)
		}
		res = apitest.Must(operation(adminC, topic))(t)
		if res.State != "ready" || res.Error != nil && *res.Error != "" {
			t.Fatalf("after installing ffmpeg: %+v", res)
		}
		if health := apitest.Must(anonymous.GetHealth(t.Context()))(t); health.Services["ffmpeg"] != "ok" {
			t.Fatalf("health with ffmpeg: %+v", health)
		}
	})
}
