package h5pstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/platform"
)

// hubCacheKey is the blob holding the tenant's last content-type list read
// from the H5P hub.
const hubCacheKey = "h5p/hub/content-types.json"

// maxHubCache bounds the stored list.
const maxHubCache = 16 << 20

// HubCache is the content-type list last read from the H5P hub.
type HubCache struct {
	FetchedAt time.Time `json:"fetchedAt"`
	// ContentTypes are the hub's entries as it sent them, one JSON object
	// each, so fields this service does not read survive.
	ContentTypes []json.RawMessage `json:"contentTypes"`
}

// SaveHubCache replaces the tenant's stored hub list.
func (s *Store) SaveHubCache(ctx context.Context, t *platform.Tenant, types []json.RawMessage) error {
	b, err := json.Marshal(HubCache{FetchedAt: s.now(), ContentTypes: types})
	if err != nil {
		return fmt.Errorf("h5pstore: encode hub cache: %w", err)
	}
	if err := t.Blob.Put(ctx, hubCacheKey, bytes.NewReader(b), int64(len(b)), "application/json"); err != nil {
		return fmt.Errorf("h5pstore: save hub cache: %w", err)
	}
	return nil
}

// LoadHubCache reads the tenant's stored hub list; found is false when the
// hub was never read, or what is stored no longer parses.
func (s *Store) LoadHubCache(ctx context.Context, t *platform.Tenant) (c HubCache, found bool, err error) {
	rc, _, err := t.Blob.Get(ctx, hubCacheKey)
	if errors.Is(err, blob.ErrNotFound) {
		return HubCache{}, false, nil
	}
	if err != nil {
		return HubCache{}, false, fmt.Errorf("h5pstore: load hub cache: %w", err)
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxHubCache))
	if err != nil {
		return HubCache{}, false, fmt.Errorf("h5pstore: load hub cache: %w", err)
	}
	if json.Unmarshal(b, &c) != nil {
		return HubCache{}, false, nil
	}
	return c, true, nil
}
