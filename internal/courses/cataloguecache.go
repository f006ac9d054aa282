package courses

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/versioned"
)

// The public catalogue is read by every visitor and changes rarely, and
// finding a page of it (count, page, authors, categories, tags) is most of
// its cost. So each tenant keeps the pages it served in memory, checked on
// every read against catalogue_version, a counter that database triggers
// move whenever a course or its authors, categories or tags change,
// whoever changes them, and whenever an author's or a category's name
// changes, so a page is kept rendered whole. A page asked with no_expired
// depends on the time and is not kept. An entry also expires after
// catalogueTTL, so that a counter that went back (a tenant's database
// restored from a backup) cannot keep an old page for long, well within
// the life of the signed image links it holds.
const (
	catalogueTTL     = 5 * time.Minute
	catalogueEntries = 256
)

// cataloguePage is one page of the catalogue, rendered.
type cataloguePage struct {
	views []CourseView
	total int64
}

type catalogueCacheKey struct{}

func catalogueCacheOf(t *platform.Tenant) *versioned.Cache[CourseFilter, *cataloguePage] {
	return t.Local(catalogueCacheKey{}, func() any {
		return versioned.New[CourseFilter, *cataloguePage](catalogueEntries)
	}).(*versioned.Cache[CourseFilter, *cataloguePage])
}

// catalogueVersion reads the tenant's catalogue counter. It is read before
// the page, so a change committed in between makes the entry stale rather
// than wrongly fresh.
func catalogueVersion(ctx context.Context, q sqldb.Querier) (int64, error) {
	var v int64
	if err := q.QueryRowContext(ctx, `SELECT version FROM catalogue_version WHERE id = 1`).Scan(&v); err != nil {
		return 0, fmt.Errorf("courses: catalogue version: %w", err)
	}
	return v, nil
}

// cataloguePageOf returns the page of the catalogue f selects, from the
// cache when it is current.
func (s *Service) cataloguePageOf(ctx context.Context, t *platform.Tenant, f CourseFilter) (*cataloguePage, error) {
	now := s.now()
	cacheable := f.NotEndedAt == nil
	cache := catalogueCacheOf(t)
	var version int64
	if cacheable {
		var err error
		if version, err = catalogueVersion(ctx, t.DB); err != nil {
			return nil, err
		}
		if cached, ok := cache.Get(f, version, now); ok {
			return cached, nil
		}
	}
	cs, total, err := listCourses(ctx, t.DB, f)
	if err != nil {
		return nil, err
	}
	rel, err := relationsOf(ctx, t.DB, cs)
	if err != nil {
		return nil, err
	}
	e := &cataloguePage{total: total}
	if e.views, err = s.render(ctx, t, t.DB, cs, rel); err != nil {
		return nil, err
	}
	if cacheable {
		cache.Put(f, version, now.Add(catalogueTTL), now, e)
	}
	return e, nil
}
