package courses

import (
	"context"
	"fmt"
	"strings"
	"time"

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
// three queries whatever the number of courses.
func (s *Service) views(ctx context.Context, t *platform.Tenant, q sqldb.Querier, cs []Course) ([]CourseView, error) {
	out := make([]CourseView, len(cs))
	if len(cs) == 0 {
		return out, nil
	}
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	authors := map[int64][]Person{}
	err := eachRow(ctx, q, `SELECT ca.course_id, u.id, u.first_name, u.last_name FROM course_authors ca
		JOIN users u ON u.id = ca.user_id WHERE ca.course_id IN (`, ids, `) ORDER BY u.id`, func(scan func(...any) error) error {
		var courseID int64
		var p Person
		var first, last string
		if err := scan(&courseID, &p.ID, &first, &last); err != nil {
			return err
		}
		p.Name = strings.TrimSpace(first + " " + last)
		authors[courseID] = append(authors[courseID], p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("courses: load authors: %w", err)
	}
	categories := map[int64][]CategoryRef{}
	err = eachRow(ctx, q, `SELECT cc.course_id, c.id, c.name FROM course_categories cc
		JOIN categories c ON c.id = cc.category_id WHERE cc.course_id IN (`, ids, `) ORDER BY c.name, c.id`, func(scan func(...any) error) error {
		var courseID int64
		var c CategoryRef
		if err := scan(&courseID, &c.ID, &c.Name); err != nil {
			return err
		}
		categories[courseID] = append(categories[courseID], c)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("courses: load categories: %w", err)
	}
	tags := map[int64][]string{}
	err = eachRow(ctx, q, `SELECT course_id, tag FROM course_tags WHERE course_id IN (`, ids, `) ORDER BY tag`,
		func(scan func(...any) error) error {
			var courseID int64
			var tag string
			if err := scan(&courseID, &tag); err != nil {
				return err
			}
			tags[courseID] = append(tags[courseID], tag)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("courses: load tags: %w", err)
	}
	for i, c := range cs {
		v := CourseView{ID: c.ID, Title: c.Title, Summary: c.Summary, Description: c.Description, ImagePath: c.ImagePath,
			Language: c.Language, Level: c.Level, Status: c.Status, ActiveFrom: c.ActiveFrom, ActiveTo: c.ActiveTo,
			HoursToComplete: c.HoursToComplete, Public: c.Public, Findable: c.Findable, Position: c.Position,
			Authors: nonNil(authors[c.ID]), Categories: nonNil(categories[c.ID]), Tags: nonNil(tags[c.ID]),
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
