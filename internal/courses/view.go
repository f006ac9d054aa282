package courses

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Person is a user as courses name one: an author, a tutor.
type Person struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// CategoryRef is a category a course belongs to.
type CategoryRef struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// CourseView is the shape of a course in API responses.
type CourseView struct {
	ID              int64         `json:"id"`
	Title           string        `json:"title"`
	Summary         string        `json:"summary"`
	Description     string        `json:"description"`
	ImagePath       *string       `json:"image_path"`
	ImageURL        *string       `json:"image_url,omitempty"`
	Language        string        `json:"language"`
	Level           string        `json:"level"`
	Status          Status        `json:"status"`
	ActiveFrom      *time.Time    `json:"active_from"`
	ActiveTo        *time.Time    `json:"active_to"`
	HoursToComplete *int          `json:"hours_to_complete"`
	Public          bool          `json:"public"`
	Findable        bool          `json:"findable"`
	Position        int           `json:"position"`
	Authors         []Person      `json:"authors"`
	Categories      []CategoryRef `json:"categories"`
	Tags            []string      `json:"tags"`
	CreatedAt       time.Time     `json:"created_at"`
	UpdatedAt       time.Time     `json:"updated_at"`
}

// view renders one course with its relations.
func (s *Service) view(ctx context.Context, t *platform.Tenant, q sqldb.Querier, c Course) (CourseView, error) {
	vs, err := s.views(ctx, t, q, []Course{c})
	if err != nil {
		return CourseView{}, err
	}
	return vs[0], nil
}

// views renders courses with their authors, categories and tags, loaded in
// five queries whatever the number of courses.
func (s *Service) views(ctx context.Context, t *platform.Tenant, q sqldb.Querier, cs []Course) ([]CourseView, error) {
	rel, err := relationsOf(ctx, q, cs)
	if err != nil {
		return nil, err
	}
	return s.render(ctx, t, q, cs, rel)
}

// relations are what of the courses' authors, categories and tags the
// courses tables hold: ids by course, and tags by course.
type relations struct {
	authors    map[int64][]int64
	categories map[int64][]int64
	tags       map[int64][]string
}

// relationsOf loads the relations of cs in three queries.
func relationsOf(ctx context.Context, q sqldb.Querier, cs []Course) (relations, error) {
	var rel relations
	if len(cs) == 0 {
		return rel, nil
	}
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	var err error
	rel.authors, err = related(ctx, q, `SELECT course_id, user_id FROM course_authors WHERE course_id IN (`, ids,
		`) ORDER BY user_id`)
	if err != nil {
		return rel, fmt.Errorf("courses: load authors: %w", err)
	}
	rel.categories, err = related(ctx, q, `SELECT course_id, category_id FROM course_categories WHERE course_id IN (`, ids,
		`) ORDER BY category_id`)
	if err != nil {
		return rel, fmt.Errorf("courses: load categories: %w", err)
	}
	rel.tags = map[int64][]string{}
	err = eachRow(ctx, q, `SELECT course_id, tag FROM course_tags WHERE course_id IN (`, ids, `) ORDER BY tag`,
		func(scan func(...any) error) error {
			var courseID int64
			var tag string
			if err := scan(&courseID, &tag); err != nil {
				return err
			}
			rel.tags[courseID] = append(rel.tags[courseID], tag)
			return nil
		})
	if err != nil {
		return rel, fmt.Errorf("courses: load tags: %w", err)
	}
	return rel, nil
}

// render shows cs with their relations, naming authors and categories
// as accounts names them now (two queries).
func (s *Service) render(ctx context.Context, t *platform.Tenant, q sqldb.Querier, cs []Course, rel relations) ([]CourseView, error) {
	out := make([]CourseView, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	people, err := accounts.Refs(ctx, q, flatten(rel.authors))
	if err != nil {
		return nil, err
	}
	authors := map[int64][]Person{}
	for courseID, list := range rel.authors {
		for _, id := range list {
			if u, ok := people[id]; ok {
				authors[courseID] = append(authors[courseID], Person{ID: id, Name: u.Name()})
			}
		}
	}
	names, err := accounts.CategoryNames(ctx, q, flatten(rel.categories))
	if err != nil {
		return nil, err
	}
	categories := map[int64][]CategoryRef{}
	for courseID, list := range rel.categories {
		for _, id := range list {
			if name, ok := names[id]; ok {
				categories[courseID] = append(categories[courseID], CategoryRef{ID: id, Name: name})
			}
		}
		slices.SortFunc(categories[courseID], func(a, b CategoryRef) int {
			return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.ID, b.ID))
		})
	}
	for i, c := range cs {
		v := CourseView{ID: c.ID, Title: c.Title, Summary: c.Summary, Description: c.Description, ImagePath: c.ImagePath,
			Language: c.Language, Level: c.Level, Status: c.Status, ActiveFrom: c.ActiveFrom, ActiveTo: c.ActiveTo,
			HoursToComplete: c.HoursToComplete, Public: c.Public, Findable: c.Findable, Position: c.Position,
			Authors: nonNil(authors[c.ID]), Categories: nonNil(categories[c.ID]), Tags: nonNil(rel.tags[c.ID]),
			CreatedAt: c.CreatedAt.UTC(), UpdatedAt: c.UpdatedAt.UTC()}
		if c.ImagePath != nil && s.FileURL != nil {
			u := s.FileURL(t, *c.ImagePath)
			v.ImageURL = &u
		}
		out[i] = v
	}
	return out, nil
}

// eachRow runs before + "$1, $2, ..." (one per id) + after and calls fn
// with each row's Scan.
func eachRow(ctx context.Context, q sqldb.Querier, before string, ids []int64, after string,
	fn func(scan func(...any) error) error) error {
	var a sqldb.Args
	rows, err := q.QueryContext(ctx, before+a.List(ids)+after, a...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// related reads pairs (course id, other id) for the courses of ids, by
// course.
func related(ctx context.Context, q sqldb.Querier, before string, ids []int64, after string) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	err := eachRow(ctx, q, before, ids, after, func(scan func(...any) error) error {
		var courseID, id int64
		if err := scan(&courseID, &id); err != nil {
			return err
		}
		out[courseID] = append(out[courseID], id)
		return nil
	})
	return out, err
}

// flatten lists every id of a map of lists once.
func flatten(m map[int64][]int64) []int64 {
	var out []int64
	for _, list := range m {
		out = append(out, list...)
	}
	return sqldb.UniqueIDs(out)
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// LessonView is the shape of a lesson in API responses.
type LessonView struct {
	ID         int64      `json:"id"`
	CourseID   int64      `json:"course_id"`
	ParentID   *int64     `json:"parent_lesson_id"`
	Title      string     `json:"title"`
	Summary    string     `json:"summary"`
	Duration   string     `json:"duration"`
	Position   int        `json:"order"`
	Active     bool       `json:"active"`
	ActiveFrom *time.Time `json:"active_from"`
	ActiveTo   *time.Time `json:"active_to"`
	CreatedAt  time.Time  `json:"created_at"`
	UpdatedAt  time.Time  `json:"updated_at"`
}

func lessonView(l Lesson) LessonView {
	return LessonView{ID: l.ID, CourseID: l.CourseID, ParentID: l.ParentID, Title: l.Title, Summary: l.Summary,
		Duration: l.Duration, Position: l.Position, Active: l.Active, ActiveFrom: l.ActiveFrom, ActiveTo: l.ActiveTo,
		CreatedAt: l.CreatedAt.UTC(), UpdatedAt: l.UpdatedAt.UTC()}
}
