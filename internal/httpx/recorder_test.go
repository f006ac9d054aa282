package httpx

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestAnswersAreSentWhole checks, over a real connection, that an answer
// up to heldBody goes out with its Content-Length (not chunked), a larger
// one and a flushed one still stream, a panic after a partial write still
// answers the error envelope, and HEAD and 204 carry no invented length.
func TestAnswersAreSentWhole(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 100<<10)
	mux := http.NewServeMux()
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"a":"`))
		w.Write(big) // two writes, 100 KB: over net/http's 2 KB, under heldBody
		w.Write([]byte(`"}`))
	})
	mux.HandleFunc("/huge", func(w http.ResponseWriter, r *http.Request) {
		for range 3 {
			w.Write(big)
		}
	})
	mux.HandleFunc("/stream", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first\n"))
		http.NewResponseController(w).Flush()
		w.Write([]byte("second\n"))
		// A second flush sends nothing again.
		http.NewResponseController(w).Flush()
		w.Write([]byte("third\n"))
	})
	mux.HandleFunc("/panic", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/csv")
		w.Write([]byte("half an answer"))
		panic("boom")
	})
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := httptest.NewServer(Observe(slog.New(slog.NewTextHandler(io.Discard, nil)), false)(mux))
	defer srv.Close()

	get := func(method, path string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res, body
	}
	res, body := get("GET", "/json")
	if res.StatusCode != http.StatusCreated || res.ContentLength != int64(len(big)+8) || len(res.TransferEncoding) != 0 ||
		len(body) != len(big)+8 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("held answer: %d, length %d, encoding %v, %d bytes", res.StatusCode, res.ContentLength, res.TransferEncoding, len(body))
	}
	if res, body = get("GET", "/huge"); res.ContentLength != -1 || len(body) != 3*len(big) {
		t.Fatalf("answer over heldBody: length %d, %d bytes", res.ContentLength, len(body))
	}
	if res, _ = get("HEAD", "/json"); res.ContentLength > 0 {
		t.Fatalf("HEAD answer claims a length of %d", res.ContentLength)
	}
	if res, _ = get("GET", "/empty"); res.StatusCode != http.StatusNoContent || res.Header.Get("Content-Length") != "" {
		t.Fatalf("204 answer: %d, Content-Length %q", res.StatusCode, res.Header.Get("Content-Length"))
	}
	res, body = get("GET", "/panic")
	var env ErrorBody
	if res.StatusCode != 500 || json.Unmarshal(body, &env) != nil || env.Success || strings.Contains(string(body), "half") ||
		!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("panic after a partial write: %d %q %s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}

	// The flushed part arrives before the handler has finished.
	res, err := http.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	streamed, err := io.ReadAll(res.Body)
	if err != nil || string(streamed) != "first\nsecond\nthird\n" || res.ContentLength != -1 {
		t.Fatalf("streamed answer: %q %v, length %d", streamed, err, res.ContentLength)
	}
}
