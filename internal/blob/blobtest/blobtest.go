// Package blobtest holds the one test suite every blob.Store must pass, and
// the backends it runs on: fs always, s3 when LMS_TEST_S3_URL is set.
package blobtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	mathrand "math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/blob"
)

// Backends returns an opener per backend. Each opener gives the calling test
// a fresh, empty store and removes what is left in it when the test ends.
// The s3 backend skips without LMS_TEST_S3_URL, and fails under CI=true.
func Backends(t *testing.T) map[string]func(t *testing.T) blob.Store {
	t.Helper()
	return map[string]func(t *testing.T) blob.Store{
		"fs": openFS,
		"s3": openS3,
	}
}

func openFS(t *testing.T) blob.Store {
	t.Helper()
	s, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// openS3 gives each test its own random prefix in the shared test bucket,
// so tests and concurrent runs never see each other's objects.
func openS3(t *testing.T) blob.Store {
	t.Helper()
	raw := os.Getenv("LMS_TEST_S3_URL")
	if raw == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("LMS_TEST_S3_URL is not set, and CI=true requires the s3 backend (start one with .ci/start-s3)")
		}
		t.Skip("LMS_TEST_S3_URL is not set; skipping the s3 backend")
	}
	cfg, err := blob.ParseS3URL(raw, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Prefix += "blobtest/" + rand.Text() + "/"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := blob.NewS3(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// t.Context is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.DeletePrefix(ctx, ""); err != nil {
			t.Errorf("cleaning up %s: %v", cfg.Prefix, err)
		}
	})
	return s
}

