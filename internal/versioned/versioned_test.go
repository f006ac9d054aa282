package versioned

import (
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
