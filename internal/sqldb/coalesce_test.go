package sqldb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// kvReads returns a Coalescer reading kv's values for keys in one query.
// before, when set, runs at the start of each query.
func kvReads(db *DB, before func(keys []int)) *Coalescer[int, string] {
	return NewCoalescer(func(ctx context.Context, keys []int) (map[int]string, error) {
		if before != nil {
			before(keys)
		}
		list, _ := json.Marshal(keys)
		query := `SELECT k, v FROM kv WHERE k IN (SELECT value FROM json_each($1))`
		if db.Dialect == Postgres {
			query = `SELECT k, v FROM kv WHERE k IN (SELECT jsonb_array_elements_text($1::jsonb)::int)`
		}
		rows, err := db.QueryContext(ctx, query, string(list))
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := map[int]string{}
		for rows.Next() {
			var k int
			var v string
			if err := rows.Scan(&k, &v); err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, rows.Err()
	})
}

// readWant reads key k through c, an error unless it reads want.
func readWant(ctx context.Context, c *Coalescer[int, string], k int, want string) error {
	v, err := c.Get(ctx, k)
	if err == nil && v != want {
		err = fmt.Errorf("key %d: read %q, want %q", k, v, want)
	}
	return err
}

// TestCoalescedReadsShareAQuery holds a first read's query while 60 more
// reads of 30 keys arrive: they all go in the one next query, each gets
// its own key's value, and a key no row holds is an error for its caller
// alone.
func TestCoalescedReadsShareAQuery(t *testing.T) {
	ctx := context.Background()
	for name, open := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			kv(t, db)
			for k := range 30 {
				if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, $2)`, k, fmt.Sprint("v", k)); err != nil {
					t.Fatal(err)
				}
			}
			held, release := make(chan struct{}), make(chan struct{})
			var mu sync.Mutex
			var batches [][]int
			c := kvReads(db, func(keys []int) {
				mu.Lock()
				batches = append(batches, keys)
				first := len(batches) == 1
				mu.Unlock()
				if first {
					close(held)
					<-release
				}
			})
			first := make(chan error, 1)
			go func() { first <- readWant(ctx, c, 0, "v0") }()
			<-held

			errs := make(chan error, 61)
			for i := range 60 {
				go func() { errs <- readWant(ctx, c, i%30, fmt.Sprint("v", i%30)) }()
			}
			go func() {
				_, err := c.Get(ctx, 99)
				if err == nil {
					err = errors.New("a key without a row gave a value")
				} else {
					err = nil
				}
				errs <- err
			}()
			// Every read is queued before the held query ends.
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
				c.mu.Lock()
				n := 0
				if c.next != nil {
					n = len(c.next.keys)
				}
				c.mu.Unlock()
				if n == 31 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d keys queued", n)
				}
			}
			close(release)
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			for range 61 {
				if err := <-errs; err != nil {
					t.Error(err)
				}
			}
			if len(batches) != 2 || len(batches[1]) != 31 {
				t.Fatalf("queries of %v keys, want [0] then 31 distinct keys", batches)
			}
			if c.queries != 2 {
				t.Fatalf("%d queries", c.queries)
			}
		})
	}
}

// TestCoalescedReadSeesEarlierCommits writes a key again and again while
// other readers keep queries in flight: each read after a write returns
// that write, never the value of a query that started before it.
func TestCoalescedReadSeesEarlierCommits(t *testing.T) {
	ctx := context.Background()
	for name, open := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			kv(t, db)
			for k := range 2 {
				if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES ($1, '0')`, k); err != nil {
					t.Fatal(err)
				}
			}
			c := kvReads(db, nil)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			defer func() {
				close(stop)
				wg.Wait()
			}()
			for range 8 {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := c.Get(ctx, 1); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			for i := 1; i <= 300; i++ {
				if _, err := db.ExecContext(ctx, `UPDATE kv SET v = $1 WHERE k = 0`, fmt.Sprint(i)); err != nil {
					t.Fatal(err)
				}
				if err := readWant(ctx, c, 0, fmt.Sprint(i)); err != nil {
					t.Fatalf("after writing %d: %v", i, err)
				}
			}
		})
	}
}

// TestCoalescedReadCallerGoesAway: a caller whose context ends while it
// waits for its batch leaves at once; one whose context ends while it runs
// a query does not cut the query short, which others may be waiting for.
func TestCoalescedReadCallerGoesAway(t *testing.T) {
	ctx := context.Background()
	db := dialects(t)["sqlite"](t)
	kv(t, db)
	if _, err := db.ExecContext(ctx, `INSERT INTO kv (k, v) VALUES (1, 'one')`); err != nil {
		t.Fatal(err)
	}
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c := kvReads(db, func([]int) { once.Do(func() { close(held); <-release }) })
	running, stopRunning := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() { ran <- readWant(running, c, 1, "one") }()
	<-held

	waiting, stopWaiting := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, err := c.Get(waiting, 1)
		waited <- err
	}()
	for queued := false; !queued; time.Sleep(time.Millisecond) {
		c.mu.Lock()
		queued = c.next != nil
		c.mu.Unlock()
	}
	stopWaiting()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("the waiting caller that left got %v", err)
	}

	stopRunning()
	close(release)
	if err := <-ran; err != nil {
		t.Fatalf("the query of a caller that left while running it: %v", err)
	}
	if err := readWant(ctx, c, 1, "one"); err != nil {
		t.Fatalf("a read after both left: %v", err)
	}
}
