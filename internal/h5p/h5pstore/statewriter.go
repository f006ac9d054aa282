package h5pstore

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// State saves are the player's most frequent write: every open player
// saves its learner's state every few seconds. Saves and deletes that
// arrive while a write is running are committed together by the next one
// (group commit), so the database's cost per transaction (locks, log
// writes, a round trip) is shared by all of them. An idle tenant writes
// each state at once, as before.

// maxStateBatch bounds the states one transaction writes.
const maxStateBatch = 64

// stateOp is a save, or a delete when delete is set.
type stateOp struct {
	data   UserData
	delete bool
}

func (o stateOp) key() UserDataKey {
	d := o.data
	return UserDataKey{ContentID: d.ContentID, UserID: d.UserID, DataType: d.DataType, SubContentID: d.SubContentID, ContextID: d.ContextID}
}

type stateJob struct {
	op   stateOp
	err  error
	done chan struct{}
}

// stateWriter queues a tenant's state writes; busy is set while a writer
// is committing them.
type stateWriter struct {
	mu      sync.Mutex
	pending []*stateJob
	busy    bool
}

type stateWriterKey struct{}

// writeState queues op and waits for its commit. The caller that finds no
// writer running commits the queue itself; writes queued meanwhile are
// committed by a goroutine it starts, so no caller waits for others' work
// beyond one transaction.
func (s *Store) writeState(ctx context.Context, t *platform.Tenant, op stateOp) error {
	w := t.Local(stateWriterKey{}, func() any { return &stateWriter{} }).(*stateWriter)
	job := &stateJob{op: op, done: make(chan struct{})}
	w.mu.Lock()
	w.pending = append(w.pending, job)
	lead := !w.busy
	w.busy = true
	w.mu.Unlock()
	if lead {
		s.commitQueued(background(ctx), t, w)
	}
	select {
	case <-job.done:
		return job.err
	case <-ctx.Done():
		// The write still happens; only the caller stops waiting.
		return ctx.Err()
	}
}

// commitQueued commits one batch of the queue, then leaves the rest to a
// new goroutine, or marks the writer idle.
func (s *Store) commitQueued(ctx context.Context, t *platform.Tenant, w *stateWriter) {
	w.mu.Lock()
	n := min(len(w.pending), maxStateBatch)
	batch := w.pending[:n:n]
	w.pending = w.pending[n:]
	w.mu.Unlock()

	s.commitStates(ctx, t, batch)

	w.mu.Lock()
	if len(w.pending) == 0 {
		w.busy = false
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	go s.commitQueued(ctx, t, w)
}

// commitStates writes a batch in one transaction: the last operation on
// each key wins, as if they had run one by one. When the transaction fails
// (a state of a content that does not exist), each operation runs alone so
// that every caller gets its own answer.
func (s *Store) commitStates(ctx context.Context, t *platform.Tenant, batch []*stateJob) {
	defer func() {
		for _, j := range batch {
			close(j.done)
		}
	}()
	last := map[UserDataKey]stateOp{}
	var order []UserDataKey
	for _, j := range batch {
		k := j.op.key()
		if _, seen := last[k]; !seen {
			order = append(order, k)
		}
		last[k] = j.op
	}
	var saves, deletes []stateOp
	for _, k := range order {
		if op := last[k]; op.delete {
			deletes = append(deletes, op)
		} else {
			saves = append(saves, op)
		}
	}
	var err error
	if len(batch) == 1 {
		err = execStates(ctx, t.DB, saves, deletes)
	} else {
		err = t.DB.Tx(ctx, func(tx *sqldb.Tx) error { return execStates(ctx, tx, saves, deletes) })
	}
	if err == nil {
		return
	}
	if len(batch) == 1 {
		batch[0].err = stateError(err)
		return
	}
	for _, j := range batch {
		one := []stateOp{j.op}
		if j.op.delete {
			j.err = stateError(execStates(ctx, t.DB, nil, one))
		} else {
			j.err = stateError(execStates(ctx, t.DB, one, nil))
		}
	}
}

func stateError(err error) error {
	if sqldb.IsForeignKeyViolation(err) {
		return errContentNotFound
	}
	if err != nil {
		return fmt.Errorf("h5pstore: write user data: %w", err)
	}
	return nil
}

const stateKeyColumns = "content_id, user_id, data_type, sub_content_id, context_id"

// execStates upserts saves with one statement and deletes deletes with
// another; each key appears once.
func execStates(ctx context.Context, q sqldb.Querier, saves, deletes []stateOp) error {
	if len(saves) > 0 {
		var b strings.Builder
		b.WriteString(`INSERT INTO h5p_content_user_data (` + stateKeyColumns + `,
			user_state, preload, invalidate, updated_at) VALUES `)
		args := make([]any, 0, len(saves)*9)
		for i, op := range saves {
			d := op.data
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d, $%d)",
				len(args)+1, len(args)+2, len(args)+3, len(args)+4, len(args)+5, len(args)+6, len(args)+7, len(args)+8, len(args)+9)
			args = append(args, d.ContentID, d.UserID, d.DataType, d.SubContentID, d.ContextID, d.State, d.Preload, d.Invalidate, d.UpdatedAt)
		}
		b.WriteString(` ON CONFLICT (` + stateKeyColumns + `) DO UPDATE SET
			user_state = excluded.user_state, preload = excluded.preload, invalidate = excluded.invalidate,
			updated_at = excluded.updated_at`)
		if _, err := q.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	for _, op := range deletes {
		d := op.data
		if _, err := q.ExecContext(ctx, `DELETE FROM h5p_content_user_data
			WHERE content_id = $1 AND user_id = $2 AND data_type = $3 AND sub_content_id = $4 AND context_id = $5`,
			d.ContentID, d.UserID, d.DataType, d.SubContentID, d.ContextID); err != nil {
			return err
		}
	}
	return nil
}
