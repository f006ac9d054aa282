package h5p_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
)

// paramsOf returns content parameters of exactly size bytes made of empty
// objects, the shape that costs most once decoded.
func paramsOf(size int) []byte {
	const head, tail = `{"items":[`, `{}]}`
	n := (size - len(head) - len(tail)) / 3
	b := []byte(head + strings.Repeat("{},", n) + tail)
	for len(b) < size { // pad with spaces inside the array to the exact size
		b = append(b[:len(head)], append([]byte(" "), b[len(head):]...)...)
	}
	return b
}

// withContentJSON replaces content/content.json of a package.
func withContentJSON(t *testing.T, pkg, params []byte) []byte {
	return rewritePackage(t, pkg, func(name string, b []byte) []byte {
		if name == "content/content.json" {
			return params
		}
		return b
	})
}

// TestParamsSizeCapped: content parameters over the cap (4 MB by default)
// are refused with 413 naming the limit, whether they come in a package
// (a package of 86 KB had held 50 MB of parameters) or from the editor.
func TestParamsSizeCapped(t *testing.T) {
	tf := fixtureData(t, trueFalseFixture)
	limit := h5ppackage.DefaultMaxContentSize
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		_, err := uploadContent(ctx, admin, withContentJSON(t, tf, paramsOf(limit+1)))
		if e := apitest.Refused(t, err, 413); len(e.Problems) == 0 || e.Problems[0].Code != h5ppackage.CodeContentTooLarge ||
			!strings.Contains(e.Message, strconv.Itoa(limit)) {
			t.Errorf("parameters of %d bytes: %v %+v, want 413 naming %d", limit+1, e, e.Problems, limit)
		}
		up := apitest.Must(uploadContent(ctx, admin, withContentJSON(t, tf, paramsOf(limit))))(t)
		lib := "H5P.TrueFalse 1.6"
		for _, size := range []int{limit + 1, 4 * limit} {
			// The client compacts the parameters, dropping paramsOf's padding:
			// they must still be over the cap.
			params := json.RawMessage(paramsOf(size))
			if n := len(mustJSON(params)); n <= limit {
				t.Fatalf("parameters of %d bytes are %d once sent", size, n)
			}
			body := client.ContentBody{Library: lib, Params: client.ContentParams{Params: params, Metadata: map[string]any{"title": "Big"}}}
			calls := map[string]func() error{
				"POST /h5p/contents": func() error { _, err := admin.PostH5PContents(ctx, body); return err },
				"PATCH /h5p/contents/" + up.ContentID: func() error {
					_, err := admin.PatchH5PContentsID(ctx, up.ContentID, body)
					return err
				},
			}
			for m, call := range calls {
				if e := apitest.Refused(t, call(), 413); !strings.Contains(e.Message, strconv.Itoa(limit)) {
					t.Errorf("%s with parameters of %d bytes: %v, want 413 naming %d", m, size, e, limit)
				}
			}
		}
	})
}

// heapBytes is the heap memory held by objects, live or not yet freed:
// what the process needs however soon the collector runs.
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestParamsMemoryBounded: the worst allowed package (parameters at the
// cap, made of the values that cost most decoded) is uploaded while 16
// anonymous readers fetch the parameters of such a content, and the heap
// never grows past a bound proportional to the cap. Before, each read
// decoded, copied and re-encoded the parameters: 16 readers of 50 MB took
// a server from 1.5 to 3.7 GB.
func TestParamsMemoryBounded(t *testing.T) {
	tf := fixtureData(t, trueFalseFixture)
	limit := h5ppackage.DefaultMaxContentSize
	worst := withContentJSON(t, tf, paramsOf(limit))
	const readers, reads = 16, 4
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.ClientAs("admin")
	up := apitest.Must(uploadContent(t.Context(), admin, worst))(t)
	url := env.HTTP.URL + "/h5p/params/" + up.ContentID

	runtime.GC()
	base := heapBytes()
	var peak uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak = max(peak, heapBytes())
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, readers*reads+1)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range reads {
				// Raw: the client would decode the parameters in this
				// process, whose heap the test measures.
				req, _ := http.NewRequest("GET", url, nil)
				req.Host = env.Host
				r, err := env.HTTP.Client().Do(req)
				if err != nil {
					errs <- err
					return
				}
				n, _ := io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if r.StatusCode != 200 || n < int64(limit) {
					errs <- fmt.Errorf("read: %d, %d bytes", r.StatusCode, n)
				}
			}
		}()
	}
	if _, err := uploadContent(t.Context(), admin, worst); err != nil {
		errs <- fmt.Errorf("upload during the reads: %v", err)
	}
	wg.Wait()
	close(stop)
	<-sampled
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	grown := peak - min(peak, base)
	// Each reader holds the parameters once while it runs (the SQLite
	// driver's one copy of the column, as a memory profile shows), and the
	// collector lets as much garbage wait again before it runs (GOGC=100):
	// up to two times the parameters per reader, measured 1.2 to 2.2, so
	// the bound is three. Copying and encoding them again, as before, took
	// over five.
	bound := uint64(3 * readers * limit)
	t.Logf("heap grew by %d MB at most (bound %d MB) for %d readers of %d MB of parameters",
		grown>>20, bound>>20, readers, limit>>20)
	if grown > bound {
		t.Errorf("the heap grew by %d MB, over the bound of %d MB", grown>>20, bound>>20)
	}
}
