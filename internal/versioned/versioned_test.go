package versioned

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestCache(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	c := New[string, int](2)
	if _, ok := c.Get("a", 1, now); ok {
		t.Fatal("empty cache answered")
	}
	c.Put("a", 1, now.Add(time.Minute), now, 10)
	if v, ok := c.Get("a", 1, now); !ok || v != 10 {
		t.Fatalf("kept value: %v %v", v, ok)
	}
	if _, ok := c.Get("a", 2, now); ok {
		t.Fatal("value of another version answered")
	}
	if _, ok := c.Get("a", 1, now.Add(time.Minute)); ok {
		t.Fatal("expired value answered")
	}
	c.Put("b", 1, now.Add(time.Second), now, 20)
	// Full: the expired "b" goes, "a" stays.
	c.Put("c", 1, now.Add(time.Hour), now.Add(2*time.Second), 30)
	if _, ok := c.Get("a", 1, now.Add(2*time.Second)); !ok {
		t.Fatal("a live entry was dropped while an expired one could go")
	}
	if len(c.entries) != 2 {
		t.Fatalf("entries: %d", len(c.entries))
	}
	// Full with nothing expired: start over.
	c.Put("d", 1, now.Add(time.Hour), now.Add(3*time.Second), 40)
	if len(c.entries) != 1 {
		t.Fatalf("a full cache grew: %d entries", len(c.entries))
	}
	if v, ok := c.Get("d", 1, now.Add(3*time.Second)); !ok || v != 40 {
		t.Fatalf("new value: %v %v", v, ok)
	}
}

// TestLoadBuildsOnce: callers missing the same key and version at once
// share one build; a failed build leaves each waiter to build for itself.
func TestLoadBuildsOnce(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	c := New[string, int](8)
	var builds atomic.Int64
	release := make(chan struct{})
	fill := func() (int, time.Time, error) {
		builds.Add(1)
		<-release
		return 7, now.Add(time.Minute), nil
	}
	const callers = 50
	var wg sync.WaitGroup
	got := make([]int, callers)
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := c.Load("course", 3, now, fill)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}()
	}
	// Let every caller reach the build before it ends.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		c.mu.Lock()
		b := c.builds[built[string]{"course", 3}]
		c.mu.Unlock()
		if b != nil && builds.Load() == 1 {
			break
		}
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	if n := builds.Load(); n != 1 {
		t.Errorf("%d builds for one key and version, want 1", n)
	}
	for i, v := range got {
		if v != 7 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
	if v, ok := c.Get("course", 3, now); !ok || v != 7 {
		t.Errorf("the built value is not kept: %v %v", v, ok)
	}
	if len(c.builds) != 0 {
		t.Errorf("%d builds left behind", len(c.builds))
	}

	// Another version builds again; a failure is not shared.
	failing := make(chan struct{})
	var tries atomic.Int64
	fail := func() (int, time.Time, error) {
		if tries.Add(1) == 1 {
			<-failing
			return 0, time.Time{}, errors.New("context canceled")
		}
		return 8, now.Add(time.Minute), nil
	}
	first := make(chan error)
	go func() {
		_, err := c.Load("course", 4, now, fail)
		first <- err
	}()
	for tries.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan int)
	go func() {
		v, err := c.Load("course", 4, now, fail)
		if err != nil {
			t.Error(err)
		}
		second <- v
	}()
	time.Sleep(20 * time.Millisecond)
	close(failing)
	if err := <-first; err == nil {
		t.Error("the failed build answered no error")
	}
	if v := <-second; v != 8 {
		t.Errorf("a waiter of a failed build got %d, want its own build's 8", v)
	}
}
