package blob

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/minio/minio-go/v7"
)

// RangeGetter is implemented by stores that read part of an object
// without reading what comes before it (s3, and sub stores over one).
type RangeGetter interface {
	GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error)
}

// GetRange opens length bytes of the object at key from offset, for HTTP
// range requests. A store without RangeGetter is read from the start: its
// reader is seeked when it can be (fs), else offset bytes are skipped.
// The caller closes the reader; ErrNotFound if the object is absent.
func GetRange(ctx context.Context, s Store, key string, offset, length int64) (io.ReadCloser, error) {
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("blob: get range %q: negative offset or length", key)
	}
	if r, ok := s.(RangeGetter); ok {
		return r.GetRange(ctx, key, offset, length)
	}
	rc, _, err := s.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if seeker, ok := rc.(io.Seeker); ok {
		_, err = seeker.Seek(offset, io.SeekStart)
	} else {
		_, err = io.CopyN(io.Discard, rc, offset)
		if err == io.EOF {
			err = nil
		}
	}
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("blob: get range %q: %w", key, err)
	}
	return limitedReadCloser{io.LimitReader(rc, length), rc}, nil
}

type limitedReadCloser struct {
	io.Reader
	io.Closer
}

// GetRange asks S3 for the bytes only.
func (s *S3) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	if err := ValidateKey(key); err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, fmt.Errorf("blob: s3 get range %q: negative offset or length", key)
	}
	if length == 0 {
		if _, err := s.Stat(ctx, key); err != nil {
			return nil, err
		}
		return io.NopCloser(strings.NewReader("")), nil
	}
	opts := minio.GetObjectOptions{}
	if err := opts.SetRange(offset, offset+length-1); err != nil {
		return nil, fmt.Errorf("blob: s3 get range %q: %w", key, err)
	}
	body, _, _, err := s.core.GetObject(ctx, s.bucket, s.prefix+key, opts)
	if err != nil {
		return nil, s.objectFail("get range", key, err)
	}
	return body, nil
}

// GetRange reads a range through the parent store.
func (b *sub) GetRange(ctx context.Context, key string, offset, length int64) (io.ReadCloser, error) {
	k, err := b.key(key)
	if err != nil {
		return nil, err
	}
	return GetRange(ctx, b.s, k, offset, length)
}
