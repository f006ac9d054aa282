package media_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/server"
)

// The test binary doubles as a worker process: with workerConfig set it
// opens the platform of that configuration (JSON of config.Config) and
// runs only the job queue, on the system clock, until it is killed.
const (
	workerConfig = "LMS_TEST_WORKER_CONFIG"
	workerTemp   = "LMS_TEST_WORKER_TMP"
)

// workerLease is the lease of the worker process: renewed every 20 s, so
// a killed worker's job is held for at most this long.
const workerLease = time.Minute

func TestMain(m *testing.M) {
	if raw := os.Getenv(workerConfig); raw != "" {
		os.Exit(runWorker(raw))
	}
	os.Exit(m.Run())
}

func runWorker(raw string) int {
	var cfg config.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker: config:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := server.New(ctx, &cfg, server.Options{Logger: log, NoDispatch: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker: start:", err)
		return 2
	}
	defer s.Close()
	s.Videos.TempDir = os.Getenv(workerTemp)
	s.Queue.Lease = workerLease
	s.Queue.Poll = 50 * time.Millisecond
	fmt.Fprintln(os.Stderr, "worker: running")
	s.Queue.Run(ctx)
	return 0
}

// workerProcess is a worker running in a process of its own.
type workerProcess struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	// exited receives the process's end once.
	exited chan error
}

// startWorker runs a worker process on env's platform, in a process group
// of its own so that killing the group kills its ffmpeg too, as a crash of
// the machine or container would.
func startWorker(t *testing.T, env *apitest.Env) *workerProcess {
	t.Helper()
	raw, err := json.Marshal(env.Server.Config)
	if err != nil {
		t.Fatal(err)
	}
	w := &workerProcess{cmd: exec.Command(os.Args[0], "-test.run=^$"), exited: make(chan error, 1)}
	w.cmd.Env = append(os.Environ(), workerConfig+"="+string(raw), workerTemp+"="+t.TempDir())
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w.cmd.Stderr, w.cmd.Stdout = &w.stderr, io.Discard
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.exited <- w.cmd.Wait() }()
	t.Cleanup(func() {
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-w.exited:
		case <-time.After(10 * time.Second):
		}
	})
	return w
}

// kill ends the worker's process group with SIGKILL and waits for it.
func (w *workerProcess) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-w.exited
	w.exited <- err // for the clean-up
	if ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the worker was not killed: %v\n%s", err, w.stderr.String())
	}
}

// A worker process killed (SIGKILL) while ffmpeg transcodes does not lose
// the job: it stays leased to the dead worker until the lease runs out,
// then a worker of another process (here the test's own server, on its
// fake clock) takes it up and finishes it.
func TestKilledWorkerLosesNoJob(t *testing.T) {
	needFFmpeg(t)
	clip := makeVideo(t, 40)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		setVideo(t, env, admin.Token, true, []any{
			map[string]any{"kiloBitrate": 300, "scale": "320x180"}, map[string]any{"kiloBitrate": 700, "scale": "640x360"}})
		c := newCourse(t, env, admin.Token)
		topic := int64(uploadVideo(t, env, admin.Token, c.lesson, "clip.mp4", clip).Number("data.id"))
		key := "video:" + strconv.FormatInt(topic, 10)

		worker := startWorker(t, env)
		// Wait until the worker process is transcoding: the state says
		// processing with some progress.
		tag := env.Call(t, 200, "GET", "/api/admin/operations/"+key, admin.Token, nil).Header.Get("ETag")
		for {
			res := env.Do(apitest.Request{Method: "GET", Path: "/api/admin/operations/" + key + "?wait=30", Token: admin.Token,
				Headers: map[string]string{"If-None-Match": tag}})
			select {
			case err := <-worker.exited:
				t.Fatalf("the worker stopped: %v\n%s", err, worker.stderr.String())
			default:
			}
			if res.Status == 304 {
				continue
			}
			if res.Status != 200 {
				t.Fatalf("operation: %d %s", res.Status, res.Body)
			}
			tag = res.Header.Get("ETag")
			if res.Get("data.done") == true {
				t.Fatalf("the video was done before the worker could be killed: %s", res.Body)
			}
			if res.String("data.state") == "processing" && res.Number("data.progress") > 0 {
				t.Logf("killing the worker at %v%%", res.Number("data.progress"))
				break
			}
		}
		worker.kill(t)

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
		runQueue(t, env)
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
		if _, ok, _ := queue.StatusOf(context.Background(), tn.DB, key); ok {
			t.Fatal("the finished job is still in the queue")
		}
		view := env.Call(t, 200, "GET", "/api/admin/topics/"+strconv.FormatInt(topic, 10), admin.Token, nil)
		master := env.Do(apitest.Request{Method: "GET", Path: view.String("data.topicable.hls_url")})
		if master.Status != 200 || bytes.Count(master.Body, []byte("#EXT-X-STREAM-INF")) != 2 {
			t.Fatalf("master playlist after the takeover: %d\n%s", master.Status, master.Body)
		}
	})
}
