package blob

import (
	"context"
	"errors"
	"sync"
)

// A batch lets a caller that writes many objects at once (an H5P package:
// hundreds of small files) make them durable together instead of one at
// a time: under a batch's context the file store skips the sync of each
// object, and Flush syncs the file systems written to once. Until Flush
// returns, the objects are visible but may not survive a crash, so callers
// flush before recording anything that names them. Stores that are
// durable on return (S3) ignore batches.

type batchKey struct{}

// flusher is a store that can defer syncing to a batch.
type flusher interface {
	flush() error
}

// Batch collects the stores written under its context.
type Batch struct {
	mu    sync.Mutex
	dirty map[flusher]struct{}
}

// WithBatch returns a context under which writes join a new batch.
func WithBatch(ctx context.Context) (context.Context, *Batch) {
	b := &Batch{dirty: map[flusher]struct{}{}}
	return context.WithValue(ctx, batchKey{}, b), b
}

func batchFrom(ctx context.Context) *Batch {
	b, _ := ctx.Value(batchKey{}).(*Batch)
	return b
}

func (b *Batch) add(f flusher) {
	b.mu.Lock()
	b.dirty[f] = struct{}{}
	b.mu.Unlock()
}

// Flush makes every object written under the batch durable.
func (b *Batch) Flush() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	var errs []error
	for f := range b.dirty {
		if err := f.flush(); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(b.dirty, f)
	}
	return errors.Join(errs...)
}
