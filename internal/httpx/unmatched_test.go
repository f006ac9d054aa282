package httpx

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkUnmatched measures what the envelope for unmatched requests
// costs a matched one (a second route lookup), on a mux the size of the
// API's, against the ServeMux alone.
func BenchmarkUnmatched(b *testing.B) {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, r *http.Request) {}
	for i := range 100 {
		mux.HandleFunc(fmt.Sprintf("GET /api/things%d/{id}", i), ok)
		mux.HandleFunc(fmt.Sprintf("POST /api/things%d/{id}/edit", i), ok)
		mux.HandleFunc(fmt.Sprintf("GET /api/things%d", i), ok)
	}
	r := httptest.NewRequest("GET", "/api/things50/7", nil)
	for name, h := range map[string]http.Handler{"servemux": mux, "unmatched": Unmatched(mux, nil)} {
		b.Run(name, func(b *testing.B) {
			w := httptest.NewRecorder()
			for b.Loop() {
				h.ServeHTTP(w, r)
			}
		})
	}
}
