package blob

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Open returns the store a location names: "" for the file store under
// dataDir/files, or an s3:// URL (see ParseS3URL) whose credentials are read
// from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func Open(ctx context.Context, location, dataDir string) (Store, error) {
	if location == "" {
		if dataDir == "" {
			return nil, errors.New("blob: open: no location and no data directory")
		}
		return NewFS(filepath.Join(dataDir, "files"))
	}
	if !strings.HasPrefix(location, "s3://") {
		// The location is not repeated: a mistyped URL may hold secrets.
		return nil, errors.New("blob: open: location must be empty (local files) or an s3:// URL")
	}
	cfg, err := ParseS3URL(location, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
	if err != nil {
		return nil, err
	}
	return NewS3(ctx, cfg)
}

// Sub returns a store holding the keys of s below prefix, for example
// "tenants/7/", with the prefix removed: keys passed in are relative to it
// and List reports them so. A missing trailing slash is added. An invalid
// prefix gives a store whose every call fails with ErrInvalidKey.
func Sub(s Store, prefix string) Store {
	p, err := dirPrefix(prefix)
	if err == nil && p == "" {
		return s
	}
	return &sub{s: s, prefix: p, err: err}
}

type sub struct {
	s      Store
	prefix string
	err    error // from an invalid prefix
}

// key checks the key on its own before joining it, so that errors name the
// key the caller gave.
func (b *sub) key(key string) (string, error) {
	if b.err != nil {
		return "", b.err
	}
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return b.prefix + key, nil
}

func (b *sub) Put(ctx context.Context, key string, r io.Reader, size int64, contentType string) error {
	k, err := b.key(key)
	if err != nil {
		return err
	}
	return b.s.Put(ctx, k, r, size, contentType)
}

func (b *sub) Get(ctx context.Context, key string) (io.ReadCloser, Info, error) {
	k, err := b.key(key)
	if err != nil {
		return nil, Info{}, err
	}
	rc, info, err := b.s.Get(ctx, k)
	if err != nil {
		return nil, Info{}, err
	}
	info.Key = key
	return rc, info, nil
}

func (b *sub) Stat(ctx context.Context, key string) (Info, error) {
	k, err := b.key(key)
	if err != nil {
		return Info{}, err
	}
	info, err := b.s.Stat(ctx, k)
	if err != nil {
		return Info{}, err
	}
	info.Key = key
	return info, nil
}

func (b *sub) Delete(ctx context.Context, key string) error {
	k, err := b.key(key)
	if err != nil {
		return err
	}
	return b.s.Delete(ctx, k)
}

func (b *sub) List(ctx context.Context, prefix string, fn func(Info) error) error {
	if b.err != nil {
		return b.err
	}
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	return b.s.List(ctx, b.prefix+prefix, func(info Info) error {
		info.Key = strings.TrimPrefix(info.Key, b.prefix)
		return fn(info)
	})
}

func (b *sub) DeletePrefix(ctx context.Context, prefix string) error {
	if b.err != nil {
		return b.err
	}
	if err := validatePrefix(prefix); err != nil {
		return err
	}
	return b.s.DeletePrefix(ctx, b.prefix+prefix)
}

func (b *sub) Ping(ctx context.Context) error {
	if b.err != nil {
		return b.err
	}
	return b.s.Ping(ctx)
}
