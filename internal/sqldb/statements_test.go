package sqldb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"
)

// dialects opens a fresh database of each dialect: SQLite always,
// PostgreSQL when LMS_TEST_PG_URL is set.
func dialects(t *testing.T) map[string]func(t *testing.T) *DB {
	ctx := context.Background()
	open := map[string]func(t *testing.T) *DB{
		"sqlite": func(t *testing.T) *DB {
			db, err := OpenSQLite(ctx, filepath.Join(t.TempDir(), "s.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return db
		},
	}
	if url := os.Getenv("LMS_TEST_PG_URL"); url != "" {
		open["postgres"] = func(t *testing.T) *DB {
			b := make([]byte, 5)
			rand.Read(b)
			name := "lmsstmt_" + hex.EncodeToString(b)
			if err := CreateDatabase(ctx, url, name); err != nil {
				t.Fatal(err)
			}
			loc, _ := WithDatabase(url, name)
			db, err := OpenPostgres(ctx, loc)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				db.Close()
				DropDatabase(ctx, url, name)
			})
			return db
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but LMS_TEST_PG_URL is not set")
	}
	return open
}

func kv(t *testing.T, db *DB) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), `CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
}

// TestStatementsReused runs each query several times, in and out of
// transactions, and checks that the DB prepared each distinct query once.
func TestStatementsReused(t *testing.T) {
	ctx := context.Background()
	for name, open := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			kv(t, db)
			insert := `INSERT INTO kv (k, v) VALUES ($1, $2)`
			for i := range 3 {
				if _, err := db.ExecContext(ctx, insert, i, fmt.Sprint("v", i)); err != nil {
					t.Fatal(err)
				}
			}
			// Writes keep their statements where transactions run (on
			// SQLite the writer's connection), reads in the read pool.
			_, writes := db.writePool()
			kept := writes.acquire(ctx, insert)
			writes.release(kept)
			err := db.Tx(ctx, func(tx *Tx) error {
				for i := 3; i < 5; i++ {
					if _, err := tx.ExecContext(ctx, insert, i, fmt.Sprint("v", i)); err != nil {
						return err
					}
				}
				var n int
				return tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM kv`).Scan(&n)
			})
			if err != nil {
				t.Fatal(err)
			}
			vs, err := Column[string](db.QueryContext(ctx, `SELECT v FROM kv WHERE k >= $1 ORDER BY k`, 2))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(vs, []string{"v2", "v3", "v4"}) {
				t.Errorf("values %v", vs)
			}
			// CREATE TABLE, the insert, the count (first run in the
			// transaction, so prepared in the background) and the select;
			// on SQLite also the batch's SAVEPOINT and RELEASE (group.go).
			writes.background.Wait()
			n, want := db.stmts.len(), 4
			if writes != db.stmts {
				n += writes.len()
				want += 2
			}
			if n != want {
				t.Errorf("%d statements kept, want %d", n, want)
			}
			again := writes.acquire(ctx, insert)
			writes.release(again)
			if again != kept || kept.stmt == nil {
				t.Error("the insert was prepared again")
			}
		})
	}
}

// TestStatementsBounded runs more distinct queries than the cache holds
// while the rows of the first are still open: the cache stays at its
// bound, and the evicted statement still serves its open rows and runs
// again afterwards.
func TestStatementsBounded(t *testing.T) {
	ctx := context.Background()
	for name, open := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			kv(t, db)
			db.stmts = newStatements(db.DB, 4)
			for i := range 3 {
				if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2)`, i, "x"); err != nil {
					t.Fatal(err)
				}
			}
			first := `SELECT k FROM kv ORDER BY k`
			rows, err := db.QueryContext(ctx, first)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 10 {
				var n int
				if err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT COUNT(*) + %d FROM kv`, i)).Scan(&n); err != nil {
					t.Fatal(err)
				}
				if n != 3+i {
					t.Errorf("query %d: %d", i, n)
				}
			}
			if n := db.stmts.len(); n != 4 {
				t.Errorf("%d statements kept, want 4", n)
			}
			ks, err := Column[int](rows, nil)
			if err != nil || !slices.Equal(ks, []int{0, 1, 2}) {
				t.Errorf("rows of the evicted statement: %v, %v", ks, err)
			}
			if ks, err = Column[int](db.QueryContext(ctx, first)); err != nil || len(ks) != 3 {
				t.Errorf("the evicted query again: %v, %v", ks, err)
			}
		})
	}
}

