package settings

import (
	"context"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
)

// Settings are read on hot paths (every quiz start reads its time limit)
// and change rarely, by an admin. So each tenant keeps the values it has
// stored in memory. A write names changedKey (sqldb.Changed), which drops
// them at once in every process that shares the change feed; storedTTL
// bounds how long a write by a process that shares none (a command run on
// the same SQLite files without Redis) goes unseen, as for principals.
const (
	storedTTL  = 5 * time.Second
	changedKey = "settings"
)

type storedMemo struct {
	mu sync.Mutex
	// gen counts the changes heard: values read while one arrived may
	// predate it and are not kept.
	gen     uint64
	values  map[string]any
	expires time.Time
}

type memoKey struct{}

func memoOf(t *platform.Tenant) *storedMemo {
	return t.Local(memoKey{}, func() any {
		m := &storedMemo{}
		t.Watch(m.changed)
		return m
	}).(*storedMemo)
}

func (m *storedMemo) changed(keys []string) {
	for _, k := range keys {
		if k == changedKey || k == access.TenantKey {
			m.drop()
			return
		}
	}
}

func (m *storedMemo) drop() {
	m.mu.Lock()
	m.gen++
	m.values = nil
	m.mu.Unlock()
}

// stored returns the values tenant t has set, from its memo when it holds
// them; they are shared and must not be changed.
func (s *Service) stored(ctx context.Context, t *platform.Tenant) (map[string]any, error) {
	m := memoOf(t)
	now := s.clock.Now()
	m.mu.Lock()
	values, gen := m.values, m.gen
	if values != nil && now.Before(m.expires) {
		m.mu.Unlock()
		return values, nil
	}
	m.mu.Unlock()
	values, err := storedValues(ctx, t.DB)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	if gen == m.gen {
		m.values, m.expires = values, now.Add(storedTTL)
	}
	m.mu.Unlock()
	return values, nil
}
