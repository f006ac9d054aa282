package courses

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
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
	v := t.Time.UTC()
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
	tags, err := sqldb.Column[string](q.QueryContext(ctx, `SELECT tag FROM course_tags WHERE course_id = $1 ORDER BY tag`, id))
	if err != nil {
		return c, fmt.Errorf("courses: load tags: %w", err)
	}
	c.Tags = tags
	return c, nil
}

func int64s(ctx context.Context, q sqldb.Querier, query string, args ...any) ([]int64, error) {
	ids, err := sqldb.Column[int64](q.QueryContext(ctx, query, args...))
	if err != nil {
		return nil, fmt.Errorf("courses: %w", err)
	}
	return ids, nil
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

// insertCourse adds the course's row after the last position and returns
// its id.
func insertCourse(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO courses (title, summary, description, image_path, language, level,
		status, active_from, active_to, hours_to_complete, is_public, findable, position, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12,
			(SELECT COALESCE(MAX(position), 0) + 1 FROM courses), $13, $13) RETURNING id`,
		c.Title, c.Summary, c.Description, c.ImagePath, c.Language, c.Level, string(c.Status), c.ActiveFrom, c.ActiveTo,
		c.HoursToComplete, c.Public, c.Findable, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("courses: create course: %w", err)
	}
	return id, nil
}

// updateCourse writes the course's own columns.
func updateCourse(ctx context.Context, tx *sqldb.Tx, now time.Time, c Course) error {
	_, err := tx.ExecContext(ctx, `UPDATE courses SET title = $1, summary = $2, description = $3, image_path = $4,
		language = $5, level = $6, status = $7, active_from = $8, active_to = $9, hours_to_complete = $10,
		is_public = $11, findable = $12, updated_at = $13 WHERE id = $14`,
		c.Title, c.Summary, c.Description, c.ImagePath, c.Language, c.Level, string(c.Status), c.ActiveFrom, c.ActiveTo,
		c.HoursToComplete, c.Public, c.Findable, now, c.ID)
	if err != nil {
		return fmt.Errorf("courses: update course %d: %w", c.ID, err)
	}
	return nil
}

// setRelations replaces the course's categories and tags; nil leaves
// them as they are.
func setRelations(ctx context.Context, tx *sqldb.Tx, courseID int64, categories []int64, tags []string) error {
	if categories != nil {
		if _, err := tx.ExecContext(ctx, `DELETE FROM course_categories WHERE course_id = $1`, courseID); err != nil {
			return fmt.Errorf("courses: clear categories: %w", err)
		}
		for _, id := range sqldb.UniqueIDs(categories) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO course_categories (course_id, category_id) VALUES ($1, $2)`,
				courseID, id); err != nil {
				return fmt.Errorf("courses: set category: %w", err)
			}
		}
	}
	if tags != nil {
		if _, err := tx.ExecContext(ctx, `DELETE FROM course_tags WHERE course_id = $1`, courseID); err != nil {
			return fmt.Errorf("courses: clear tags: %w", err)
		}
		for _, tag := range tags {
			if _, err := tx.ExecContext(ctx, `INSERT INTO course_tags (course_id, tag) VALUES ($1, $2)`, courseID, tag); err != nil {
				return fmt.Errorf("courses: set tag: %w", err)
			}
		}
	}
	return nil
}

// courseOrder maps order_by values to columns.
var courseOrder = map[string]string{"id": "id", "title": "LOWER(title)", "created_at": "created_at", "position": "position"}

