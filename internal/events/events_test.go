package events_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
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
