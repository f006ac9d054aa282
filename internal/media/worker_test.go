package media_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/media/mediatest"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/queue/queuetest"
	"github.com/lms-platform/lms/internal/server"
)

// workerTemp names the work directory of a worker process's transcodings.
const workerTemp = "LMS_TEST_WORKER_TMP"

// workerLease is the lease of the worker process: renewed every 20 s, so
// a killed worker's job is held for at most this long.
const workerLease = time.Minute

// TestMain makes the test binary a worker process when queuetest.Start
// runs it.
func TestMain(m *testing.M) {
	queuetest.Main(m, func(s *server.Server) {
		s.Videos.TempDir = os.Getenv(workerTemp)
		s.Queue.Lease = workerLease
		s.Queue.Poll = 50 * time.Millisecond
	})
}

// A worker process killed (SIGKILL) while ffmpeg transcodes does not lose
// the job: it stays leased to the dead worker until the lease runs out,
// then a worker of another process (here the test's own server, on its
// fake clock) takes it up and finishes it.
func TestKilledWorkerLosesNoJob(t *testing.T) {
	clip := mediatest.MP4(t, 40)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, adminC := env.As("admin"), env.ClientAs("admin")
		setVideo(t, adminC, true, []any{
			map[string]any{"kiloBitrate": 300, "scale": "320x180"}, map[string]any{"kiloBitrate": 700, "scale": "640x360"}})
		c := newCourse(t, adminC)
		topic := uploadVideo(t, adminC, c.lesson, "clip.mp4", clip).ID
		key := "video:" + strconv.FormatInt(topic, 10)

		worker := queuetest.Start(t, env, workerTemp+"="+t.TempDir())
		// Wait until the worker process is transcoding: the state says
		// processing with some progress. The ETag is read from the wire.
		tag := env.Call(t, 200, "GET", "/api/admin/operations/"+key, admin.Token, nil).Header.Get("ETag")
		res, seen := awaitUntil(t, env, admin.Token, topic, tag, func(res *apitest.Response) bool {
			return res.Get("data.done") == true || res.String("data.state") == "processing" && res.Number("data.progress") > 0
		})
		if exited, err := worker.Exited(); exited || res.Get("data.done") == true {
			t.Fatalf("the video was done before the worker could be killed (%v, exited %v: %v): %s\n%s",
				seen, exited, err, res.Body, worker.Log())
		}
		tag = res.Header.Get("ETag")
		t.Logf("killing the worker at %v%%", res.Number("data.progress"))
		worker.Kill(t)

		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		s, ok, err := queue.StatusOf(context.Background(), tn.DB, key)
		if err != nil || !ok || s.State != "running" || s.Attempts != 1 {
			t.Fatalf("the dead worker's job: %+v %v %v", s, ok, err)
		}
		// Under the dead worker's lease no other worker takes the job.
		if ran, err := env.Server.Queue.Work(context.Background()); ran || err != nil {
			t.Fatalf("a job under a live lease was taken: %v %v", ran, err)
		}
		// The lease was set on the system clock; move the test's clock past it.
		env.Clock.Advance(max(time.Since(env.Clock.Now()), 0) + workerLease + time.Second)
		queuetest.Run(t, env.Server.Queue)
		done, seen := await(t, env, admin.Token, topic, tag)
		if done.String("data.state") != "ready" {
			t.Fatalf("after the takeover: %v %s", seen, done.Body)
		}
		if vs, _ := done.Get("data.variants").([]any); len(vs) != 2 {
			t.Fatalf("variants after the takeover: %s", done.Body)
		}
		if d := done.Number("data.duration"); d < 39 || d > 41 {
			t.Fatalf("duration %v", d)
		}
		// The handler writes "ready" before the queue deletes the finished
		// job, so the row may outlive the state by a moment; it must go.
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			s, ok, err := queue.StatusOf(context.Background(), tn.DB, key)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the finished job is still in the queue: %+v", s)
			}
		}
		view := topicable(t, apitest.Must(adminC.GetAdminTopicsID(t.Context(), topic))(t))
		master := env.Do(apitest.Request{Method: "GET", Path: text(view, "hls_url")})
		if master.Status != 200 || bytes.Count(master.Body, []byte("#EXT-X-STREAM-INF")) != 2 {
			t.Fatalf("master playlist after the takeover: %d\n%s", master.Status, master.Body)
		}
	})
}
