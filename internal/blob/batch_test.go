package blob_test

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/lms-platform/lms/internal/blob"
)

// TestBatchWrites checks that objects written under a batch are visible at
// once, whole, and that Flush makes them durable without error, also
// through a prefixed view and twice.
func TestBatchWrites(t *testing.T) {
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := blob.Sub(fs, "tenant-1/")
	ctx, batch := blob.WithBatch(context.Background())
	for i, s := range []blob.Store{fs, sub} {
		key := []string{"a/one.txt", "b/two.txt"}[i]
		if err := s.Put(ctx, key, bytes.NewReader([]byte("data "+key)), -1, "text/plain"); err != nil {
			t.Fatal(err)
		}
		rc, info, err := s.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if string(b) != "data "+key || info.ContentType != "text/plain" {
			t.Errorf("%s: %q %q", key, b, info.ContentType)
		}
	}
	if err := batch.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := batch.Flush(); err != nil {
		t.Fatal(err)
	}
	// Without a batch a Put syncs by itself.
	if err := fs.Put(context.Background(), "c.txt", bytes.NewReader([]byte("c")), 1, ""); err != nil {
		t.Fatal(err)
	}
}
