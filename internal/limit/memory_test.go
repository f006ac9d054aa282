package limit

import (
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/clock"
)

// TestMemoryForgetsEndedWindows feeds many distinct keys through many windows
// and checks that the counters of ended windows do not pile up.
func TestMemoryForgetsEndedWindows(t *testing.T) {
	clk := clock.NewFake(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	m := NewMemory(clk)
	const perWindow = 3000
	for w := range 20 {
		for i := range perWindow {
			key := strconv.Itoa(w) + ":" + strconv.Itoa(i)
			if _, err := m.Allow(t.Context(), key, 1, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		clk.Advance(time.Minute)
	}
	if n := len(m.counters); n > 2*perWindow+1 {
		t.Fatalf("%d counters kept for %d keys per window", n, perWindow)
	}
}
