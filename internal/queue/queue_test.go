package queue_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/sqldb"
)

func newQueue(env *apitest.Env) *queue.Queue {
	q := queue.NewQueue(env.Clock, env.Server.Tenants, slog.New(slog.NewTextHandler(io.Discard, nil)))
	q.Lease = time.Hour // renewed every 20 minutes of real time: never during a test
	return q
}

func enqueue(t *testing.T, q *queue.Queue, tn *platform.Tenant, n queue.New) {
	t.Helper()
	err := tn.Tx(context.Background(), func(tx *sqldb.Tx) error { return q.Enqueue(context.Background(), tn, tx, n) })
	if err != nil {
		t.Fatal(err)
	}
}

func work(t *testing.T, q *queue.Queue) bool {
	t.Helper()
	ran, err := q.Work(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ran
}

func jobState(t *testing.T, tn *platform.Tenant, key string) queue.Status {
	t.Helper()
	s, ok, err := queue.StatusOf(context.Background(), tn.DB, key)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return queue.Status{State: "gone"}
	}
	return s
}

func marks(t *testing.T, env *apitest.Env) int {
	t.Helper()
	var n int
	if err := env.Server.Registry.DB().QueryRowContext(context.Background(), `SELECT COUNT(*) FROM queue_tenants`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A failing job runs again after a doubling backoff, and its success
// removes it; the tenant's mark goes once its queue is empty.
func TestRetriesWithBackoff(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		q := newQueue(env)
		var runs atomic.Int32
		q.Handle(queue.Kind{Name: "test.flaky", Backoff: time.Minute, Run: func(_ context.Context, _ *platform.Tenant, j queue.Job) error {
			if runs.Add(1) != int32(j.Attempt) {
				t.Errorf("run %d saw attempt %d", runs.Load(), j.Attempt)
			}
			if j.Attempt < 3 {
				return errors.New("not yet")
			}
			return nil
		}})
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		enqueue(t, q, tn, queue.New{Kind: "test.flaky", Key: "flaky:1", Payload: map[string]int{"n": 1}})
		if !work(t, q) || runs.Load() != 1 {
			t.Fatalf("first work: %d runs", runs.Load())
		}
		if s := jobState(t, tn, "flaky:1"); s.State != "queued" || s.Attempts != 1 || s.LastError != "not yet" {
			t.Fatalf("after a failure: %+v", s)
		}
		if work(t, q) {
			t.Fatal("ran again before its backoff")
		}
		env.Clock.Advance(time.Minute)
		if !work(t, q) || runs.Load() != 2 {
			t.Fatalf("after a minute: %d runs", runs.Load())
		}
		env.Clock.Advance(time.Minute) // the second wait is two minutes
		if work(t, q) {
			t.Fatal("the backoff did not double")
		}
		env.Clock.Advance(time.Minute)
		if !work(t, q) || runs.Load() != 3 {
			t.Fatalf("after three minutes: %d runs", runs.Load())
		}
		if s := jobState(t, tn, "flaky:1"); s.State != "gone" {
			t.Fatalf("a job done is removed, got %+v", s)
		}
		work(t, q)
		if n := marks(t, env); n != 0 {
			t.Fatalf("%d tenants still marked with an empty queue", n)
		}
	})
}

// A job that keeps failing ends failed with its reason, told to the
// kind's Failed hook once; a permanent error fails it without a retry.
func TestFailsForGood(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		q := newQueue(env)
		var failed []string
		var mu sync.Mutex
		onFail := func(_ context.Context, _ *platform.Tenant, j queue.Job, reason string) error {
			mu.Lock()
			defer mu.Unlock()
			failed = append(failed, j.Key+": "+reason)
			return nil
		}
		q.Handle(queue.Kind{Name: "test.broken", MaxAttempts: 2, Backoff: time.Second, Failed: onFail,
			Run: func(context.Context, *platform.Tenant, queue.Job) error { return errors.New("disk on fire") }})
		q.Handle(queue.Kind{Name: "test.corrupt", Failed: onFail,
			Run: func(context.Context, *platform.Tenant, queue.Job) error {
				return queue.Permanent(errors.New("not a video"))
			}})
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		enqueue(t, q, tn, queue.New{Kind: "test.broken", Key: "broken:1"})
		enqueue(t, q, tn, queue.New{Kind: "test.corrupt", Key: "corrupt:1"})
		for range 3 {
			work(t, q)
			env.Clock.Advance(time.Second)
		}
		if s := jobState(t, tn, "broken:1"); s.State != "failed" || s.Attempts != 2 || s.LastError != "disk on fire" {
			t.Fatalf("broken job: %+v", s)
		}
		if s := jobState(t, tn, "corrupt:1"); s.State != "failed" || s.Attempts != 1 || s.LastError != "not a video" {
			t.Fatalf("corrupt job: %+v", s)
		}
		if len(failed) != 2 {
			t.Fatalf("failure hooks: %v", failed)
		}
		if work(t, q) {
			t.Fatal("a failed job ran again")
		}
		// Enqueueing the key again replaces the failed job.
		enqueue(t, q, tn, queue.New{Kind: "test.corrupt", Key: "corrupt:1"})
		if s := jobState(t, tn, "corrupt:1"); s.State != "queued" || s.Attempts != 0 {
			t.Fatalf("re-enqueued: %+v", s)
		}
	})
}

