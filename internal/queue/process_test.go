package queue_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/queue/queuetest"
	"github.com/lms-platform/lms/internal/server"
)

// runsDir names the directory where worker processes record their runs.
const runsDir = "LMS_TEST_RUNS_DIR"

// recordKind is a job that takes a while and leaves a file per run,
// named job-process-attempt.
const recordKind = "test.record"

func TestMain(m *testing.M) {
	queuetest.Main(m, func(s *server.Server) {
		dir := os.Getenv(runsDir)
		s.Queue.Workers, s.Queue.Poll = 3, 10*time.Millisecond
		s.Queue.Handle(queue.Kind{Name: recordKind, Run: func(ctx context.Context, _ *platform.Tenant, j queue.Job) error {
			time.Sleep(30 * time.Millisecond)
			name := fmt.Sprintf("%d-%d-%d", j.ID, os.Getpid(), j.Attempt)
			return os.WriteFile(filepath.Join(dir, name), nil, 0o600)
		}})
	})
}

// Two worker processes (two replicas) sharing one queue never take the
// same job: on PostgreSQL the claim skips rows another transaction has
// locked, on SQLite the claim's transaction holds the write lock. Every
// job runs once, and both processes run some.
func TestWorkerProcessesNeverShareAJob(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		const jobs = 60
		dir := t.TempDir()
		workers := []*queuetest.Worker{queuetest.Start(t, env, runsDir+"="+dir), queuetest.Start(t, env, runsDir+"="+dir)}
		for _, w := range workers {
			for !strings.Contains(w.Log(), queuetest.Running) {
				if exited, err := w.Exited(); exited {
					t.Fatalf("a worker stopped: %v\n%s", err, w.Log())
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		q := newQueue(env)
		q.Handle(queue.Kind{Name: recordKind, Run: func(context.Context, *platform.Tenant, queue.Job) error {
			t.Error("the test's own queue ran a job")
			return nil
		}})
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		for range jobs {
			enqueue(t, q, tn, queue.New{Kind: recordKind})
		}
		// Until the queue is empty: every job ran and was recorded done.
		for left := jobs; left > 0; {
			if err := tn.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM queue_jobs`).Scan(&left); err != nil {
				t.Fatal(err)
			}
			for _, w := range workers {
				if exited, err := w.Exited(); exited {
					t.Fatalf("a worker stopped: %v\n%s", err, w.Log())
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		files, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		runs, byProcess := map[string]int{}, map[string]int{}
		for _, f := range files {
			parts := strings.Split(f.Name(), "-")
			runs[parts[0]]++
			byProcess[parts[1]]++
		}
		for job, n := range runs {
			if n != 1 {
				t.Errorf("job %s ran %d times", job, n)
			}
		}
		if len(runs) != jobs || len(files) != jobs {
			t.Fatalf("%d jobs ran, %d runs, want %d", len(runs), len(files), jobs)
		}
		if len(byProcess) != 2 {
			t.Fatalf("runs by process: %v, want both processes", byProcess)
		}
		t.Logf("runs by process: %v", byProcess)
	})
}