// TestStatementsUnprepared runs what cannot be prepared: a script of
// several statements runs unprepared, and a broken query reports its
// error every time.
func TestStatementsUnprepared(t *testing.T) {
	ctx := context.Background()
	for name, open := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			if _, err := db.ExecContext(ctx, `CREATE TABLE a (x INTEGER); CREATE TABLE b (y INTEGER)`); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `INSERT INTO b (y) VALUES (1)`); err != nil {
				t.Errorf("the script's second table: %v", err)
			}
			for range 2 {
				if _, err := db.QueryContext(ctx, `SELECT nothing FROM nowhere`); err == nil {
					t.Error("a query of a missing table ran")
				}
			}
		})
	}
}

// TestChanged checks when the OnChange hook hears the keys a write named:
// at once outside a transaction, after the commit inside one, and never
// for a transaction that rolled back.
func TestChanged(t *testing.T) {
	ctx := context.Background()
	db := dialects(t)["sqlite"](t)
	var heard []string
	db.OnChange = func(keys []string) { heard = append(heard, keys...) }
	Changed(db, "a")
	if !slices.Equal(heard, []string{"a"}) {
		t.Fatalf("outside a transaction: heard %v", heard)
	}
	heard = nil
	db.Tx(ctx, func(tx *Tx) error {
		Changed(tx, "b", "c")
		if len(heard) != 0 {
			t.Errorf("heard %v before the commit", heard)
		}
		return nil
	})
	if !slices.Equal(heard, []string{"b", "c"}) {
		t.Errorf("after the commit: heard %v", heard)
	}
	heard = nil
	db.Tx(ctx, func(tx *Tx) error {
		Changed(tx, "d")
		return errors.New("roll back")
	})
	if len(heard) != 0 {
		t.Errorf("after a rollback: heard %v", heard)
	}
}

// Transactions holding every connection of the pool run queries never
// seen before without waiting for another connection: preparing one on
// the pool from inside them would wait for ever.
func TestTransactionsFillingThePool(t *testing.T) {
	for name, open := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			if name == "sqlite" {
				t.Skip("SQLite transactions take the write lock at BEGIN, one at a time")
			}
			db := open(t)
			kv(t, db)
			n := db.Stats().MaxOpenConnections
			// Bounds the test should it hang, not its speed.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var began, wg sync.WaitGroup
			began.Add(n)
			errs := make(chan error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					errs <- db.Tx(ctx, func(tx *Tx) error {
						began.Done()
						began.Wait()
						var v int
						return tx.QueryRowContext(ctx, fmt.Sprintf(`SELECT COUNT(*) + %d FROM kv`, i)).Scan(&v)
					})
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// A transaction's first run meets many queries never seen before; they are
// prepared on the pool one after the other, so a freshly opened PostgreSQL
// tenant does not open a connection per query (a server process each).
func TestNewQueriesOfATransactionPrepareOnOneConnection(t *testing.T) {
	for name, open := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			kv(t, db)
			ctx := context.Background()
			const queries = 12
			err := db.Tx(ctx, func(tx *Tx) error {
				for i := range queries {
					if _, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO kv (k, v) VALUES (%d, 'v')`, i)); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			writes := db.writeStmts
			if writes == nil {
				writes = db.stmts
			}
			writes.background.Wait()
			if n := writes.len(); n < queries {
				t.Errorf("%d statements kept after the transaction, want at least %d", n, queries)
			}
			pool, _ := db.writePool()
			// The transaction's connection and the one that prepared.
			if open := pool.Stats().OpenConnections; open > 2 {
				t.Errorf("%d connections open, want at most 2", open)
			}
		})
	}
}
