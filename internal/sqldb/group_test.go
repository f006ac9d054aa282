package sqldb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestSQLiteTransactionsCommitInBatches queues 200 transactions behind one
// that holds the writer, each reading a counter and writing it back one
// higher: they run in batches of at most maxBatch, as if one after the
// other (the counter ends at the number that committed), and the ones that
// fail, panic or whose caller went away leave nothing behind while their
// neighbours in the batch commit.
func TestSQLiteTransactionsCommitInBatches(t *testing.T) {
	ctx := context.Background()
	db := dialects(t)["sqlite"](t)
	kv(t, db)
	if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (0, '0')`); err != nil {
		t.Fatal(err)
	}
	const queued = 200
	increment := func(ctx context.Context, tx *Tx, k int) error {
		var v string
		if err := tx.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = 0`).Scan(&v); err != nil {
			return err
		}
		var n int
		fmt.Sscan(v, &n)
		if _, err := tx.ExecContext(ctx, `UPDATE kv SET v = $1 WHERE k = 0`, fmt.Sprint(n+1)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, 'row')`, k)
		return err
	}

	// The first transaction holds the writer until the others queued.
	holding := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- db.Tx(ctx, func(tx *Tx) error {
			close(holding)
			for {
				db.commits.mu.Lock()
				n := len(db.commits.queue)
				db.commits.mu.Unlock()
				if n == queued {
					return increment(ctx, tx, 1)
				}
				time.Sleep(time.Millisecond)
			}
		})
	}()
	<-holding

	gone, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var afterCommits atomic.Int32
	failed := errors.New("refused")
	outcomes := make([]error, queued+2)
	for k := 2; k < queued+2; k++ {
		wg.Go(func() {
			ctx := ctx
			if k == 7 {
				ctx = gone
			}
			defer func() {
				if p := recover(); p != nil {
					outcomes[k] = fmt.Errorf("panicked: %v", p)
				}
			}()
			outcomes[k] = db.Tx(ctx, func(tx *Tx) error {
				if k == 7 {
					cancel() // its caller goes away while it runs
				}
				if err := increment(ctx, tx, k); err != nil {
					return err
				}
				tx.AfterCommit(func() { afterCommits.Add(1) })
				switch {
				case k%10 == 0:
					return failed
				case k%25 == 1:
					panic("boom")
				}
				return nil
			})
		})
	}
	wg.Wait()
	if err := <-first; err != nil {
		t.Fatal(err)
	}

	committed := 1
	for k := 2; k < queued+2; k++ {
		err := outcomes[k]
		var want string
		switch {
		case k == 7:
			want = context.Canceled.Error()
		case k%10 == 0:
			want = failed.Error()
		case k%25 == 1:
			want = "panicked: boom"
		}
		switch {
		case want == "" && err != nil:
			t.Errorf("transaction %d: %v", k, err)
		case want != "" && (err == nil || err.Error() != want):
			t.Errorf("transaction %d: %v, want %s", k, err, want)
		}
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM kv WHERE k = $1`, k).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if want == "" {
			committed++
		}
		if (n == 1) != (want == "") {
			t.Errorf("transaction %d (%v) left %d rows", k, err, n)
		}
	}
	var counter string
	if err := db.QueryRowContext(ctx, `SELECT v FROM kv WHERE k = 0`).Scan(&counter); err != nil {
		t.Fatal(err)
	}
	if counter != fmt.Sprint(committed) {
		t.Errorf("counter %s, want %d (one per committed transaction)", counter, committed)
	}
	if got := int(afterCommits.Load()); got != committed-1 {
		t.Errorf("%d after-commit hooks ran, want %d", got, committed-1)
	}
	// The first alone, then the 200 queued in batches of maxBatch.
	if want := 1 + (queued+maxBatch-1)/maxBatch; db.commits.batches != want {
		t.Errorf("%d batches, want %d", db.commits.batches, want)
	}
}
