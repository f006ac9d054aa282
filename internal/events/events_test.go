package events_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/sqldb/sqldbtest"
)

func tenant(t *testing.T) *platform.Tenant {
	t.Helper()
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := sqldb.Migrate(ctx, db, sqldb.TenantSet); err != nil {
		t.Fatal(err)
	}
	return &platform.Tenant{DB: db}
}

func emit(t *testing.T, tn *platform.Tenant, ev events.Event, fail bool) {
	t.Helper()
	err := tn.DB.Tx(context.Background(), func(tx *sqldb.Tx) error {
		if err := events.Emit(context.Background(), tx, time.Now().UTC(), ev); err != nil {
			return err
		}
		if fail {
			return errors.New("the change failed")
		}
		return nil
	})
	if (err != nil) != fail {
		t.Fatal(err)
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// emitAt records ev at the clock's time.
func emitAt(t *testing.T, tn *platform.Tenant, clk clock.Clock, ev events.Event) int64 {
	t.Helper()
	var id int64
	err := tn.DB.Tx(context.Background(), func(tx *sqldb.Tx) error {
		if err := events.Emit(context.Background(), tx, clk.Now(), ev); err != nil {
			return err
		}
		return tx.QueryRowContext(context.Background(), `SELECT MAX(id) FROM events`).Scan(&id)
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// delivery is a pair's row, read back from the tenant's database.
type delivery struct {
	State, LastError string
	Attempts         int
	Next             time.Time
}

func pairOf(t *testing.T, tn *platform.Tenant, event int64, listener string) delivery {
	t.Helper()
	var d delivery
	if err := tn.DB.QueryRowContext(context.Background(), `SELECT state, last_error, attempts, next_attempt_at
		FROM event_deliveries WHERE event_id = $1 AND listener = $2`, event, listener).Scan(&d.State, &d.LastError, &d.Attempts, &d.Next); err != nil {
		t.Fatalf("pair (%d, %s): %v", event, listener, err)
	}
	return d
}

// backends runs a test on SQLite and, when LMS_TEST_PG_URL is set, on
// PostgreSQL.
func backends(t *testing.T, run func(t *testing.T, tn *platform.Tenant)) {
	t.Run("sqlite", func(t *testing.T) { run(t, tenant(t)) })
	t.Run("postgres", func(t *testing.T) { run(t, pgTenant(t)) })
}

func TestOutboxIsTransactional(t *testing.T) {
	tn := tenant(t)
	var got []string
	d := events.NewDispatcher(clock.System{}, quiet, events.Tuning{})
	d.Listen("names", func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
		got = append(got, ev.Name)
		return nil
	})
	emit(t, tn, events.Event{Name: events.Login, UserID: 1}, true)
	emit(t, tn, events.Event{Name: events.Logout, UserID: 1, Payload: map[string]any{"k": "v"}}, false)
	n, err := d.DispatchPending(context.Background(), tn)
	if err != nil || n != 1 || len(got) != 1 || got[0] != events.Logout {
		t.Fatalf("delivered %d %v (%v); a rolled-back change must leave no event", n, got, err)
	}
	if n, _ := d.DispatchPending(context.Background(), tn); n != 0 {
		t.Fatal("a delivered event must not be delivered again")
	}
}

// TestListenersAreIndependent: one listener of an event fails for good,
// one panics, one fails for now; the others are delivered at the first
// try, the permanent failure is a dead letter with its reason at once, the
// panic is a failed attempt retried later, and nothing runs twice.
func TestListenersAreIndependent(t *testing.T) {
	backends(t, func(t *testing.T, tn *platform.Tenant) {
		clk := clock.NewFake(start)
		d := events.NewDispatcher(clk, quiet, events.Tuning{})
		calls := map[string]int{}
		var mu sync.Mutex
		count := func(name string) {
			mu.Lock()
			calls[name]++
			mu.Unlock()
		}
		d.Listen("first", func(context.Context, *platform.Tenant, events.Stored) error { count("first"); return nil })
		d.Listen("never", func(context.Context, *platform.Tenant, events.Stored) error {
			count("never")
			return events.Permanent(errors.New("the platform does not know this user"))
		})
		d.Listen("panics", func(context.Context, *platform.Tenant, events.Stored) error {
			count("panics")
			var m map[string]int
			//lint:ignore SA5000 the listener panics on purpose: the dispatcher must survive it.
			m["boom"]++
			return nil
		})
		flaky := 0
		d.Listen("flaky", func(context.Context, *platform.Tenant, events.Stored) error {
			count("flaky")
			flaky++
			if flaky == 1 {
				return errors.New("503 Service Unavailable")
			}
			return nil
		})
		d.Listen("last", func(context.Context, *platform.Tenant, events.Stored) error { count("last"); return nil })
		id := emitAt(t, tn, clk, events.Event{Name: events.CourseFinished, UserID: 7})
		if n, err := d.DispatchPending(context.Background(), tn); err != nil || n != 2 {
			t.Fatalf("first dispatch delivered %d (%v), want first and last", n, err)
		}
		for _, name := range []string{"first", "last"} {
			if p := pairOf(t, tn, id, name); p.State != "delivered" || p.Attempts != 1 {
				t.Errorf("%s: %+v, want delivered at the first try", name, p)
			}
		}
		if p := pairOf(t, tn, id, "never"); p.State != "failed" || p.Attempts != 1 || !strings.Contains(p.LastError, "does not know this user") {
			t.Errorf("permanent failure: %+v, want a dead letter with its reason at once", p)
		}
		p := pairOf(t, tn, id, "panics")
		if p.State != "pending" || !strings.Contains(p.LastError, "panic") || !p.Next.After(start) {
			t.Errorf("panic: %+v, want a failed attempt with a later retry", p)
		}
		if p := pairOf(t, tn, id, "flaky"); p.State != "pending" || p.Attempts != 1 {
			t.Errorf("flaky: %+v", p)
		}
		clk.Advance(events.FirstRetry)
		if n, err := d.DispatchPending(context.Background(), tn); err != nil || n != 1 {
			t.Fatalf("retry delivered %d (%v), want flaky", n, err)
		}
		want := map[string]int{"first": 1, "last": 1, "never": 1, "panics": 2, "flaky": 2}
		for name, n := range want {
			if calls[name] != n {
				t.Errorf("%s called %d times, want %d", name, calls[name], n)
			}
		}
	})
}

// TestRetryScheduleAndWindow: a listener that always fails is retried
// with growing delays, from seconds to hours, and given up only after the
// retry window; the figures are logged for docs/deliveries.md.
func TestRetryScheduleAndWindow(t *testing.T) {
	tn := tenant(t)
	clk := clock.NewFake(start)
	d := events.NewDispatcher(clk, quiet, events.Tuning{})
	d.Listen("down", func(context.Context, *platform.Tenant, events.Stored) error { return errors.New("connection refused") })
	id := emitAt(t, tn, clk, events.Event{Name: events.Login, UserID: 1})
	var delays []time.Duration
	last := clk.Now()
	for i := 0; ; i++ {
		if _, err := d.DispatchPending(context.Background(), tn); err != nil {
			t.Fatal(err)
		}
		p := pairOf(t, tn, id, "down")
		if p.State == "failed" {
			if p.Attempts != i+1 {
				t.Fatalf("%d attempts recorded, %d made", p.Attempts, i+1)
			}
			break
		}
		if i > 100 {
			t.Fatal("never given up")
		}
		delays = append(delays, p.Next.Sub(last))
		last = p.Next
		clk.Set(p.Next)
	}
	elapsed := clk.Now().Sub(start)
	t.Logf("%d attempts over %s; delays %v", len(delays)+1, elapsed, delays)
	if elapsed < 66*time.Hour || elapsed > events.DefaultWindow {
		t.Errorf("given up after %s, want about the 72 h window", elapsed)
	}
	if delays[0] < 3*time.Second || delays[0] > events.FirstRetry {
		t.Errorf("first retry after %s", delays[0])
	}
	for i := 1; i < len(delays); i++ {
		if delays[i] < delays[i-1]/2 || delays[i] > events.MaxRetryDelay {
			t.Errorf("delay %d is %s after %s", i, delays[i], delays[i-1])
		}
	}
	if delays[len(delays)-1] < 4*time.Hour {
		t.Errorf("the last delays should be hours: %v", delays)
	}
}

// TestWindowSetting: the tenant's window, longer than the default, keeps
// the pair retried past 72 hours.
func TestWindowSetting(t *testing.T) {
	tn := tenant(t)
	clk := clock.NewFake(start)
	d := events.NewDispatcher(clk, quiet, events.Tuning{
		Window: func(context.Context, *platform.Tenant) time.Duration { return 240 * time.Hour }})
	d.Listen("down", func(context.Context, *platform.Tenant, events.Stored) error { return errors.New("down") })
	id := emitAt(t, tn, clk, events.Event{Name: events.Login, UserID: 1})
	for {
		d.DispatchPending(context.Background(), tn)
		p := pairOf(t, tn, id, "down")
		if p.State != "pending" {
			break
		}
		clk.Set(p.Next)
	}
	if elapsed := clk.Now().Sub(start); elapsed < 230*time.Hour {
		t.Errorf("given up after %s with a 240 h window", elapsed)
	}
}

// TestDueRetryAfterRestart: a dispatcher stopped while a pair waits for
// its retry; a new one (the restarted process) delivers it when the
// injected clock reaches its time, without any new event or kick.
func TestDueRetryAfterRestart(t *testing.T) {
	backends(t, func(t *testing.T, tn *platform.Tenant) {
		clk := clock.NewFake(start)
		var fail atomic.Bool
		fail.Store(true)
		delivered := make(chan int64, 4)
		listener := func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
			if fail.Load() {
				return errors.New("partner down")
			}
			delivered <- ev.ID
			return nil
		}
		first := events.NewDispatcher(clk, quiet, events.Tuning{Poll: time.Hour})
		first.Listen("partner", listener)
		id := emitAt(t, tn, clk, events.Event{Name: events.Login, UserID: 1})
		if _, err := first.DispatchPending(context.Background(), tn); err != nil {
			t.Fatal(err)
		}
		p := pairOf(t, tn, id, "partner")
		if p.State != "pending" || p.Attempts != 1 {
			t.Fatalf("%+v", p)
		}
		fail.Store(false)
		// Polling hourly: only the due time may wake it.
		second := events.NewDispatcher(clk, quiet, events.Tuning{Poll: time.Hour})
		second.Listen("partner", listener)
		stop := second.Start(tn)
		defer stop()
		select {
		case <-delivered:
			t.Fatal("delivered before its retry was due")
		case <-time.After(100 * time.Millisecond):
		}
		clk.Set(p.Next)
		select {
		case got := <-delivered:
			if got != id {
				t.Fatal(got)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the due retry was not delivered after the restart")
		}
	})
}

// TestEventsBeforeTheMigration: events recorded by the previous dispatcher
// (no pairs, maybe failed attempts) are delivered to every listener.
func TestEventsBeforeTheMigration(t *testing.T) {
	tn := tenant(t)
	ctx := context.Background()
	if _, err := tn.DB.ExecContext(ctx, `INSERT INTO events (name, user_id, payload, created_at, attempts, last_error)
		VALUES ('Login', 1, '{}', $1, 10, 'old failure')`, start); err != nil {
		t.Fatal(err)
	}
	clk := clock.NewFake(start.Add(time.Hour))
	d := events.NewDispatcher(clk, quiet, events.Tuning{})
	got := 0
	d.Listen("a", func(context.Context, *platform.Tenant, events.Stored) error { got++; return nil })
	d.Listen("b", func(context.Context, *platform.Tenant, events.Stored) error { got++; return nil })
	if n, err := d.DispatchPending(ctx, tn); err != nil || n != 2 || got != 2 {
		t.Fatalf("delivered %d (%v), listeners ran %d times", n, err, got)
	}
}

// pgTenant is a tenant on a fresh PostgreSQL database, dropped when the
// test ends; it skips without LMS_TEST_PG_URL, except under CI=true.
func pgTenant(t *testing.T) *platform.Tenant {
	t.Helper()
	serverURL := os.Getenv("LMS_TEST_PG_URL")
	if serverURL == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("LMS_TEST_PG_URL is not set; CI=true requires PostgreSQL")
		}
		t.Skip("LMS_TEST_PG_URL is not set; skipping the PostgreSQL claim test")
	}
	return &platform.Tenant{DB: sqldbtest.Postgres(t, serverURL, "lmstest_events", sqldb.TenantSet)}
}

// counter counts the runs of each pair over several dispatchers and
// notices two runs of one pair at once.
type counter struct {
	mu      sync.Mutex
	count   map[int64]int
	running map[int64]bool
	overlap int
}

func (c *counter) enter(id int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running[id] {
		c.overlap++
	}
	c.running[id] = true
}

func (c *counter) leave(id int64, delivered bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running[id] = false
	if delivered {
		c.count[id]++
	}
}

// TestReplicasClaimPairs runs two dispatchers of one PostgreSQL tenant, as
// two replicas do: while one runs a pair, the other skips it; the first is
// then stopped in the middle of a delivery, and the other delivers what it
// left, each pair once and never two at once.
func TestReplicasClaimPairs(t *testing.T) {
	tn := pgTenant(t)
	clk := clock.NewFake(start)
	lease := clock.NewFake(start)
	c := &counter{count: map[int64]int{}, running: map[int64]bool{}}
	started, hold := make(chan struct{}, 1), make(chan struct{})
	replica := func(name string) *events.Dispatcher {
		d := events.NewDispatcher(clk, quiet, events.Tuning{})
		d.LeaseClock = lease
		d.Listen("partner", func(ctx context.Context, _ *platform.Tenant, ev events.Stored) error {
			c.enter(ev.ID)
			if name == "a" {
				started <- struct{}{}
				select {
				case <-hold:
				case <-ctx.Done():
					c.leave(ev.ID, false)
					return ctx.Err()
				}
			}
			c.leave(ev.ID, true)
			return nil
		})
		return d
	}
	var ids []int64
	for range 3 {
		ids = append(ids, emitAt(t, tn, clk, events.Event{Name: events.Login, UserID: 1}))
	}
	a, b := replica("a"), replica("b")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.DispatchPending(ctx, tn)
		done <- err
	}()
	<-started // a holds its batch, its first pair in the listener
	if n, err := b.DispatchPending(context.Background(), tn); err != nil || n != 0 {
		t.Errorf("the second replica delivered %d pairs (%v) that the first one holds", n, err)
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped dispatcher: %v", err)
	}
	// A replica that dies cannot release its lease: b takes its pairs once
	// the lease ran out. Leave one leased as by a dead replica.
	if _, err := tn.DB.ExecContext(context.Background(), `UPDATE event_deliveries SET claim = 'dead', claimed_until = $1
		WHERE event_id = $2`, lease.Now().Add(events.DefaultLease), ids[2]); err != nil {
		t.Fatal(err)
	}
	if n, err := b.DispatchPending(context.Background(), tn); err != nil || n != 2 {
		t.Fatalf("the other replica delivered %d pairs (%v), want the 2 not leased", n, err)
	}
	lease.Advance(events.DefaultLease)
	if n, err := b.DispatchPending(context.Background(), tn); err != nil || n != 1 {
		t.Fatalf("after the dead lease ran out: %d pairs (%v), want 1", n, err)
	}
	for _, id := range ids {
		if c.count[id] != 1 {
			t.Errorf("event %d delivered %d times", id, c.count[id])
		}
		if p := pairOf(t, tn, id, "partner"); p.State != "delivered" || p.Attempts != 1 {
			t.Errorf("event %d: %+v", id, p)
		}
	}
	if c.overlap != 0 {
		t.Errorf("%d pairs ran twice at once", c.overlap)
	}
}

// TestListenersGetTheirEvents: a listener added with ListenTo gets a pair
// (and a call) of the events it wants only, one added with Listen of
// every event, and each runs its events in the order they were recorded,
// across several claims.
func TestListenersGetTheirEvents(t *testing.T) {
	backends(t, func(t *testing.T, tn *platform.Tenant) {
		d := events.NewDispatcher(clock.System{}, quiet, events.Tuning{})
		var mu sync.Mutex
		got := map[string][]int64{}
		record := func(name string) events.Listener {
			return func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
				mu.Lock()
				defer mu.Unlock()
				got[name] = append(got[name], ev.ID)
				return nil
			}
		}
		d.Listen("every", record("every"))
		d.ListenTo("logins", events.Named(events.Login), record("logins"))
		d.ListenTo("users", func(ev events.Stored) bool { return ev.UserID != 0 }, record("users"))
		d.ListenTo("none", events.Named(), record("none"))
		clk := clock.System{}
		var all, logins, users []int64
		for i := range 150 {
			ev := events.Event{Name: events.Logout, UserID: int64(i%3) + 1}
			switch i % 3 {
			case 0:
				ev.Name = events.Login
			case 1:
				ev.UserID = 0
			}
			id := emitAt(t, tn, clk, ev)
			all = append(all, id)
			if ev.Name == events.Login {
				logins = append(logins, id)
			}
			if ev.UserID != 0 {
				users = append(users, id)
			}
		}
		n, err := d.DispatchPending(context.Background(), tn)
		if err != nil || n != len(all)+len(logins)+len(users) {
			t.Fatalf("delivered %d pairs (%v), want %d", n, err, len(all)+len(logins)+len(users))
		}
		for name, want := range map[string][]int64{"every": all, "logins": logins, "users": users, "none": nil} {
			if !slices.Equal(got[name], want) {
				t.Errorf("%s ran %v, want %v", name, got[name], want)
			}
			var pairs int
			if err := tn.DB.QueryRowContext(context.Background(), `SELECT COUNT(*) FROM event_deliveries WHERE listener = $1`,
				name).Scan(&pairs); err != nil || pairs != len(want) {
				t.Errorf("%s has %d pairs (%v), want %d", name, pairs, err, len(want))
			}
		}
	})
}
