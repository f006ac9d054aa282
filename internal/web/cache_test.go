package web

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
)

// TestCatalogueCache follows the public cache on the real API with the
// fake clock: fresh answers make no call, a stale one is served at once
// while exactly one refresh runs, data older than the stale window is
// loaded again, and a cold key is loaded once for many callers.
func TestCatalogueCache(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		seedCourse(t, s.env, s.env.Host, admin, "Cached course")
		courses := func() int { return s.api.count("/api/courses") }

		page := s.must(req{path: "/courses"}, http.StatusOK)
		if !strings.Contains(page.text(), "Cached course") || courses() != 1 {
			t.Fatalf("first view: %d API calls", courses())
		}
		s.clock.Advance(44 * time.Second)
		for range 20 {
			s.must(req{path: "/courses"}, http.StatusOK)
		}
		if courses() != 1 {
			t.Fatalf("fresh for 45 s: %d API calls", courses())
		}

		// A new course; the cached page does not show it yet.
		seedCourse(t, s.env, s.env.Host, admin, "Newer course")
		s.clock.Advance(2 * time.Second)
		// Stale: served at once, even while the refresh is held up.
		release := s.api.hold("/api/courses")
		for range 10 {
			r := s.must(req{path: "/courses"}, http.StatusOK)
			if strings.Contains(r.text(), "Newer course") {
				t.Fatal("the stale page is served while the refresh runs")
			}
		}
		waitFor(t, "the refresh to reach the API", func() bool { return courses() == 2 })
		release()
		s.web.cache.wait()
		if courses() != 2 {
			t.Fatalf("one refresh for many stale reads: %d calls", courses())
		}
		if r := s.must(req{path: "/courses"}, http.StatusOK); !strings.Contains(r.text(), "Newer course") {
			t.Fatal("the refreshed page shows the new course")
		}

		// Older than 30 minutes: not served, loaded again while the
		// caller waits.
		s.clock.Advance(31 * time.Minute)
		staleHits := s.web.cache.stats.staleHits.Load()
		s.must(req{path: "/courses"}, http.StatusOK)
		if courses() != 3 || s.web.cache.stats.staleHits.Load() != staleHits {
			t.Fatalf("a 31-minute-old entry must be loaded again: %d calls", courses())
		}

		// A cold search: one load however many ask at once.
		release = s.api.hold("/api/courses")
		const n = 24
		var wg sync.WaitGroup
		waits := s.web.cache.stats.waits.Load()
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.do(req{path: "/courses?q=Cached"})
				if r.status != http.StatusOK {
					t.Errorf("search: %d", r.status)
				}
			}()
		}
		waitFor(t, "every caller to wait for the one load", func() bool {
			return s.web.cache.stats.waits.Load() == waits+n-1
		})
		release()
		wg.Wait()
		if courses() != 4 {
			t.Fatalf("single flight: %d API calls for %d callers of a cold key", courses()-3, n)
		}

		// Each tenant has its own entries.
		s.env.AddTenant("other.test")
		s.must(req{path: "/courses", host: "other.test"}, http.StatusOK)
		if courses() != 5 {
			t.Fatal("another tenant's catalogue is its own cache entry")
		}

		// The API down: stale data is still served within the window;
		// a cold page answers 502.
		s.clock.Advance(time.Minute)
		s.api.srv.Close()
		if r := s.must(req{path: "/courses"}, http.StatusOK); !strings.Contains(r.text(), "Newer course") {
			t.Fatal("stale data is served while the API is down")
		}
		s.web.cache.wait()
		s.must(req{path: "/courses?q=never-asked"}, http.StatusBadGateway)
	})
}

// TestCacheFreshness checks the configured window and its minimum on the
// cache alone, with a counting loader.
func TestCacheFreshness(t *testing.T) {
	clk := clock.NewFake(time.Now())
	var mu sync.Mutex
	calls := 0
	load := func(ctx context.Context, host, path string) (int, []byte, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return 200, []byte(`{"success":true,"message":"","data":["a"]}`), nil
	}
	if c := newPublicCache(clk, time.Second, load); c.fresh != 5*time.Second {
		t.Fatalf("fresh %v, want the 5 s minimum", c.fresh)
	}
	if c := newPublicCache(clk, 0, load); c.fresh != 45*time.Second {
		t.Fatalf("fresh %v, want the 45 s default", c.fresh)
	}
	c := newPublicCache(clk, 10*time.Second, load)
	get := func() {
		if _, err := c.get(context.Background(), "a.test", "/x", decodeTags); err != nil {
			t.Fatal(err)
		}
		c.wait()
	}
	get()
	clk.Advance(9 * time.Second)
	get()
	if calls != 1 {
		t.Fatalf("%d calls within the window", calls)
	}
	clk.Advance(2 * time.Second)
	get()
	if calls != 2 {
		t.Fatalf("%d calls after the window", calls)
	}
	// Hosts are separate keys.
	c.get(context.Background(), "b.test", "/x", decodeTags)
	if calls != 3 {
		t.Fatal("each tenant host has its own entry")
	}
}

// TestCacheKeepsPublicFacts: 403 and 404 answers are cached like data.
func TestCacheKeepsPublicFacts(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	s.must(req{path: "/courses/999999"}, http.StatusNotFound)
	s.must(req{path: "/courses/999999"}, http.StatusNotFound)
	if n := s.api.count("/api/courses/999999"); n != 1 {
		t.Fatalf("%d calls for a missing course", n)
	}
}

// TestNewTenantShowsAtOnce: an unknown host is not remembered as such for
// the freshness window; a tenant added a moment later is served.
func TestNewTenantShowsAtOnce(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	s.must(req{path: "/courses", host: "late.test"}, http.StatusNotFound)
	s.env.AddTenant("late.test")
	s.clock.Advance(2 * time.Second)
	s.must(req{path: "/courses", host: "late.test"}, http.StatusOK)
}