// listCourses returns one page of the courses f selects and how many
// there are.
func listCourses(ctx context.Context, q sqldb.Querier, f CourseFilter) ([]Course, int64, error) {
	var a sqldb.Args
	var where []string
	if strings.TrimSpace(f.Title) != "" {
		where = append(where, `LOWER(title) LIKE LOWER(`+a.Add(sqldb.Contains(f.Title))+`) ESCAPE '\'`)
	}
	if f.Status != "" {
		where = append(where, `status = `+a.Add(f.Status))
	}
	if f.Listed {
		where = append(where, `status IN (`+a.Add(string(Published))+`, `+a.Add(string(PublishedUnactivated))+`) AND findable = `+a.Add(true))
	}
	if f.NotEndedAt != nil {
		where = append(where, `(active_to IS NULL OR active_to > `+a.Add(f.NotEndedAt.UTC())+`)`)
	}
	if f.CategoryID != 0 {
		where = append(where, `id IN (SELECT course_id FROM course_categories WHERE category_id = `+a.Add(f.CategoryID)+`)`)
	}
	if strings.TrimSpace(f.Tag) != "" {
		where = append(where, `id IN (SELECT course_id FROM course_tags WHERE tag = `+a.Add(strings.TrimSpace(f.Tag))+`)`)
	}
	if f.AuthorID != 0 {
		where = append(where, `id IN (SELECT course_id FROM course_authors WHERE user_id = `+a.Add(f.AuthorID)+`)`)
	}
	cond := sqldb.Where(where)
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM courses`+cond, a...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("courses: count courses: %w", err)
	}
	order := courseOrder[f.OrderBy]
	if order == "" {
		order = "id"
	}
	dir := sqldb.Direction(f.Desc)
	rows, err := q.QueryContext(ctx, `SELECT `+courseColumns+` FROM courses`+cond+` ORDER BY `+order+dir+`, id`+dir+
		` LIMIT `+a.Add(f.Limit)+` OFFSET `+a.Add(f.Offset), a...)
	if err != nil {
		return nil, 0, fmt.Errorf("courses: list courses: %w", err)
	}
	defer rows.Close()
	out := []Course{}
	for rows.Next() {
		c, err := scanCourse(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

// Rows loads the courses of ids without their authors, categories and
// tags, by id; absent ids are left out.
func Rows(ctx context.Context, q sqldb.Querier, ids []int64) ([]Course, error) {
	out := []Course{}
	if len(ids) == 0 {
		return out, nil
	}
	var a sqldb.Args
	rows, err := q.QueryContext(ctx, `SELECT `+courseColumns+` FROM courses WHERE id IN (`+a.List(ids)+`) ORDER BY id`, a...)
	if err != nil {
		return nil, fmt.Errorf("courses: load courses: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c, err := scanCourse(rows)
		if err != nil {
			return nil, fmt.Errorf("courses: scan course: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// LessonsOf loads the lessons of several courses by course, each course's
// in program order, with only what placing topics needs: id, course,
// parent and active.
func LessonsOf(ctx context.Context, q sqldb.Querier, courseIDs []int64) (map[int64][]Lesson, error) {
	out := map[int64][]Lesson{}
	if len(courseIDs) == 0 {
		return out, nil
	}
	var a sqldb.Args
	rows, err := q.QueryContext(ctx, `SELECT id, course_id, parent_id, active FROM lessons
		WHERE course_id IN (`+a.List(courseIDs)+`) ORDER BY position, id`, a...)
	if err != nil {
		return nil, fmt.Errorf("courses: list lessons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l Lesson
		var parent sql.NullInt64
		if err := rows.Scan(&l.ID, &l.CourseID, &parent, &l.Active); err != nil {
			return nil, err
		}
		if parent.Valid {
			l.ParentID = &parent.Int64
		}
		out[l.CourseID] = append(out[l.CourseID], l)
	}
	return out, rows.Err()
}

// Authored lists the ids of the courses the user authors.
func Authored(ctx context.Context, q sqldb.Querier, userID int64) ([]int64, error) {
	return int64s(ctx, q, `SELECT course_id FROM course_authors WHERE user_id = $1 ORDER BY course_id`, userID)
}

// LessonSubtree lists the lesson and every lesson nested in it, at any
// depth.
func LessonSubtree(ctx context.Context, q sqldb.Querier, lessonID int64) ([]int64, error) {
	return int64s(ctx, q, `WITH RECURSIVE sub(id) AS (
			SELECT id FROM lessons WHERE id = $1
			UNION SELECT l.id FROM lessons l JOIN sub ON l.parent_id = sub.id)
		SELECT id FROM sub ORDER BY id`, lessonID)
}

// Title is a course's title for messages and certificates; "" for a
// course that no longer exists.
func Title(ctx context.Context, q sqldb.Querier, id int64) (string, error) {
	var title string
	err := q.QueryRowContext(ctx, `SELECT title FROM courses WHERE id = $1`, id).Scan(&title)
	if sqldb.NotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("courses: title of %d: %w", id, err)
	}
	return title, nil
}

// Count is how many courses the tenant has, for the platform's list of
// tenants.
func Count(ctx context.Context, q sqldb.Querier) (int64, error) {
	var n int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM courses`).Scan(&n); err != nil {
		return 0, fmt.Errorf("courses: count: %w", err)
	}
	return n, nil
}
