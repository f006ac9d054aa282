// Package blob stores files: a local directory (the embedded default) or an
// S3-compatible bucket. Each tenant gets its own Store, rooted at its prefix.
package blob

import (
	"context"
	"errors"
	"io"
	"time"
)

// ErrNotFound is returned for a key that holds no object.
var ErrNotFound = errors.New("blob: not found")

// Info describes a stored object.
type Info struct {
	Key         string
	Size        int64
	ContentType string
	ModTime     time.Time
}

// Store is a flat namespace of objects addressed by slash-separated keys.
// Keys are relative ("avatars/12/a.png"); a key with "..", a leading slash
// or an empty segment is refused (see ValidateKey).
type Store interface {
	// Put stores r under key, replacing any object there. size may be -1
	// when unknown. The object becomes visible whole or not at all.
	Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error
	// Get opens the object; the caller closes it. ErrNotFound if absent.
	Get(ctx context.Context, key string) (io.ReadCloser, Info, error)
	// Stat describes the object; ErrNotFound if absent.
	Stat(ctx context.Context, key string) (Info, error)
	// Delete removes the object; deleting an absent key is not an error.
	Delete(ctx context.Context, key string) error
	// List calls fn for each object whose key starts with prefix, in key
	// (byte) order, and stops at the first error fn returns. Listings carry
	// no content type: Info.ContentType is empty (use Stat).
	List(ctx context.Context, prefix string, fn func(Info) error) error
	// DeletePrefix removes every object whose key starts with prefix.
	DeletePrefix(ctx context.Context, prefix string) error
	// Ping checks that the store is reachable.
	Ping(ctx context.Context) error
}
