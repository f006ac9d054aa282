package jitsi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/jitsi"
	"github.com/lms-platform/lms/internal/media/mediatest"
	"github.com/lms-platform/lms/internal/webhooks"
)

// world is a tenant with Jitsi switched on, a lesson and a recording
// served by a server of its own.
type world struct {
	env     *apitest.Env
	admin   *client.Client
	secret  string
	lesson  int64
	fileURL string
}

func newWorld(t *testing.T, backend string, clip []byte) *world {
	env := apitest.New(t, backend, apitest.Options{Configure: func(c *config.Config) { c.FetchAllowPrivate = true }})
	files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/recordings/meeting.mp4" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "video/mp4")
		w.Write(clip)
	}))
	t.Cleanup(files.Close)
	w := &world{env: env, admin: env.ClientAs("admin"), secret: webhooks.NewSecret(), fileURL: files.URL + "/recordings/meeting.mp4"}
	configure(t, w.admin, w.secret)
	course := apitest.Must(w.admin.PostAdminCourses(t.Context(), client.CourseBody{Title: "Live", Status: client.Ptr("published")}))(t)
	w.lesson = apitest.Must(w.admin.PostAdminLessons(t.Context(), client.CreateLessonInputBody{CourseID: course.ID, Title: "Session 1"}))(t).ID
	return w
}

func configure(t *testing.T, c *client.Client, secret string) {
	t.Helper()
	apitest.Must(c.PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{
		{Key: "lms_jitsi.package_status", Value: "enabled"}, {Key: "lms_jitsi.secret", Value: secret},
		{Key: "lms_video.enable", Value: true},
		{Key: "lms_video.bitrates", Value: []any{map[string]any{"kiloBitrate": 300, "scale": "320x180"}}}}}))(t)
}

// send posts a recording signed with secret at ts as message id to host.
func (w *world) send(t *testing.T, host, secret, id string, ts time.Time, rec client.Recording) *apitest.Response {
	t.Helper()
	body, _ := json.Marshal(rec)
	headers := map[string]string{}
	if secret != "" {
		stamp := ts.Unix()
		sig, err := webhooks.Sign(secret, id, stamp, body)
		if err != nil {
			t.Fatal(err)
		}
		headers = map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(stamp, 10), "webhook-signature": sig}
	}
	return w.env.Do(apitest.Request{Method: "POST", Path: "/api/jitsi/recorded-video", Host: host, Body: body,
		Type: "application/json", Headers: headers})
}

func (w *world) topics(t *testing.T) int {
	t.Helper()
	page := apitest.Must(w.admin.GetAdminTopics(t.Context(), client.GetAdminTopicsParams{LessonID: &w.lesson}))(t)
	return len(page.Items)
}

// A signed recording of a lesson's meeting becomes a video topic of that
// lesson, queued for transcoding like an upload; wrong, missing, replayed
// and stale signatures are refused with nothing made.
func TestRecordingBecomesVideoTopic(t *testing.T) {
	clip := mediatest.MP4(t, 2)
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			w := newWorld(t, backend, clip)
			now := w.env.Clock.Now()
			rec := client.Recording{Meeting: "app123/" + jitsi.RoomOf(w.lesson), URL: w.fileURL}

			for name, res := range map[string]*apitest.Response{
				"missing":      w.send(t, "", "", "", now, rec),
				"wrong secret": w.send(t, "", webhooks.NewSecret(), "msg_wrong", now, rec),
				"stale":        w.send(t, "", w.secret, "msg_stale", now.Add(-6*time.Minute), rec),
			} {
				if res.Status != 401 || res.Get("success") != false {
					t.Errorf("%s signature: %d %s", name, res.Status, res.Body)
				}
			}
			// A tampered body fails the signature made for the original.
			body, _ := json.Marshal(rec)
			sig, _ := webhooks.Sign(w.secret, "msg_tampered", now.Unix(), body)
			tampered, _ := json.Marshal(client.Recording{Meeting: rec.Meeting, URL: w.fileURL + "?x"})
			if res := w.env.Do(apitest.Request{Method: "POST", Path: "/api/jitsi/recorded-video", Body: tampered, Type: "application/json",
				Headers: map[string]string{"webhook-id": "msg_tampered", "webhook-timestamp": strconv.FormatInt(now.Unix(), 10),
					"webhook-signature": sig}}); res.Status != 401 {
				t.Errorf("tampered body: %d %s", res.Status, res.Body)
			}
			if n := w.topics(t); n != 0 {
				t.Fatalf("refused calls made %d topics", n)
			}

			// An unknown lesson changes nothing, and the same message may
			// come again once the lesson is right.
			missing := client.Recording{Meeting: jitsi.RoomOf(w.lesson + 1000), URL: w.fileURL}
			if res := w.send(t, "", w.secret, "msg_1", now, missing); res.Status != 404 {
				t.Fatalf("unknown lesson: %d %s", res.Status, res.Body)
			}
			if res := w.send(t, "", w.secret, "msg_2", now, client.Recording{Meeting: "standup", URL: w.fileURL}); res.Status != 422 {
				t.Fatalf("a room of no lesson: %d %s", res.Status, res.Body)
			}

			res := w.send(t, "", w.secret, "msg_1", now, rec)
			if res.Status != 201 || res.String("data.kind") != "video" || res.Number("data.lesson_id") != float64(w.lesson) {
				t.Fatalf("recording: %d %s", res.Status, res.Body)
			}
			topic := int64(res.Number("data.id"))
			view := apitest.Must(w.admin.GetAdminTopicsID(t.Context(), topic))(t)
			value, _ := view.Topicable.(map[string]any)
			if view.Title != "Recording of "+jitsi.RoomOf(w.lesson) || value["processing"] != "queued" || value["url"] == "" {
				t.Fatalf("topic: %+v", view)
			}
			op := apitest.Must(w.admin.GetAdminOperationsID(t.Context(), "video:"+strconv.FormatInt(topic, 10),
				client.GetAdminOperationsIDParams{}))(t)
			if op.State != "queued" {
				t.Fatalf("transcoding: %+v", op)
			}
			stored := w.env.Do(apitest.Request{Method: "GET", Path: value["url"].(string)})
			if stored.Status != 200 || len(stored.Body) != len(clip) {
				t.Fatalf("stored recording: %d, %d bytes of %d", stored.Status, len(stored.Body), len(clip))
			}
			// The queued transcoding makes it a video like any upload.
			if ran, err := w.env.Server.Queue.Work(t.Context()); !ran || err != nil {
				t.Fatalf("the transcoding did not run: %v %v", ran, err)
			}
			op = apitest.Must(w.admin.GetAdminOperationsID(t.Context(), "video:"+strconv.FormatInt(topic, 10),
				client.GetAdminOperationsIDParams{}))(t)
			if op.State != "ready" || len(op.Variants) != 1 {
				t.Fatalf("after transcoding: %+v", op)
			}

			// The same message again is a replay.
			if res := w.send(t, "", w.secret, "msg_1", now, rec); res.Status != 409 {
				t.Fatalf("replay: %d %s", res.Status, res.Body)
			}
			if n := w.topics(t); n != 1 {
				t.Fatalf("topics after the replay: %d", n)
			}

			// Another tenant has its own secret: this tenant's signature
			// means nothing there.
			otherAdmin := w.env.Client("other.test", w.env.As("other-admin").Token)
			configure(t, otherAdmin, webhooks.NewSecret())
			if res := w.send(t, "other.test", w.secret, "msg_3", now, rec); res.Status != 401 {
				t.Fatalf("another tenant's secret: %d %s", res.Status, res.Body)
			}
		})
	}
}

