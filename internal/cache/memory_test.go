package cache

import (
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
)

// TestMemoryForgetsExpiredEntries writes many distinct keys that are never
// read again and checks that expired ones do not pile up.
func TestMemoryForgetsExpiredEntries(t *testing.T) {
	clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewMemory(clk)
	const perMinute = 3000
	for round := range 20 {
		for i := range perMinute {
			key := strconv.Itoa(round) + ":" + strconv.Itoa(i)
			if err := m.Set(t.Context(), key, []byte("v"), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(time.Minute)
	}
	if n := len(m.entries); n > 2*perMinute+1 {
		t.Fatalf("%d entries kept for %d live keys", n, perMinute)
	}
}
