package sqldb

import (
	"context"
	"sync"
	"testing"
	"time"
)

// TestSQLiteWritesQueueOnOneConnection sends many writes at once through
// each way of writing (a transaction, ExecContext, an INSERT … RETURNING
// through QueryRowContext) with reads beside them: every write lands, all
// of them ran on the writer's one connection, and they waited for it in
// Go rather than in SQLite's busy handler.
func TestSQLiteWritesQueueOnOneConnection(t *testing.T) {
	ctx := context.Background()
	db := dialects(t)["sqlite"](t)
	kv(t, db)
	const each = 40
	var wg sync.WaitGroup
	errs := make(chan error, 4*each)
	// A transaction holds the writer's connection while the writes start,
	// so that they meet it taken whatever the machine's timing; it lets go
	// once one of them waits for it. The deadline only guards a hang.
	held, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	err := db.Tx(held, func(*Tx) error {
		start(ctx, db, each, &wg, errs)
		for db.writes.Stats().WaitCount == 0 && held.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		return held.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM kv`).Scan(&n); err != nil || n != 3*each {
		t.Fatalf("%d rows (%v), want %d", n, err, 3*each)
	}
	w := db.writes.Stats()
	if w.MaxOpenConnections != 1 || w.OpenConnections > 1 {
		t.Errorf("writer pool: %+v", w)
	}
	if w.WaitCount == 0 {
		t.Errorf("no write waited for the writer's connection: %+v", w)
	}
	if k := db.writeStmts.kept(`INSERT INTO kv (k, v) VALUES ($1, $2) RETURNING k`); k == nil {
		t.Error("the INSERT … RETURNING did not run on the writer's connection")
	} else {
		db.writeStmts.release(k)
	}
	if r := db.DB.Stats(); r.OpenConnections == 0 {
		t.Errorf("the reads did not use the readers' pool: %+v", r)
	}
}

// start sends each writes of every kind at once, with reads beside them.
func start(ctx context.Context, db *DB, each int, wg *sync.WaitGroup, errs chan<- error) {
	for i := range each {
		wg.Add(4)
		go func() {
			defer wg.Done()
			errs <- db.Tx(ctx, func(tx *Tx) error {
				_, err := tx.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2)`, i, "tx")
				return err
			})
		}()
		go func() {
			defer wg.Done()
			_, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2)`, 1000+i, "exec")
			errs <- err
		}()
		go func() {
			defer wg.Done()
			var k int
			errs <- db.QueryRowContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2) RETURNING k`, 2000+i, "returning").Scan(&k)
		}()
		go func() {
			defer wg.Done()
			var n int
			errs <- db.QueryRowContext(ctx, `SELECT COUNT(*) FROM kv`).Scan(&n)
		}()
	}
}
