package courses

import (
	"context"
	"fmt"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The public catalogue: what anyone, signed in or not, may find.

// Catalogue returns a page of the published (or published, not yet
// activated) courses that are findable.
func (s *Service) Catalogue(ctx context.Context, t *platform.Tenant, f CourseFilter) ([]CourseView, int64, error) {
	f.Listed, f.Status, f.AuthorID = true, "", 0
	page, err := s.cataloguePageOf(ctx, t, f)
	if err != nil {
		return nil, 0, err
	}
	// The kept page is shared: callers get their own slice of it.
	return slices.Clone(page.views), page.total, nil
}

// PublicCourse returns a published course, findable or not. Other
// courses are not found, except by callers who may read them in the admin
// API.
func (s *Service) PublicCourse(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (CourseView, error) {
	c, err := ByID(ctx, t.DB, id)
	if err != nil {
		return CourseView{}, err
	}
	if !c.Status.Listed() && (p == nil || !(CanRead(p, c) || CanEdit(p, c))) {
		return CourseView{}, errCourseNotFound
	}
	return s.view(ctx, t, t.DB, c)
}

// Authored returns a page of the courses the caller authors, of any
// status.
func (s *Service) Authored(ctx context.Context, t *platform.Tenant, p *access.Principal, f CourseFilter) ([]CourseView, int64, error) {
	f.AuthorID = p.UserID
	return s.list(ctx, t, f)
}

// UniqueTags lists the distinct tags of the catalogue's courses.
func (s *Service) UniqueTags(ctx context.Context, t *platform.Tenant) ([]string, error) {
	tags, err := sqldb.Column[string](t.DB.QueryContext(ctx, `SELECT DISTINCT ct.tag FROM course_tags ct
		JOIN courses c ON c.id = ct.course_id WHERE c.status IN ($1, $2) AND c.findable = $3 ORDER BY ct.tag`,
		string(Published), string(PublishedUnactivated), true))
	if err != nil {
		return nil, fmt.Errorf("courses: list unique tags: %w", err)
	}
	return tags, nil
}
