package lock

import (
	"context"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/clock"
)

// minSweep is the number of held locks below which expired ones are left for
// the next taker of their name to replace.
const minSweep = 1024

// Memory is a Locker for one process.
type Memory struct {
	clk clock.Clock

	mu   sync.Mutex
	held map[string]*hold
	// lastToken tells holders apart, so an Unlock from a holder whose lock
	// expired and was taken by another cannot release the new holder.
	lastToken uint64
	// sweepAt is the map size at which expired locks are swept out: twice the
	// size left by the last sweep, so the cost of a sweep is paid for by the
	// locks taken before it.
	sweepAt int
}

type hold struct {
	token    uint64
	expires  time.Time
	released chan struct{} // closed when this holder lets go or expires
}

// NewMemory returns an in-process locker that reads the time from clk.
func NewMemory(clk clock.Clock) *Memory {
	return &Memory{clk: clk, held: make(map[string]*hold), sweepAt: minSweep}
}

func (m *Memory) TryAcquire(_ context.Context, name string, ttl time.Duration) (Unlock, error) {
	unlock, _, err := m.try(name, ttl)
	return unlock, err
}

func (m *Memory) Acquire(ctx context.Context, name string, ttl time.Duration) (Unlock, error) {
	return acquire(ctx, name, func() (Unlock, <-chan struct{}, error) { return m.try(name, ttl) })
}

func (m *Memory) try(name string, ttl time.Duration) (Unlock, <-chan struct{}, error) {
	if ttl <= 0 {
		return nil, nil, errTTL
	}
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	h, ok := m.held[name]
	if ok && now.Before(h.expires) {
		// Expiry is seen only by polling, since nothing announces that a
		// clock passed a time, so waiters also poll.
		return nil, h.released, ErrNotAcquired
	}
	if ok {
		close(h.released)
	} else if len(m.held) >= m.sweepAt {
		m.sweep(now)
	}
	m.lastToken++
	h = &hold{token: m.lastToken, expires: now.Add(ttl), released: make(chan struct{})}
	m.held[name] = h
	token := h.token
	return func(context.Context) error {
		m.release(name, token)
		return nil
	}, nil, nil
}

func (m *Memory) release(name string, token uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if h, ok := m.held[name]; ok && h.token == token {
		delete(m.held, name)
		close(h.released)
	}
}

func (m *Memory) sweep(now time.Time) {
	for name, h := range m.held {
		if !now.Before(h.expires) {
			delete(m.held, name)
			close(h.released)
		}
	}
	m.sweepAt = max(2*len(m.held), minSweep)
}
