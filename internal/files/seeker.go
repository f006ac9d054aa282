package files

import (
	"context"
	"errors"
	"io"

	"github.com/lms-platform/lms/internal/blob"
)

// rangeSeeker makes an object seekable for http.ServeContent when its
// store's reader is not (s3): seeking only moves the position, and a read
// at a new position opens a ranged read there. The first read from the
// start uses the reader Get already opened, so a whole-file answer costs
// one request to the store.
type rangeSeeker struct {
	ctx   context.Context
	store blob.Store
	key   string
	size  int64
	pos   int64
	// body reads from bodyPos.
	body    io.ReadCloser
	bodyPos int64
}

func newRangeSeeker(ctx context.Context, store blob.Store, key string, size int64, first io.ReadCloser) *rangeSeeker {
	return &rangeSeeker{ctx: ctx, store: store, key: key, size: size, body: first}
}

func (r *rangeSeeker) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.pos
	case io.SeekEnd:
		offset += r.size
	default:
		return r.pos, errors.New("files: invalid whence")
	}
	if offset < 0 {
		return r.pos, errors.New("files: negative position")
	}
	r.pos = offset
	return offset, nil
}

func (r *rangeSeeker) Read(p []byte) (int, error) {
	if r.pos >= r.size {
		return 0, io.EOF
	}
	if r.body == nil || r.bodyPos != r.pos {
		if r.body != nil {
			r.body.Close()
			r.body = nil
		}
		body, err := blob.GetRange(r.ctx, r.store, r.key, r.pos, r.size-r.pos)
		if err != nil {
			return 0, err
		}
		r.body, r.bodyPos = body, r.pos
	}
	n, err := r.body.Read(p)
	r.pos += int64(n)
	r.bodyPos = r.pos
	return n, err
}

func (r *rangeSeeker) Close() error {
	if r.body == nil {
		return nil
	}
	return r.body.Close()
}
