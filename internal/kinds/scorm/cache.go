package scorm

import "sync"

type prefixCacheKey struct{}

// prefixCache maps package ids to blob prefixes for one tenant handle.
type prefixCache struct {
	mu sync.RWMutex
	m  map[int64]string
}

func (c *prefixCache) get(id int64) (string, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.m[id]
	return p, ok
}

func (c *prefixCache) put(id int64, p string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = p
}

type packageCacheKey struct{}

// packageCache keeps parsed packages for one tenant handle; a deleted
// tenant database takes its handle, and so this cache, with it.
type packageCache struct {
	mu sync.RWMutex
	m  map[int64]storedPackage
}

func (c *packageCache) get(id int64) (storedPackage, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	p, ok := c.m[id]
	return p, ok
}

func (c *packageCache) put(id int64, p storedPackage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = p
}

// forget drops a deleted package from the caches of the tenant handle.
func forget(t interface{ Local(any, func() any) any }, id int64) {
	pc := t.Local(packageCacheKey{}, func() any { return &packageCache{m: map[int64]storedPackage{}} }).(*packageCache)
	pc.mu.Lock()
	delete(pc.m, id)
	pc.mu.Unlock()
	xc := t.Local(prefixCacheKey{}, func() any { return &prefixCache{m: map[int64]string{}} }).(*prefixCache)
	xc.mu.Lock()
	delete(xc.m, id)
	xc.mu.Unlock()
}
