package events_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
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

func TestOutboxIsTransactional(t *testing.T) {
	tn := tenant(t)
	var got []string
	d := events.NewDispatcher(clock.System{}, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
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

func TestFailedListenerIsRetried(t *testing.T) {
	tn := tenant(t)
	calls := 0
	d := events.NewDispatcher(clock.System{}, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
			calls++
			if calls == 1 {
				return errors.New("mail server down")
			}
			return nil
		})
	emit(t, tn, events.Event{Name: events.ForgotPassword, UserID: 1}, false)
	if n, _ := d.DispatchPending(context.Background(), tn); n != 0 {
		t.Fatal("a failed delivery must not count as delivered")
	}
	if n, _ := d.DispatchPending(context.Background(), tn); n != 1 || calls != 2 {
		t.Fatalf("retry delivered %d after %d calls", n, calls)
	}
}

func TestDispatcherWakesAfterCommit(t *testing.T) {
	tn := tenant(t)
	delivered := make(chan string, 1)
	d := events.NewDispatcher(clock.System{}, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
			delivered <- ev.Name
			return nil
		})
	d.Poll = time.Hour // only the wake-up can deliver in time
	tn.DB.Signal = tn.Kick
	stop := d.Start(tn)
	defer stop()
	emit(t, tn, events.Event{Name: events.Login, UserID: 1}, false)
	select {
	case name := <-delivered:
		if name != events.Login {
			t.Fatal(name)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the commit did not wake the dispatcher")
	}
}

// TestDispatcherRetriesFailedDelivery checks that on SQLite, where an idle
// dispatcher waits for a commit instead of polling, a failed delivery is
// still retried by the poll, with no commit to wake it.
func TestDispatcherRetriesFailedDelivery(t *testing.T) {
	tn := tenant(t)
	calls := make(chan int, 2)
	n := 0
	d := events.NewDispatcher(clock.System{}, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(_ context.Context, _ *platform.Tenant, ev events.Stored) error {
			n++
			calls <- n
			if n == 1 {
				return errors.New("the first delivery fails")
			}
			return nil
		})
	d.Poll = 10 * time.Millisecond
	tn.DB.Signal = tn.Kick
	stop := d.Start(tn)
	defer stop()
	emit(t, tn, events.Event{Name: events.Login, UserID: 1}, false)
	for want := 1; want <= 2; want++ {
		select {
		case got := <-calls:
			if got != want {
				t.Fatalf("delivery %d, want %d", got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("delivery %d never came: the failed event was not retried", want)
		}
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

// deliveries counts the deliveries of each event over several dispatchers;
// hold, when set, blocks the listener of dispatcher "a" on its first event.
type deliveries struct {
	mu      sync.Mutex
	count   map[int64]int
	started chan struct{}
	hold    chan struct{}
}

func (d *deliveries) dispatcher(name string) *events.Dispatcher {
	return events.NewDispatcher(clock.System{}, slog.New(slog.NewTextHandler(io.Discard, nil)),
		func(ctx context.Context, _ *platform.Tenant, ev events.Stored) error {
			if name == "a" && d.hold != nil {
				d.started <- struct{}{}
				select {
				case <-d.hold:
				case <-ctx.Done():
					return ctx.Err()
				}
				d.hold = nil
			}
			d.mu.Lock()
			defer d.mu.Unlock()
			d.count[ev.ID]++
			return nil
		})
}

// TestReplicasClaimEvents runs two dispatchers of one PostgreSQL tenant, as
// two replicas do: while one delivers a batch, the other skips it, so each
// event reaches the listeners once.
func TestReplicasClaimEvents(t *testing.T) {
	tn := pgTenant(t)
	for range 3 {
		emit(t, tn, events.Event{Name: events.Login, UserID: 1}, false)
	}
	d := &deliveries{count: map[int64]int{}, started: make(chan struct{}, 1), hold: make(chan struct{})}
	a, b := d.dispatcher("a"), d.dispatcher("b")
	done := make(chan error, 1)
	go func() {
		_, err := a.DispatchPending(context.Background(), tn)
		done <- err
	}()
	<-d.started // a holds its batch, its first event in the listener
	if n, err := b.DispatchPending(context.Background(), tn); err != nil || n != 0 {
		t.Errorf("the second replica delivered %d events (%v) that the first one holds", n, err)
	}
	close(d.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(d.count) != 3 {
		t.Errorf("%d events delivered, want 3", len(d.count))
	}
	for id, n := range d.count {
		if n != 1 {
			t.Errorf("event %d delivered %d times", id, n)
		}
	}
}

// TestAbandonedClaimIsDelivered stops a dispatcher in the middle of its
// batch, as a replica that dies does: nothing of the batch is recorded, and
// the other replica delivers every event.
func TestAbandonedClaimIsDelivered(t *testing.T) {
	tn := pgTenant(t)
	for range 2 {
		emit(t, tn, events.Event{Name: events.Logout, UserID: 1}, false)
	}
	d := &deliveries{count: map[int64]int{}, started: make(chan struct{}, 1), hold: make(chan struct{})}
	a, b := d.dispatcher("a"), d.dispatcher("b")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.DispatchPending(ctx, tn)
		done <- err
	}()
	<-d.started
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("stopped dispatcher: %v", err)
	}
	// The stopped dispatcher's connection is closed by database/sql in the
	// background, and PostgreSQL releases the claim when it notices: wait
	// for that on the rows' locks themselves, as the other replica's next
	// poll would.
	if err := tn.Tx(context.Background(), func(tx *sqldb.Tx) error {
		_, err := tx.ExecContext(context.Background(), `SELECT id FROM events WHERE dispatched_at IS NULL FOR UPDATE`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if n, err := b.DispatchPending(context.Background(), tn); err != nil || n != 2 {
		t.Fatalf("the other replica delivered %d events (%v), want 2", n, err)
	}
	var left int
	if err := tn.DB.QueryRow(`SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL OR attempts <> 1`).Scan(&left); err != nil || left != 0 {
		t.Errorf("%d events undelivered or counted twice (%v)", left, err)
	}
}
