// Package queuetest runs job-queue workers in processes of their own for
// tests: the test binary starts itself again as a worker of the test's
// platform, so that a test can kill a worker for real (SIGKILL) or have
// several processes share one queue.
package queuetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/server"
)

// configVar carries the platform's configuration (JSON of config.Config)
// to a worker process; its presence makes the test binary a worker.
const configVar = "LMS_TEST_WORKER_CONFIG"

// Main is a test package's TestMain: in a process started by Start it
// opens the platform, lets setup adjust the server (register test kinds,
// set the lease) and runs only the job queue, on the system clock, until
// it is killed or stopped; otherwise it runs the tests.
func Main(m *testing.M, setup func(s *server.Server)) {
	raw := os.Getenv(configVar)
	if raw == "" {
		os.Exit(m.Run())
	}
	var cfg config.Config
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, "worker: config:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	s, err := server.New(ctx, &cfg, server.Options{Logger: log, NoDispatch: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker: start:", err)
		os.Exit(2)
	}
	if setup != nil {
		setup(s)
	}
	fmt.Fprintln(os.Stderr, Running)
	s.Queue.Run(ctx)
	stop()
	s.Close()
	os.Exit(0)
}

// Running is the line a worker process writes once its queue runs.
const Running = "worker: running"

// Worker is a worker process.
type Worker struct {
	cmd *exec.Cmd
	// log is the file of the process's standard error.
	log  string
	done chan struct{}
	err  error
}

// Start runs a worker process on env's platform with the extra
// environment variables (NAME=value) for its setup. The process leads a
// group of its own, so that Kill ends what it started (ffmpeg) too, as a
// crash of the machine or container would. It is killed when the test
// ends.
func Start(t testing.TB, env *apitest.Env, extraEnv ...string) *Worker {
	t.Helper()
	raw, err := json.Marshal(env.Server.Config)
	if err != nil {
		t.Fatal(err)
	}
	w := &Worker{cmd: exec.Command(os.Args[0], "-test.run=^$"), log: filepath.Join(t.TempDir(), "worker.log"),
		done: make(chan struct{})}
	w.cmd.Env = append(append(os.Environ(), configVar+"="+string(raw)), extraEnv...)
	w.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	logFile, err := os.Create(w.log)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close() // the process has its own copy
	w.cmd.Stderr, w.cmd.Stdout = logFile, io.Discard
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	t.Cleanup(func() {
		syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-w.done:
		case <-time.After(10 * time.Second):
			t.Errorf("worker process %d did not end", w.cmd.Process.Pid)
		}
	})
	return w
}

// Exited reports, without waiting, whether the process has ended, and
// how.
func (w *Worker) Exited() (bool, error) {
	select {
	case <-w.done:
		return true, w.err
	default:
		return false, nil
	}
}

// Log is what the process wrote to its standard error so far.
func (w *Worker) Log() string {
	b, err := os.ReadFile(w.log)
	if err != nil {
		return "(the worker's log cannot be read: " + err.Error() + ")"
	}
	return string(b)
}

// Kill ends the process group with SIGKILL and waits for the process.
func (w *Worker) Kill(t testing.TB) {
	t.Helper()
	if err := syscall.Kill(-w.cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-w.done
	if ws, ok := w.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("the worker was not killed: %v\n%s", w.err, w.Log())
	}
}

// Run runs q's workers in this process until the test ends, as `lms
// serve` does.
func Run(t testing.TB, q *queue.Queue) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}
