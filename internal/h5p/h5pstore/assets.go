package h5pstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/platform"
)

// A content's player assets follow its libraries' dependency graph, which
// changes only when libraries are installed or updated. Each tenant has a
// library generation in the shared cache (Redis when several replicas
// run); a process keeps the asset lists it computed, each valid while the
// generation and the content's update time are those it was computed
// under.

// generationTTL bounds a generation's life; when it lapses a new one
// starts, which only costs one recomputation per content.
const generationTTL = 24 * time.Hour

// maxCachedAssets bounds the asset lists a process keeps per tenant; past
// it the lists start over.
const maxCachedAssets = 10000

type assetEntry struct {
	generation string
	updated    time.Time
	scripts    []Asset
	styles     []Asset
}

type assetCache struct {
	mu      sync.Mutex
	entries map[int64]assetEntry
}

type assetCacheKey struct{}

func generationKey(tenantID int64) string { return fmt.Sprintf("h5p:%d:library-generation", tenantID) }

// libraryGeneration reads the tenant's library generation, starting one
// when there is none.
func (s *Store) libraryGeneration(ctx context.Context, tenantID int64) (string, error) {
	key := generationKey(tenantID)
	v, ok, err := s.Cache.Get(ctx, key)
	if err != nil || ok {
		return string(v), err
	}
	gen := randomSuffix()
	return gen, s.Cache.Set(ctx, key, []byte(gen), generationTTL)
}

// librariesChanged starts a new library generation, so that every
// process recomputes the asset lists it keeps.
func (s *Store) librariesChanged(ctx context.Context, tenantID int64) error {
	if s.Cache == nil {
		return nil
	}
	if err := s.Cache.Set(ctx, generationKey(tenantID), []byte(randomSuffix()), generationTTL); err != nil {
		return fmt.Errorf("h5pstore: new library generation: %w", err)
	}
	return nil
}

// ContentAssets is PlayerAssets for a loaded content, from the process's
// cache when the content and its tenant's libraries are unchanged. The
// lists are shared: callers must not change them.
func (s *Store) ContentAssets(ctx context.Context, t *platform.Tenant, c Content) (scripts, styles []Asset, err error) {
	if s.Cache == nil {
		return s.PlayerAssets(ctx, t, c.ID)
	}
	gen, err := s.libraryGeneration(ctx, t.ID)
	if err != nil {
		// Without the shared generation nothing cached can be trusted.
		return s.PlayerAssets(ctx, t, c.ID)
	}
	cache := t.Local(assetCacheKey{}, func() any { return &assetCache{entries: map[int64]assetEntry{}} }).(*assetCache)
	cache.mu.Lock()
	e, ok := cache.entries[c.ID]
	cache.mu.Unlock()
	if ok && e.generation == gen && e.updated.Equal(c.UpdatedAt) {
		return e.scripts, e.styles, nil
	}
	scripts, styles, err = s.PlayerAssets(ctx, t, c.ID)
	if err != nil {
		return nil, nil, err
	}
	cache.mu.Lock()
	if len(cache.entries) >= maxCachedAssets {
		cache.entries = map[int64]assetEntry{}
	}
	cache.entries[c.ID] = assetEntry{generation: gen, updated: c.UpdatedAt, scripts: scripts, styles: styles}
	cache.mu.Unlock()
	return scripts, styles, nil
}
