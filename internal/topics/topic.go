// Package topics holds the topics of lessons: authoring, attachments and
// the content each topic holds, through the kinds of package content.
package topics

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Topic is a topic with its content value (JSON shaped by its kind).
type Topic struct {
	ID            int64
	LessonID      int64
	CourseID      int64
	Title         string
	Summary       string
	Position      int
	Preview       bool
	Active        bool
	CanSkip       bool
	Duration      string
	TopicableType string
	Content       json.RawMessage
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

const topicColumns = `id, lesson_id, course_id, title, summary, position, preview, active, can_skip, duration,
	topicable_type, content, created_at, updated_at`

func scanTopic(row interface{ Scan(...any) error }) (Topic, error) {
	var t Topic
	var content string
	err := row.Scan(&t.ID, &t.LessonID, &t.CourseID, &t.Title, &t.Summary, &t.Position, &t.Preview, &t.Active,
		&t.CanSkip, &t.Duration, &t.TopicableType, &content, &t.CreatedAt, &t.UpdatedAt)
	t.Content = json.RawMessage(content)
	return t, err
}

// ByID loads a topic; NotFound when absent.
func ByID(ctx context.Context, q sqldb.Querier, id int64) (Topic, error) {
	t, err := scanTopic(q.QueryRowContext(ctx, `SELECT `+topicColumns+` FROM topics WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return t, apperr.New(apperr.NotFound, "Topic not found.")
	}
	if err != nil {
		return t, fmt.Errorf("topics: load topic %d: %w", id, err)
	}
	return t, nil
}

// ForCourse lists every topic of a course in one query, ordered by lesson
// position then topic position, so a program costs a fixed number of
// queries whatever the course's size.
func ForCourse(ctx context.Context, q sqldb.Querier, courseID int64) ([]Topic, error) {
	return queryTopics(ctx, q, `SELECT `+topicColumns+` FROM topics WHERE course_id = $1
		ORDER BY lesson_id, position, id`, courseID)
}

func queryTopics(ctx context.Context, q sqldb.Querier, query string, args ...any) ([]Topic, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("topics: list topics: %w", err)
	}
	defer rows.Close()
	out := []Topic{}
	for rows.Next() {
		t, err := scanTopic(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Placements lists the topics of several courses by course with only where
// they sit and whether they are active (id, lesson, course, active), in
// lesson then topic order: what counting a program's topics needs.
func Placements(ctx context.Context, q sqldb.Querier, courseIDs []int64) (map[int64][]Topic, error) {
	out := map[int64][]Topic{}
	if len(courseIDs) == 0 {
		return out, nil
	}
	var a sqldb.Args
	rows, err := q.QueryContext(ctx, `SELECT id, lesson_id, course_id, active FROM topics
		WHERE course_id IN (`+a.List(courseIDs)+`) ORDER BY lesson_id, position, id`, a...)
	if err != nil {
		return nil, fmt.Errorf("topics: list topics: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t Topic
		if err := rows.Scan(&t.ID, &t.LessonID, &t.CourseID, &t.Active); err != nil {
			return nil, err
		}
		out[t.CourseID] = append(out[t.CourseID], t)
	}
	return out, rows.Err()
}

// CourseOf returns the id of the course a topic belongs to; NotFound when
// the topic is absent.
func CourseOf(ctx context.Context, q sqldb.Querier, topicID int64) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT course_id FROM topics WHERE id = $1`, topicID).Scan(&id)
	if sqldb.NotFound(err) {
		return 0, apperr.New(apperr.NotFound, "Topic not found.")
	}
	if err != nil {
		return 0, fmt.Errorf("topics: find course of topic %d: %w", topicID, err)
	}
	return id, nil
}

// Contents returns the content value of every topic of a content class,
// by topic id: a kind reads it to know which topics use one of its
// packages.
func Contents(ctx context.Context, q sqldb.Querier, class string) (map[int64]json.RawMessage, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, content FROM topics WHERE topicable_type = $1`, class)
	if err != nil {
		return nil, fmt.Errorf("topics: contents of %s: %w", class, err)
	}
	defer rows.Close()
	out := map[int64]json.RawMessage{}
	for rows.Next() {
		var id int64
		var doc string
		if err := rows.Scan(&id, &doc); err != nil {
			return nil, err
		}
		out[id] = json.RawMessage(doc)
	}
	return out, rows.Err()
}
