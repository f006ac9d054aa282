package accounts

import (
	"slices"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
)

// GET /api/profile/me is read on every page a client shows, and the
// account with its groups, categories and interests costs two queries. So
// each tenant keeps its users' details as the principals are kept (package
// auth): every change the platform makes to what a detail shows names the
// user (access.UserKey: the account, its roles, categories, interests and
// memberships) or every user (access.GroupsKey: a group renamed, moved or
// deleted) on the change feed, which drops the kept details at once in
// every process that shares the feed. profileTTL bounds only the changes
// the feed does not carry (SQL run by hand, a command run on the same
// SQLite files without Redis), as for principals.
const (
	profileTTL     = 5 * time.Second
	profileEntries = 4096
)

type profileCache struct {
	mu sync.Mutex
	// heard counts the changes heard; a detail loaded while one arrived
	// may predate it and is not kept.
	heard  uint64
	byUser map[int64]keptDetail
}

type keptDetail struct {
	d       Detail
	expires time.Time
}

type profileCacheKey struct{}

func profilesOf(t *platform.Tenant) *profileCache {
	return t.Local(profileCacheKey{}, func() any {
		c := &profileCache{byUser: map[int64]keptDetail{}}
		t.Watch(c.changed)
		return c
	}).(*profileCache)
}

// get returns the user's kept detail and true, or the count of changes
// heard to hand to put with the detail loaded from the database.
func (c *profileCache) get(userID int64, now time.Time) (Detail, uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byUser[userID]
	if ok && now.Before(e.expires) {
		return e.d, 0, true
	}
	return Detail{}, c.heard, false
}

func (c *profileCache) put(userID int64, d Detail, heard uint64, expires time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if heard != c.heard {
		return
	}
	if len(c.byUser) >= profileEntries {
		clear(c.byUser)
	}
	c.byUser[userID] = keptDetail{d: d, expires: expires}
}

// changed drops the details that the changed data was part of.
func (c *profileCache) changed(keys []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.heard++
	if slices.Contains(keys, access.TenantKey) || slices.Contains(keys, access.GroupsKey) {
		clear(c.byUser)
		return
	}
	for id := range c.byUser {
		if slices.Contains(keys, access.UserKey(id)) {
			delete(c.byUser, id)
		}
	}
}