// A worker that stops mid-job (here it hangs without renewing its lease,
// as a killed process would; internal/media's TestKilledWorkerLosesNoJob
// kills a real worker process) does not lose the job: once the lease has run
// out another worker takes it, and the first one's late outcome is
// ignored.
func TestDeadWorkerJobIsTakenAgain(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		hung := make(chan struct{})
		started := make(chan struct{})
		var firstDone, secondDone atomic.Bool
		dead := newQueue(env)
		dead.Handle(queue.Kind{Name: "test.long", Run: func(context.Context, *platform.Tenant, queue.Job) error {
			close(started)
			<-hung // ignores its context, like a process that no longer runs
			firstDone.Store(true)
			return errors.New("the late result of a dead worker")
		}})
		alive := newQueue(env)
		alive.Handle(queue.Kind{Name: "test.long", Run: func(_ context.Context, _ *platform.Tenant, j queue.Job) error {
			if j.Attempt != 2 {
				t.Errorf("the second worker saw attempt %d", j.Attempt)
			}
			secondDone.Store(true)
			return nil
		}})
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		enqueue(t, dead, tn, queue.New{Kind: "test.long", Key: "long:1"})
		deadDone := make(chan struct{})
		go func() {
			defer close(deadDone)
			dead.Work(context.Background())
		}()
		<-started
		if s := jobState(t, tn, "long:1"); s.State != "running" {
			t.Fatalf("while the first worker runs it: %+v", s)
		}
		if work(t, alive) {
			t.Fatal("a job under a live lease was taken")
		}
		env.Clock.Advance(time.Hour + time.Second)
		if !work(t, alive) || !secondDone.Load() {
			t.Fatal("the job of the dead worker was not taken again")
		}
		if s := jobState(t, tn, "long:1"); s.State != "gone" {
			t.Fatalf("after the second worker: %+v", s)
		}
		close(hung)
		<-deadDone
		if !firstDone.Load() {
			t.Fatal("the first worker never ran")
		}
		if s := jobState(t, tn, "long:1"); s.State != "gone" {
			t.Fatalf("the dead worker's late failure was recorded: %+v", s)
		}
	})
}

// Workers of two queues (two replicas) running at once never take the
// same job: on PostgreSQL the claim skips rows another worker has locked.
func TestWorkersNeverShareAJob(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		const jobs = 40
		var mu sync.Mutex
		ran := map[int64]int{}
		var done atomic.Int32
		handler := func(_ context.Context, _ *platform.Tenant, j queue.Job) error {
			mu.Lock()
			ran[j.ID]++
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
			done.Add(1)
			return nil
		}
		replicas := []*queue.Queue{newQueue(env), newQueue(env)}
		for _, q := range replicas {
			q.Workers = 3
			q.Poll = 5 * time.Millisecond
			q.Handle(queue.Kind{Name: "test.share", Run: handler})
		}
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		for range jobs {
			enqueue(t, replicas[0], tn, queue.New{Kind: "test.share"})
		}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for _, q := range replicas {
			wg.Add(1)
			go func() {
				defer wg.Done()
				q.Run(ctx)
			}()
		}
		distinct := func() int {
			mu.Lock()
			defer mu.Unlock()
			return len(ran)
		}
		// Until every job ran once (or a minute passed: some never ran).
		deadline := time.Now().Add(time.Minute)
		for distinct() < jobs && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for id, n := range ran {
			if n != 1 {
				t.Errorf("job %d ran %d times", id, n)
			}
		}
		if len(ran) != jobs || done.Load() != jobs {
			t.Fatalf("%d of %d jobs ran, %d runs", len(ran), jobs, done.Load())
		}
	})
}
