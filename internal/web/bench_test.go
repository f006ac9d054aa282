package web

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// catalogueBench is a tenant with a dozen published courses behind the
// frontend, the catalogue already in the cache.
func catalogueBench(b *testing.B) *stack {
	b.Helper()
	env := apitest.New(b, "sqlite", apitest.Options{})
	api := newCountingAPI(b, env.Server.Handler)
	f := newFront(b, api.srv.URL, "platform.test", frontOptions{clock: env.Clock})
	f.host = env.Host
	s := &stack{env: env, api: api, front: f}
	admin := env.As("admin").Token
	for i := range 12 {
		env.Call(b, 201, "POST", "/api/admin/courses", admin, map[string]any{"title": fmt.Sprintf("Course %02d", i+1),
			"status": "published", "public": true, "summary": "A course about something worth learning.",
			"tags": []string{"bench", fmt.Sprintf("tag-%d", i%3)}})
	}
	r := s.do(req{path: "/"})
	if r.status != http.StatusOK {
		b.Fatalf("catalogue: %d", r.status)
	}
	return s
}

// BenchmarkCataloguePage renders the catalogue from the cache in process
// (no network between client and frontend).
func BenchmarkCataloguePage(b *testing.B) {
	s := catalogueBench(b)
	before := s.api.total()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.Host = s.env.Host
			w := httptest.NewRecorder()
			s.web.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Errorf("status %d", w.Code)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(s.api.total()-before), "api-calls")
}

// BenchmarkCataloguePageHTTP serves the catalogue over real TCP
// connections (the load generator on the same machine) while the fake
// clock runs 100 times faster than real time, so several freshness windows pass
// during the run. It reports requests per second, the windows that
// passed and the catalogue calls the API received: at most one per
// window.
func BenchmarkCataloguePageHTTP(b *testing.B) {
	s := catalogueBench(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256, MaxIdleConns: 256}}
	url := s.srv.URL + "/"
	before := s.api.count("/api/courses")
	start := s.clock.Now()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				s.clock.Advance(time.Second)
			}
		}
	}()
	var failures atomic.Int64
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r, _ := http.NewRequest(http.MethodGet, url, nil)
			r.Host = s.env.Host
			res, err := client.Do(r)
			if err != nil {
				failures.Add(1)
				continue
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				failures.Add(1)
			}
		}
	})
	b.StopTimer()
	close(stop)
	<-done
	s.web.cache.wait()
	windows := s.clock.Now().Sub(start) / s.web.cache.fresh
	calls := s.api.count("/api/courses") - before
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(windows), "windows")
	b.ReportMetric(float64(calls), "catalogue-api-calls")
	if failures.Load() > 0 {
		b.Fatalf("%d failed requests", failures.Load())
	}
	if calls > int(windows)+1 {
		b.Fatalf("%d catalogue calls in %d freshness windows: more than one per window", calls, windows)
	}
}
