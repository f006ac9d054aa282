package files

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/blob"
)

// plainStore hides the fs store's seekable reader and counts reads, as an
// S3 store would look to ServeContent.
type plainStore struct {
	blob.Store
	gets int
}

func (p *plainStore) Get(ctx context.Context, key string) (io.ReadCloser, blob.Info, error) {
	p.gets++
	rc, info, err := p.Store.Get(ctx, key)
	if err != nil {
		return nil, info, err
	}
	return struct {
		io.Reader
		io.Closer
	}{rc, rc}, info, nil
}

func TestRangeSeekerServesRanges(t *testing.T) {
	fs, err := blob.NewFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("0123456789abcdefghij")
	if err := fs.Put(context.Background(), "a/v.mp4", bytes.NewReader(data), int64(len(data)), "video/mp4"); err != nil {
		t.Fatal(err)
	}
	store := &plainStore{Store: fs}
	serve := func(rangeHeader string) *httptest.ResponseRecorder {
		rc, info, err := store.Get(context.Background(), "a/v.mp4")
		if err != nil {
			t.Fatal(err)
		}
		rs := newRangeSeeker(context.Background(), store, "a/v.mp4", info.Size, rc)
		defer rs.Close()
		req := httptest.NewRequest(http.MethodGet, "/x", nil)
		if rangeHeader != "" {
			req.Header.Set("Range", rangeHeader)
		}
		rec := httptest.NewRecorder()
		// Write sets the type, so ServeContent never sniffs.
		rec.Header().Set("Content-Type", "video/mp4")
		http.ServeContent(rec, req, "", time.Time{}, rs)
		return rec
	}
	rec := serve("")
	if rec.Code != 200 || rec.Body.String() != string(data) || store.gets != 1 {
		t.Errorf("whole file: %d %q after %d gets", rec.Code, rec.Body, store.gets)
	}
	for h, want := range map[string]string{"bytes=2-5": "2345", "bytes=15-": "fghij", "bytes=-3": "hij"} {
		rec := serve(h)
		if rec.Code != 206 || rec.Body.String() != want {
			t.Errorf("%s: %d %q, want %q", h, rec.Code, rec.Body, want)
		}
	}
	rec = serve("bytes=0-1,4-5")
	if rec.Code != 206 || !bytes.Contains(rec.Body.Bytes(), []byte("01")) || !bytes.Contains(rec.Body.Bytes(), []byte("45")) {
		t.Errorf("multipart range: %d %q", rec.Code, rec.Body)
	}
}
