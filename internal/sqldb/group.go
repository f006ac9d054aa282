package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// Group commit, on SQLite. Committing costs a write transaction more than
// its statements do: SQLite appends every page the transaction changed to
// the WAL, and concurrent transactions change the same pages (the end of a
// table, its indexes, a session's row). So the transactions that queue for
// the writer while it is busy run together, one after the other, in a
// single database transaction, each inside a savepoint of its own: one
// that fails is rolled back to its savepoint alone, the others commit, and
// the batch pays for one commit.
//
// No goroutine waits idle for a batch: a caller whose transaction is
// queued either sees it done or takes the lead, runs what is queued and
// hands the lead on. Each batch runs serially, so a transaction sees the
// writes of those before it in the batch as it would had they committed
// first.

// maxBatch bounds the transactions of one batch, and with it how long the
// first of them waits for the last.
const maxBatch = 64

// commits is the queue of a DB's transactions waiting for the writer.
type commits struct {
	// lead is held (one value in a channel of one) by the caller running
	// a batch.
	lead chan struct{}

	mu      sync.Mutex
	queue   []*member
	batches int // batches run, for tests
}

func newCommits() *commits { return &commits{lead: make(chan struct{}, 1)} }

// member is one transaction of a batch.
type member struct {
	ctx context.Context
	fn  func(tx *Tx) error
	// Set by the batch before done closes:
	tx       *Tx
	err      error
	panicked any
	done     chan struct{}
}

// grouped runs fn in the next batch and returns its transaction once the
// batch committed.
func (db *DB) grouped(ctx context.Context, fn func(tx *Tx) error) (*Tx, error) {
	m := &member{ctx: ctx, fn: fn, done: make(chan struct{})}
	c := db.commits
	c.mu.Lock()
	c.queue = append(c.queue, m)
	c.mu.Unlock()
	for {
		select {
		case <-m.done:
			if m.panicked != nil {
				panic(m.panicked)
			}
			return m.tx, m.err
		case c.lead <- struct{}{}:
			db.runBatch(c.take())
			<-c.lead
		}
	}
}

// take removes the next batch from the queue.
func (c *commits) take() []*member {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := min(len(c.queue), maxBatch)
	batch := c.queue[:n:n]
	c.queue = c.queue[n:]
	if n > 0 {
		c.batches++
	}
	return batch
}

// requeue puts members that have not run back at the head of the queue.
func (c *commits) requeue(ms []*member) {
	c.mu.Lock()
	c.queue = append(ms[:len(ms):len(ms)], c.queue...)
	c.mu.Unlock()
}

// runBatch runs the members in one transaction and tells each its
// outcome.
func (db *DB) runBatch(batch []*member) {
	if len(batch) == 0 {
		return
	}
	// The batch outlives any one caller's request: a caller that goes
	// away has its own transaction rolled back, not the others'.
	stx, err := db.writes.BeginTx(context.Background(), nil)
	if err != nil {
		for _, m := range batch {
			m.err = fmt.Errorf("sqldb: begin: %w", err)
			close(m.done)
		}
		return
	}
	var committing []*member
	for i, m := range batch {
		if m.err = m.ctx.Err(); m.err != nil {
			close(m.done)
			continue
		}
		lost := db.runMember(stx, m)
		if lost != nil {
			// SQLite rolled the whole transaction back (an I/O error,
			// say): what ran before is gone; what did not run yet goes
			// to the next batch.
			stx.Rollback()
			for _, done := range committing {
				done.err, done.tx = fmt.Errorf("sqldb: transaction lost: %w", lost), nil
				close(done.done)
			}
			if m.err == nil && m.panicked == nil {
				m.err = fmt.Errorf("sqldb: transaction lost: %w", lost)
			}
			m.tx = nil
			close(m.done)
			db.commits.requeue(batch[i+1:])
			return
		}
		if m.err != nil || m.panicked != nil {
			close(m.done)
			continue
		}
		committing = append(committing, m)
	}
	if err := stx.Commit(); err != nil {
		for _, m := range committing {
			m.err, m.tx = fmt.Errorf("sqldb: commit: %w", err), nil
		}
	}
	for _, m := range committing {
		close(m.done)
	}
}

// runMember runs one member's fn inside a savepoint of the batch's
// transaction, and rolls back to it when fn fails, panics or its caller
// went away meanwhile. It returns an error when the transaction itself is
// gone.
func (db *DB) runMember(stx *sql.Tx, m *member) error {
	ctx := context.Background()
	tx := &Tx{Tx: stx, db: db, stmts: db.writeStmts, Dialect: db.Dialect, signal: db.Signal, batched: true}
	// The savepoint statements are kept prepared like any other.
	if _, err := tx.ExecContext(ctx, "SAVEPOINT member"); err != nil {
		return err
	}
	func() {
		defer func() { m.panicked = recover() }()
		m.err = m.fn(tx)
	}()
	if m.err == nil && m.panicked == nil {
		if m.err = m.ctx.Err(); m.err == nil {
			m.tx = tx
		}
	}
	if m.tx == nil {
		if _, err := tx.ExecContext(ctx, "ROLLBACK TO member"); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, "RELEASE member")
	return err
}
