package blob_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/blob/blobtest"
)

func TestBlobStores(t *testing.T) {
	for name, open := range blobtest.Backends(t) {
		t.Run(name, func(t *testing.T) { blobtest.Conformance(t, open(t)) })
		// A tenant's store is a Sub of the shared one; it must behave the same.
		t.Run(name+"/sub", func(t *testing.T) { blobtest.Conformance(t, blob.Sub(open(t), "tenants/7")) })
	}
}

func TestValidateKey(t *testing.T) {
	good := []string{"a", "avatars/12/a.png", "a.b/c-d_e", "..a", "a..", ".hidden/x", "ünï/código",
		"with space", strings.Repeat("x", 255), strings.Repeat("abc/", 255) + "x"}
	for _, key := range good {
		if err := blob.ValidateKey(key); err != nil {
			t.Errorf("ValidateKey(%q) = %v, want nil", key, err)
		}
	}
	for _, key := range blobtest.BadKeys() {
		if err := blob.ValidateKey(key); !errors.Is(err, blob.ErrInvalidKey) {
			t.Errorf("ValidateKey(%q) = %v, want ErrInvalidKey", key, err)
		}
	}
}

func TestParseS3URL(t *testing.T) {
	const ak, sk = "AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG"
	good := []struct {
		raw  string
		want blob.S3Config
	}{
		{"s3://lms-test?endpoint=http://127.0.0.1:7070&region=us-east-1",
			blob.S3Config{Endpoint: "127.0.0.1:7070", Region: "us-east-1", Bucket: "lms-test"}},
		{"s3://files/tenants/7?endpoint=https://s3.example.com&region=eu-central-1",
			blob.S3Config{Endpoint: "s3.example.com", Secure: true, Region: "eu-central-1", Bucket: "files", Prefix: "tenants/7/"}},
		{"s3://files/a/b/", blob.S3Config{Endpoint: "s3.amazonaws.com", Secure: true, Region: "us-east-1", Bucket: "files", Prefix: "a/b/"}},
		{"s3://files/?endpoint=http://minio:9000/", blob.S3Config{Endpoint: "minio:9000", Region: "us-east-1", Bucket: "files"}},
	}
	for _, c := range good {
		got, err := blob.ParseS3URL(c.raw, ak, sk)
		if err != nil {
			t.Errorf("ParseS3URL(%q): %v", c.raw, err)
			continue
		}
		c.want.AccessKey, c.want.SecretKey = ak, sk
		if got != c.want {
			t.Errorf("ParseS3URL(%q) = %#v, want %#v", c.raw, got, c.want)
		}
	}

	bad := []string{
		"", "http://bucket", "s3://", "s3://Bad_Bucket", "s3://bucket:9000",
		"s3://user:" + sk + "@bucket",
		"s3://bucket/../x", "s3://bucket/a//b",
		"s3://bucket?endpoint=ftp://host", "s3://bucket?endpoint=host:9000", "s3://bucket?endpoint=http://host/path",
		"s3://bucket?endpoint=http://" + ak + ":" + sk + "@host",
		"s3://bucket?region=", "s3://bucket?regoin=us", "s3://bucket?region=a&region=b", "s3://bucket#frag",
		"s3://bucket/%zz" + sk,
	}
	for _, raw := range bad {
		_, err := blob.ParseS3URL(raw, ak, sk)
		if err == nil {
			t.Errorf("ParseS3URL(%q) succeeded", raw)
			continue
		}
		if strings.Contains(err.Error(), sk) || strings.Contains(err.Error(), ak) {
			t.Errorf("ParseS3URL(%q) error shows a credential: %v", raw, err)
		}
	}
	for _, creds := range [][2]string{{"", sk}, {ak, ""}, {"", ""}} {
		if _, err := blob.ParseS3URL("s3://bucket", creds[0], creds[1]); err == nil {
			t.Errorf("ParseS3URL with credentials %q succeeded", creds)
		}
	}
}

func TestS3ConfigHidesSecrets(t *testing.T) {
	cfg, err := blob.ParseS3URL("s3://bucket?endpoint=http://h:1", "AKIDEXAMPLE", "sekrit-value")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg)} {
		if strings.Contains(s, "sekrit") || strings.Contains(s, "AKIDEXAMPLE") {
			t.Errorf("formatted config shows credentials: %s", s)
		}
	}
}

func TestOpen(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := blob.Open(ctx, "", dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "k", strings.NewReader("v"), 1, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "files")); err != nil {
		t.Errorf("fs store not under dataDir/files: %v", err)
	}
	if _, err := blob.Open(ctx, "", ""); err == nil {
		t.Error("Open with no location and no data dir succeeded")
	}
	if _, err := blob.Open(ctx, "gs://bucket", dir); err == nil {
		t.Error("Open of an unknown scheme succeeded")
	}
	if raw := os.Getenv("LMS_TEST_S3_URL"); raw != "" {
		s3, err := blob.Open(ctx, raw, "")
		if err != nil {
			t.Fatalf("Open(s3): %v", err)
		}
		if err := s3.Ping(ctx); err != nil {
			t.Errorf("Ping(s3): %v", err)
		}
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	if _, err := blob.Open(ctx, "s3://bucket?endpoint=http://127.0.0.1:1", dir); err == nil {
		t.Error("Open of s3 without credentials succeeded")
	}
}

// The fs reader is an *os.File section, so it can serve range requests.
func TestFSGetSeeks(t *testing.T) {
	ctx := t.Context()
	s, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "f", strings.NewReader("0123456789"), 10, "text/plain"); err != nil {
		t.Fatal(err)
	}
	rc, _, err := s.Get(ctx, "f")
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rs, ok := rc.(io.ReadSeeker)
	if !ok {
		t.Fatalf("fs Get returned %T, want an io.ReadSeeker", rc)
	}
	if end, err := rs.Seek(0, io.SeekEnd); err != nil || end != 10 {
		t.Fatalf("Seek to end = %d, %v; want 10", end, err)
	}
	rs.Seek(7, io.SeekStart)
	if rest, _ := io.ReadAll(rs); string(rest) != "789" {
		t.Errorf("read after Seek(7) = %q", rest)
	}
}

// Failed puts must not leave temp files behind; stale ones from a crash are
// removed when the store is opened again.
func TestFSTempFiles(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	s, err := blob.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	s.Put(ctx, "ok", strings.NewReader("x"), 1, "")
	s.Put(ctx, "short", strings.NewReader("x"), 5, "")
	tmp := filepath.Join(root, "tmp")
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("temp files left after puts: %v", entries)
	}

	stale, fresh := filepath.Join(tmp, "put-stale"), filepath.Join(tmp, "put-fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := blob.NewFS(root); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, os.ErrNotExist) {
		t.Error("stale temp file survived NewFS")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("NewFS removed a temp file that may still be in use")
	}
}

// In the fs store a key cannot also be a "directory" of other keys; that is
// refused with an error, not silently mixed up.
func TestFSKeyAndDirectoryConflict(t *testing.T) {
	ctx := t.Context()
	s, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "a/b", strings.NewReader("x"), 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "a", strings.NewReader("x"), 1, ""); err == nil {
		t.Error("Put of a key that is a directory succeeded")
	}
	if err := s.Put(ctx, "a/b/c", strings.NewReader("x"), 1, ""); err == nil {
		t.Error("Put below an object succeeded")
	}
}

func TestFSPing(t *testing.T) {
	root := t.TempDir()
	s, err := blob.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := s.Ping(t.Context()); err == nil {
		t.Error("Ping succeeded with the root gone")
	}
}
