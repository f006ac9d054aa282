package cache

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/clock"
)

// minSweep is the number of entries below which expired ones are left for
// Get or Set to replace.
const minSweep = 1024

var errTTL = errors.New("cache: ttl must be positive")

// Memory is a Cache for one process.
type Memory struct {
	clk clock.Clock

	mu      sync.Mutex
	entries map[string]entry
	// sweepAt is the map size at which expired entries are swept out. It is
	// twice the size left by the last sweep, so the map stays within about
	// twice its live entries and each sweep is paid for by the inserts
	// before it.
	sweepAt int
}

type entry struct {
	value   []byte
	expires time.Time
}

// NewMemory returns an in-process cache that reads the time from clk.
func NewMemory(clk clock.Clock) *Memory {
	return &Memory{clk: clk, entries: make(map[string]entry), sweepAt: minSweep}
}

func (m *Memory) Get(_ context.Context, key string) ([]byte, bool, error) {
	now := m.clk.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return nil, false, nil
	}
	if !now.Before(e.expires) {
		delete(m.entries, key)
		return nil, false, nil
	}
	// A copy, so the caller may change it without changing the cache, as
	// with a value read from Redis.
	return bytes.Clone(e.value), true, nil
}

func (m *Memory) Set(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if ttl <= 0 {
		return errTTL
	}
	now := m.clk.Now()
	// Never nil, so an empty value reads back as present.
	v := append(make([]byte, 0, len(value)), value...)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[key]; !ok && len(m.entries) >= m.sweepAt {
		m.sweep(now)
	}
	m.entries[key] = entry{value: v, expires: now.Add(ttl)}
	return nil
}

func (m *Memory) Delete(_ context.Context, keys ...string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, k := range keys {
		delete(m.entries, k)
	}
	return nil
}

func (m *Memory) DeletePrefix(_ context.Context, prefix string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.entries {
		if strings.HasPrefix(k, prefix) {
			delete(m.entries, k)
		}
	}
	return nil
}

func (m *Memory) sweep(now time.Time) {
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, k)
		}
	}
	m.sweepAt = max(2*len(m.entries), minSweep)
}