// Conformance checks that s behaves as a blob.Store. s must start empty;
// every subtest removes its objects, so s ends empty again.
func Conformance(t *testing.T, s blob.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, blob.Store)
	}{
		{"PutGetStat", testPutGetStat},
		{"EmptyObjectDefaultType", testEmptyObject},
		{"Overwrite", testOverwrite},
		{"NotFound", testNotFound},
		{"Delete", testDelete},
		{"ListOrder", testListOrder},
		{"ListStopsOnError", testListStops},
		{"DeletePrefix", testDeletePrefix},
		{"BadKeys", testBadKeys},
		{"BadContentType", testBadContentType},
		{"LargeUnknownSize", func(t *testing.T, s blob.Store) { testLarge(t, s, false) }},
		{"LargeKnownSize", func(t *testing.T, s blob.Store) { testLarge(t, s, true) }},
		{"ShortReader", testShortReader},
		{"FailingReader", testFailingReader},
		{"CancelledContext", testCancelled},
		{"ConcurrentPuts", testConcurrentPuts},
		{"Sub", testSub},
		{"GetRange", testGetRange},
		{"Ping", func(t *testing.T, s blob.Store) {
			if err := s.Ping(t.Context()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() {
				if err := s.DeletePrefix(context.Background(), ""); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

func testPutGetStat(t *testing.T, s blob.Store) {
	const key, data, ct = "put/a/b.txt", "hello, blob", "text/plain; charset=utf-8"
	before := time.Now().Add(-time.Hour) // generous: the server's clock may differ
	put(t, s, key, data, ct)
	got, info := get(t, s, key)
	if got != data {
		t.Errorf("Get data = %q, want %q", got, data)
	}
	checkInfo(t, "Get", info, key, int64(len(data)), ct)
	if info.ModTime.Before(before) {
		t.Errorf("Get ModTime = %v, want a recent time", info.ModTime)
	}
	st, err := s.Stat(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	checkInfo(t, "Stat", st, key, int64(len(data)), ct)
}

func testEmptyObject(t *testing.T, s blob.Store) {
	put(t, s, "empty", "", "")
	got, info := get(t, s, "empty")
	if got != "" {
		t.Errorf("Get data = %q, want empty", got)
	}
	checkInfo(t, "Get", info, "empty", 0, blob.DefaultContentType)
}

func testOverwrite(t *testing.T, s blob.Store) {
	put(t, s, "ow", "the first, longer version", "text/plain")
	put(t, s, "ow", "{}", "application/json")
	got, info := get(t, s, "ow")
	if got != "{}" {
		t.Errorf("Get data = %q, want the second version", got)
	}
	checkInfo(t, "Get", info, "ow", 2, "application/json")
	if keys := list(t, s, ""); !slices.Equal(keys, []string{"ow"}) {
		t.Errorf("List = %q, want one object", keys)
	}
}

func testNotFound(t *testing.T, s blob.Store) {
	put(t, s, "nf/dir/child", "x", "")
	// "nf/dir" is only a prefix, and "nf/dir/child/x" is below an object.
	for _, key := range []string{"missing", "nf/dir", "nf/dir/child/x", "nf/dir/chil"} {
		if _, _, err := s.Get(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Get(%q) error = %v, want ErrNotFound", key, err)
		}
		if _, err := s.Stat(t.Context(), key); !errors.Is(err, blob.ErrNotFound) {
			t.Errorf("Stat(%q) error = %v, want ErrNotFound", key, err)
		}
	}
}

func testDelete(t *testing.T, s blob.Store) {
	ctx := t.Context()
	put(t, s, "del/a/b/c", "x", "")
	put(t, s, "del/keep", "y", "")
	for range 2 { // the second time the key is absent, which is no error
		if err := s.Delete(ctx, "del/a/b/c"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if err := s.Delete(ctx, "never/was"); err != nil {
		t.Fatalf("Delete of a key never stored: %v", err)
	}
	if _, err := s.Stat(ctx, "del/a/b/c"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat after Delete: error = %v, want ErrNotFound", err)
	}
	// Deleting a prefix-only key must not remove what lies below it.
	put(t, s, "del/a/b/c", "x", "")
	if err := s.Delete(ctx, "del/a"); err != nil {
		t.Fatalf("Delete of a prefix: %v", err)
	}
	if keys := list(t, s, ""); !slices.Equal(keys, []string{"del/a/b/c", "del/keep"}) {
		t.Errorf("List = %q", keys)
	}
	// Once "del/a/b/c" is gone, "del/a" may name an object itself.
	if err := s.Delete(ctx, "del/a/b/c"); err != nil {
		t.Fatal(err)
	}
	put(t, s, "del/a", "z", "")
	if keys := list(t, s, ""); !slices.Equal(keys, []string{"del/a", "del/keep"}) {
		t.Errorf("List = %q", keys)
	}
}

// orderKeys exercise byte order across "directories": '-' < '/' < '0'.
func orderKeys() []string {
	return []string{"l/a", "l/a0", "l/b-c", "l/b/1", "l/b/2", "l/c", "l0", "m"}
}

func putOrderKeys(t *testing.T, s blob.Store) {
	// Put in reverse so that no backend passes by keeping insertion order.
	for _, k := range slices.Backward(orderKeys()) {
		put(t, s, k, "data of "+k, "text/plain")
	}
}

func testListOrder(t *testing.T, s blob.Store) {
	putOrderKeys(t, s)
	all := orderKeys()
	cases := []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"l", all[:7]},
		{"l/", all[:6]},
		{"l/b", []string{"l/b-c", "l/b/1", "l/b/2"}},
		{"l/b/", []string{"l/b/1", "l/b/2"}},
		{"l/a", []string{"l/a", "l/a0"}},
		{"l/a0", []string{"l/a0"}},
		{"none/", nil},
		{"l/d", nil},
	}
	for _, c := range cases {
		var got []string
		err := s.List(t.Context(), c.prefix, func(i blob.Info) error {
			got = append(got, i.Key)
			if want := int64(len("data of " + i.Key)); i.Size != want {
				t.Errorf("List(%q): %s size = %d, want %d", c.prefix, i.Key, i.Size, want)
			}
			if i.ModTime.IsZero() {
				t.Errorf("List(%q): %s has no ModTime", c.prefix, i.Key)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("List(%q): %v", c.prefix, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("List(%q) = %q, want %q", c.prefix, got, c.want)
		}
	}
}

func testListStops(t *testing.T, s blob.Store) {
	putOrderKeys(t, s)
	stop := errors.New("stop")
	calls := 0
	err := s.List(t.Context(), "", func(blob.Info) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("List returned %v after %d calls, want fn's error after 1", err, calls)
	}
}

func testDeletePrefix(t *testing.T, s blob.Store) {
	ctx := t.Context()
	putOrderKeys(t, s)
	if err := s.DeletePrefix(ctx, "l/b"); err != nil {
		t.Fatal(err)
	}
	if got, want := list(t, s, ""), []string{"l/a", "l/a0", "l/c", "l0", "m"}; !slices.Equal(got, want) {
		t.Errorf("after DeletePrefix(l/b): %q, want %q", got, want)
	}
	if err := s.DeletePrefix(ctx, "none/"); err != nil {
		t.Errorf("DeletePrefix of nothing: %v", err)
	}
	if err := s.DeletePrefix(ctx, "l/"); err != nil {
		t.Fatal(err)
	}
	if got, want := list(t, s, ""), []string{"l0", "m"}; !slices.Equal(got, want) {
		t.Errorf("after DeletePrefix(l/): %q, want %q", got, want)
	}
}

// BadKeys returns keys every store refuses.
func BadKeys() []string {
	return []string{
		"", "/abs", "trailing/", "a//b", "..", "../up", "a/../b", "a/..", ".", "./a", "a/./b",
		`back\slash`, "nul\x00byte", "new\nline", "\xff\xfe", strings.Repeat("x", 256),
		strings.Repeat("abc/", 300),
	}
}

func testBadKeys(t *testing.T, s blob.Store) {
	ctx := t.Context()
	for _, key := range BadKeys() {
		check := func(op string, err error) {
			t.Helper()
			if !errors.Is(err, blob.ErrInvalidKey) {
				t.Errorf("%s(%q) error = %v, want ErrInvalidKey", op, key, err)
			}
		}
		check("Put", s.Put(ctx, key, strings.NewReader("x"), 1, ""))
		_, _, err := s.Get(ctx, key)
		check("Get", err)
		_, err = s.Stat(ctx, key)
		check("Stat", err)
		check("Delete", s.Delete(ctx, key))
	}
	for _, prefix := range []string{"/a", "../", "a/../", "a//", `a\b`, "a\x00"} {
		err := s.List(ctx, prefix, func(blob.Info) error { return nil })
		if !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("List(%q) error = %v, want ErrInvalidKey", prefix, err)
		}
		if err := s.DeletePrefix(ctx, prefix); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("DeletePrefix(%q) error = %v, want ErrInvalidKey", prefix, err)
		}
	}
	if keys := list(t, s, ""); len(keys) != 0 {
		t.Errorf("bad keys stored objects: %q", keys)
	}
}

func testBadContentType(t *testing.T, s blob.Store) {
	if err := s.Put(t.Context(), "ct", strings.NewReader("x"), 1, "text/plain\r\nX-Evil: 1"); err == nil {
		t.Error("Put accepted a content type with a line break")
	}
}

// largeSize is past the s3 store's 8 MiB part size, so an upload of unknown
// size takes two parts.
const largeSize = 8<<20 + 1234

func testLarge(t *testing.T, s blob.Store, knownSize bool) {
	size := int64(-1)
	if knownSize {
		size = largeSize
	}
	// onlyReader hides any WriterTo or Len, so the store has to stream.
	src := onlyReader{io.LimitReader(newNoise(1), largeSize)}
	if err := s.Put(t.Context(), "large/obj", src, size, "application/octet-stream"); err != nil {
		t.Fatal(err)
	}
	want := sha256.New()
	io.Copy(want, io.LimitReader(newNoise(1), largeSize))

	rc, info, err := s.Get(t.Context(), "large/obj")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got := sha256.New()
	n, err := io.Copy(got, rc)
	if err != nil {
		t.Fatal(err)
	}
	if n != largeSize || info.Size != largeSize || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Errorf("read %d bytes (Info.Size %d), want %d; content equal: %v",
			n, info.Size, largeSize, bytes.Equal(got.Sum(nil), want.Sum(nil)))
	}
}

func testShortReader(t *testing.T, s blob.Store) {
	err := s.Put(t.Context(), "short", strings.NewReader("12345"), 10, "")
	if err == nil {
		t.Error("Put of 5 bytes with size 10 succeeded")
	}
	if _, err := s.Stat(t.Context(), "short"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat after a short Put: error = %v, want ErrNotFound", err)
	}
}

func testFailingReader(t *testing.T, s blob.Store) {
	put(t, s, "fail", "old", "text/plain")
	for _, size := range []int64{-1, 2048} {
		r := io.MultiReader(strings.NewReader(strings.Repeat("n", 1024)), errReader{})
		if err := s.Put(t.Context(), "fail", r, size, "text/html"); err == nil {
			t.Errorf("Put with a failing reader (size %d) succeeded", size)
		}
		if got, info := get(t, s, "fail"); got != "old" || info.ContentType != "text/plain" {
			t.Errorf("after a failed Put: %q (%s), want the old object", got, info.ContentType)
		}
	}
}

func testCancelled(t *testing.T, s blob.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.Put(ctx, "cancelled", strings.NewReader("x"), 1, ""); err == nil {
		t.Error("Put with a cancelled context succeeded")
	}
	if _, err := s.Stat(t.Context(), "cancelled"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("Stat after a cancelled Put: error = %v, want ErrNotFound", err)
	}
}

// testConcurrentPuts overwrites one key from several writers while readers
// read it. Writer i stores bytes of value i with content type "x/i", so any
// mix of two versions, or of data and type, shows up.
func testConcurrentPuts(t *testing.T, s blob.Store) {
	const key, writers, size = "race", 6, 256 << 10
	ctx := t.Context()
	version := func(i int) ([]byte, string) {
		return bytes.Repeat([]byte{byte('a' + i)}, size), fmt.Sprintf("x/%c", 'a'+i)
	}
	data, ct := version(0)
	if err := s.Put(ctx, key, bytes.NewReader(data), size, ct); err != nil {
		t.Fatal(err)
	}
	check := func(got []byte, info blob.Info) {
		if len(got) != size || info.Size != size {
			t.Errorf("read %d bytes (Info.Size %d), want %d", len(got), info.Size, size)
			return
		}
		want, wantCT := version(int(got[0] - 'a'))
		if !bytes.Equal(got, want) || info.ContentType != wantCT {
			t.Errorf("object mixes versions: starts with %q, content type %q", got[0], info.ContentType)
		}
	}

	var writes, reads sync.WaitGroup
	done := make(chan struct{})
	for i := range writers {
		writes.Go(func() {
			for range 3 {
				data, ct := version(i)
				// Unknown size makes the s3 store stream as well.
				if err := s.Put(ctx, key, onlyReader{bytes.NewReader(data)}, -1, ct); err != nil {
					t.Errorf("writer %d: %v", i, err)
				}
			}
		})
	}
	for range 2 {
		reads.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				rc, info, err := s.Get(ctx, key)
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
				got, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Errorf("reader: %v", err)
					return
				}
				check(got, info)
			}
		})
	}
	writes.Wait()
	close(done)
	reads.Wait()

	rc, info, err := s.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	got, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	check(got, info)
	if keys := list(t, s, ""); !slices.Equal(keys, []string{key}) {
		t.Errorf("List = %q, want only %q", keys, key)
	}
}

// testSub checks that sub-stores are isolated from each other and that keys
// in them are relative.
func testSub(t *testing.T, s blob.Store) {
	ctx := t.Context()
	a, b := blob.Sub(s, "sub/a"), blob.Sub(s, "sub/b/")
	put(t, a, "x", "in a", "text/plain")
	put(t, b, "x", "in b", "text/plain")
	put(t, b, "dir/y", "y in b", "text/plain")

	if got, info := get(t, a, "x"); got != "in a" || info.Key != "x" {
		t.Errorf("a.Get(x) = %q key %q", got, info.Key)
	}
	if info, err := b.Stat(ctx, "dir/y"); err != nil || info.Key != "dir/y" {
		t.Errorf("b.Stat(dir/y) = %+v, %v", info, err)
	}
	if keys := list(t, a, ""); !slices.Equal(keys, []string{"x"}) {
		t.Errorf("a.List = %q", keys)
	}
	if keys := list(t, b, ""); !slices.Equal(keys, []string{"dir/y", "x"}) {
		t.Errorf("b.List = %q", keys)
	}
	if keys := list(t, s, ""); !slices.Equal(keys, []string{"sub/a/x", "sub/b/dir/y", "sub/b/x"}) {
		t.Errorf("parent List = %q", keys)
	}
	if _, err := a.Stat(ctx, "dir/y"); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("a sees b's key: %v", err)
	}
	// No key, however spelled, reaches out of a sub-store.
	for _, key := range []string{"../b/x", "/sub/b/x", ""} {
		if _, _, err := a.Get(ctx, key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("a.Get(%q) error = %v, want ErrInvalidKey", key, err)
		}
	}
	if err := a.Delete(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if got, _ := get(t, b, "x"); got != "in b" {
		t.Errorf("b.Get(x) after a.Delete(x) = %q", got)
	}
	put(t, a, "z", "z", "")
	if err := b.DeletePrefix(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if keys := list(t, s, ""); !slices.Equal(keys, []string{"sub/a/z"}) {
		t.Errorf("after b.DeletePrefix: parent List = %q", keys)
	}
	bad := blob.Sub(s, "../escape")
	if err := bad.Put(ctx, "x", strings.NewReader("x"), 1, ""); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("Put on Sub(../escape): error = %v, want ErrInvalidKey", err)
	}
}

// testGetRange reads parts of an object through blob.GetRange, which
// uses the store's own ranged reads when it has them.
func testGetRange(t *testing.T, s blob.Store) {
	put(t, s, "range/a.bin", "0123456789", "application/octet-stream")
	for _, c := range []struct {
		offset, length int64
		want           string
	}{{0, 10, "0123456789"}, {3, 4, "3456"}, {8, 2, "89"}, {9, 1, "9"}, {4, 0, ""}} {
		rc, err := blob.GetRange(t.Context(), s, "range/a.bin", c.offset, c.length)
		if err != nil {
			t.Fatalf("GetRange(%d, %d): %v", c.offset, c.length, err)
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || string(data) != c.want {
			t.Errorf("GetRange(%d, %d) = %q, %v; want %q", c.offset, c.length, data, err, c.want)
		}
	}
	if _, err := blob.GetRange(t.Context(), s, "range/missing", 0, 1); !errors.Is(err, blob.ErrNotFound) {
		t.Errorf("GetRange of a missing key: %v, want ErrNotFound", err)
	}
	if _, err := blob.GetRange(t.Context(), s, "../x", 0, 1); !errors.Is(err, blob.ErrInvalidKey) {
		t.Errorf("GetRange of a bad key: %v, want ErrInvalidKey", err)
	}
}

func put(t *testing.T, s blob.Store, key, data, ct string) {
	t.Helper()
	if err := s.Put(t.Context(), key, strings.NewReader(data), int64(len(data)), ct); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func get(t *testing.T, s blob.Store, key string) (string, blob.Info) {
	t.Helper()
	rc, info, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("Get(%q): reading: %v", key, err)
	}
	return string(data), info
}

func list(t *testing.T, s blob.Store, prefix string) []string {
	t.Helper()
	var keys []string
	err := s.List(t.Context(), prefix, func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	if err != nil {
		t.Fatalf("List(%q): %v", prefix, err)
	}
	return keys
}

func checkInfo(t *testing.T, op string, got blob.Info, key string, size int64, ct string) {
	t.Helper()
	if got.Key != key || got.Size != size || got.ContentType != ct || got.ModTime.IsZero() {
		t.Errorf("%s info = %+v, want key %q, size %d, content type %q and a ModTime", op, got, key, size, ct)
	}
}

type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("reader broke") }

// noise is a seeded stream of pseudo-random bytes, so the large test can
// regenerate its content to compare instead of holding it in memory.
type noise struct{ r *mathrand.ChaCha8 }

func newNoise(seed byte) noise {
	var s [32]byte
	s[0] = seed
	return noise{mathrand.NewChaCha8(s)}
}

func (n noise) Read(p []byte) (int, error) { return n.r.Read(p) }
