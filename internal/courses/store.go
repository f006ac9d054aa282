package courses

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

const courseColumns = `id, title, summary, description, image_path, language, level, status, active_from,
	active_to, hours_to_complete, is_public, findable, position, created_at, updated_at`

func scanCourse(row interface{ Scan(...any) error }) (Course, error) {
	var c Course
	var image sql.NullString
	var from, to sql.NullTime
	var hours sql.NullInt64
	err := row.Scan(&c.ID, &c.Title, &c.Summary, &c.Description, &image, &c.Language, &c.Level, &c.Status,
		&from, &to, &hours, &c.Public, &c.Findable, &c.Position, &c.CreatedAt, &c.UpdatedAt)
	if image.Valid {
		c.ImagePath = &image.String
	}
	c.ActiveFrom, c.ActiveTo = timePtr(from), timePtr(to)
	if hours.Valid {
		h := int(hours.Int64)
		c.HoursToComplete = &h
	}
	return c, err
}

func timePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time
	return &v
}

// ByID loads a course with its authors, categories and tags; NotFound
// when absent.
func ByID(ctx context.Context, q sqldb.Querier, id int64) (Course, error) {
	c, err := scanCourse(q.QueryRowContext(ctx, `SELECT `+courseColumns+` FROM courses WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return c, apperr.New(apperr.NotFound, "Course not found.")
	}
	if err != nil {
		return c, fmt.Errorf("courses: load course %d: %w", id, err)
	}
	if c.Authors, err = int64s(ctx, q, `SELECT user_id FROM course_authors WHERE course_id = $1 ORDER BY user_id`, id); err != nil {
		return c, err
	}
	if c.Categories, err = int64s(ctx, q, `SELECT category_id FROM course_categories WHERE course_id = $1 ORDER BY category_id`, id); err != nil {
		return c, err
	}
	rows, err := q.QueryContext(ctx, `SELECT tag FROM course_tags WHERE course_id = $1 ORDER BY tag`, id)
	if err != nil {
		return c, fmt.Errorf("courses: load tags: %w", err)
	}
	defer rows.Close()
	c.Tags = []string{}
	for rows.Next() {
		var tag string
		if err := rows.Scan(&tag); err != nil {
			return c, err
		}
		c.Tags = append(c.Tags, tag)
	}
	return c, rows.Err()
}

func int64s(ctx context.Context, q sqldb.Querier, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("courses: %w", err)
	}
	defer rows.Close()
	out := []int64{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

const lessonColumns = `id, course_id, parent_id, title, summary, duration, position, active, active_from,
	active_to, created_at, updated_at`

func scanLesson(row interface{ Scan(...any) error }) (Lesson, error) {
	var l Lesson
	var parent sql.NullInt64
	var from, to sql.NullTime
	err := row.Scan(&l.ID, &l.CourseID, &parent, &l.Title, &l.Summary, &l.Duration, &l.Position, &l.Active,
		&from, &to, &l.CreatedAt, &l.UpdatedAt)
	if parent.Valid {
		l.ParentID = &parent.Int64
	}
	l.ActiveFrom, l.ActiveTo = timePtr(from), timePtr(to)
	return l, err
}

// LessonByID loads a lesson; NotFound when absent.
func LessonByID(ctx context.Context, q sqldb.Querier, id int64) (Lesson, error) {
	l, err := scanLesson(q.QueryRowContext(ctx, `SELECT `+lessonColumns+` FROM lessons WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return l, apperr.New(apperr.NotFound, "Lesson not found.")
	}
	if err != nil {
		return l, fmt.Errorf("courses: load lesson %d: %w", id, err)
	}
	return l, nil
}

// Lessons lists every lesson of a course (nested ones included) in one
// query, ordered by position then id.
func Lessons(ctx context.Context, q sqldb.Querier, courseID int64) ([]Lesson, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+lessonColumns+` FROM lessons WHERE course_id = $1 ORDER BY position, id`, courseID)
	if err != nil {
		return nil, fmt.Errorf("courses: list lessons: %w", err)
	}
	defer rows.Close()
	out := []Lesson{}
	for rows.Next() {
		l, err := scanLesson(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, rows.Err()
}
