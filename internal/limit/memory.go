package limit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/clock"
)

// minSweep is the number of counters below which ended windows are left for
// the next hit on their key to replace.
const minSweep = 1024

// Memory is a Limiter for one process.
type Memory struct {
	clk clock.Clock

	mu       sync.Mutex
	counters map[counterKey]counter
	// sweepAt is the map size at which ended windows are swept out. It is
	// twice the size left by the last sweep, so the map stays within about
	// twice the keys of current windows and each sweep is paid for by the
	// inserts before it.
	sweepAt int
}

// counterKey includes the window length so the same key counted over a
// minute and over an hour keeps two counts.
type counterKey struct {
	key    string
	length time.Duration
}

type counter struct {
	window int64
	end    time.Time
	count  int64
}

// NewMemory returns an in-process limiter that reads the time from clk.
func NewMemory(clk clock.Clock) *Memory {
	return &Memory{clk: clk, counters: make(map[counterKey]counter), sweepAt: minSweep}
}

func (m *Memory) Allow(ctx context.Context, key string, limit int, window time.Duration) (Decision, error) {
	return m.AllowN(ctx, key, 1, limit, window)
}

// AllowN counts n hits at once.
func (m *Memory) AllowN(_ context.Context, key string, n, limit int, window time.Duration) (Decision, error) {
	if err := checkArgs(limit, window); err != nil {
		return Decision{}, err
	}
	if n < 1 {
		return Decision{}, errors.New("limit: n must be positive")
	}
	now := m.clk.Now()
	number, end := fixedWindow(now, window)
	k := counterKey{key, window}

	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.counters[k]
	if !ok || c.window != number {
		if !ok && len(m.counters) >= m.sweepAt {
			m.sweep(now)
		}
		c = counter{window: number, end: end}
	}
	c.count += int64(n)
	m.counters[k] = c
	return decide(c.count, limit, now, end), nil
}

func (m *Memory) sweep(now time.Time) {
	for k, c := range m.counters {
		if !now.Before(c.end) {
			delete(m.counters, k)
		}
	}
	m.sweepAt = max(2*len(m.counters), minSweep)
}
