package lock

import (
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
)

// TestMemoryForgetsExpiredLocks takes many distinct locks that are never
// released, as crashed holders would leave them, and checks that expired
// ones do not pile up.
func TestMemoryForgetsExpiredLocks(t *testing.T) {
	clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewMemory(clk)
	const perMinute = 3000
	for round := range 20 {
		for i := range perMinute {
			name := strconv.Itoa(round) + ":" + strconv.Itoa(i)
			if _, err := m.TryAcquire(t.Context(), name, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(time.Minute)
	}
	if n := len(m.held); n > 2*perMinute+1 {
		t.Fatalf("%d locks kept for %d live ones", n, perMinute)
	}
}