// Switched off, the route authenticates nobody; 60 calls a minute per
// address are served, the 61st is throttled.
func TestRecordingOffAndRateLimited(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.ClientAs("admin")
		secret := webhooks.NewSecret()
		apitest.Must(admin.PostAdminConfig(t.Context(), client.UpdateInputBody{Config: []client.Item{
			{Key: "lms_jitsi.secret", Value: secret}}}))(t)
		body := []byte(`{"meeting":"lesson-1","url":"https://example.com/a.mp4"}`)
		now := env.Clock.Now().Unix()
		var last *apitest.Response
		for i := range 61 {
			id := "msg_" + strconv.Itoa(i)
			sig, _ := webhooks.Sign(secret, id, now, body)
			last = env.Do(apitest.Request{Method: "POST", Path: "/api/jitsi/recorded-video", Body: body, Type: "application/json",
				Headers: map[string]string{"webhook-id": id, "webhook-timestamp": strconv.FormatInt(now, 10), "webhook-signature": sig}})
			if i < 60 && last.Status != 401 {
				t.Fatalf("call %d while Jitsi is off: %d %s", i, last.Status, last.Body)
			}
		}
		if last.Status != 429 || last.Header.Get("Retry-After") == "" {
			t.Fatalf("61st call: %d %s", last.Status, last.Body)
		}
	})
}

// The recording is fetched through the outbound-fetch guard: without
// LMS_FETCH_ALLOW_PRIVATE a recording on this machine is refused (422,
// the file never asked for, no topic), and the refused message may be
// sent again.
func TestRecordingThroughFetchGuard(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		asked := 0
		files := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { asked++ }))
		t.Cleanup(files.Close)
		admin := env.ClientAs("admin")
		w := &world{env: env, admin: admin, secret: webhooks.NewSecret(), fileURL: files.URL + "/recordings/meeting.mp4"}
		configure(t, admin, w.secret)
		course := apitest.Must(admin.PostAdminCourses(t.Context(), client.CourseBody{Title: "Live"}))(t)
		w.lesson = apitest.Must(admin.PostAdminLessons(t.Context(), client.CreateLessonInputBody{CourseID: course.ID, Title: "Session"}))(t).ID
		rec := client.Recording{Meeting: jitsi.RoomOf(w.lesson), URL: w.fileURL}
		// Bad input first: not a URL the guard fetches at all.
		if res := w.send(t, "", w.secret, "msg_ftp", env.Clock.Now(), client.Recording{Meeting: rec.Meeting,
			URL: "ftp://example.com/a.mp4"}); res.Status != 422 || res.Get("errors.url") == nil {
			t.Fatalf("an ftp recording: %d %s", res.Status, res.Body)
		}
		for range 2 {
			res := w.send(t, "", w.secret, "msg_local", env.Clock.Now(), rec)
			if res.Status != 422 || res.String("message") != "The address resolves to this machine (loopback)." {
				t.Fatalf("a recording on this machine: %d %s", res.Status, res.Body)
			}
		}
		if asked != 0 || w.topics(t) != 0 {
			t.Fatalf("the guard let %d requests through; %d topics", asked, w.topics(t))
		}
	})
}
