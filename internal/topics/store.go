package topics

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

func insertTopic(ctx context.Context, q sqldb.Querier, t Topic) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO topics (lesson_id, course_id, title, summary, position, preview, active,
		can_skip, duration, topicable_type, content, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id`,
		t.LessonID, t.CourseID, t.Title, t.Summary, t.Position, t.Preview, t.Active, t.CanSkip, t.Duration,
		t.TopicableType, string(t.Content), t.CreatedAt).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("topics: insert topic: %w", err)
	}
	return id, nil
}

func updateTopic(ctx context.Context, q sqldb.Querier, t Topic) error {
	_, err := q.ExecContext(ctx, `UPDATE topics SET lesson_id = $1, course_id = $2, title = $3, summary = $4,
		position = $5, preview = $6, active = $7, can_skip = $8, duration = $9, topicable_type = $10, content = $11,
		updated_at = $12 WHERE id = $13`,
		t.LessonID, t.CourseID, t.Title, t.Summary, t.Position, t.Preview, t.Active, t.CanSkip, t.Duration,
		t.TopicableType, string(t.Content), t.UpdatedAt, t.ID)
	if err != nil {
		return fmt.Errorf("topics: update topic %d: %w", t.ID, err)
	}
	return nil
}

// nextPosition is the position after the lesson's last topic.
func nextPosition(ctx context.Context, q sqldb.Querier, lessonID int64) (int, error) {
	var pos int
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(position), 0) + 1 FROM topics WHERE lesson_id = $1`, lessonID).Scan(&pos)
	if err != nil {
		return 0, fmt.Errorf("topics: next position: %w", err)
	}
	return pos, nil
}

// filter selects topics in admin lists. CourseIDs, when not nil, keeps
// the topics of those courses (a tutor's own).
type filter struct {
	LessonID, CourseID int64
	TopicableType      string
	Title              string
	CourseIDs          []int64
	Offset, Limit      int
}

func (f filter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		args = append(args, arg)
		conds = append(conds, strings.ReplaceAll(cond, "$?", fmt.Sprintf("$%d", len(args))))
	}
	if f.LessonID != 0 {
		add("lesson_id = $?", f.LessonID)
	}
	if f.CourseID != 0 {
		add("course_id = $?", f.CourseID)
	}
	if f.TopicableType != "" {
		add("topicable_type = $?", f.TopicableType)
	}
	if f.Title != "" {
		add(`LOWER(title) LIKE $? ESCAPE '\'`, sqldb.Contains(strings.ToLower(f.Title)))
	}
	if f.CourseIDs != nil {
		in := []string{"0"} // no course has id 0: an empty list keeps nothing
		for _, id := range f.CourseIDs {
			args = append(args, id)
			in = append(in, fmt.Sprintf("$%d", len(args)))
		}
		conds = append(conds, "course_id IN ("+strings.Join(in, ", ")+")")
	}
	return sqldb.Where(conds), args
}

func listTopics(ctx context.Context, q sqldb.Querier, f filter) ([]Topic, int64, error) {
	where, args := f.where()
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM topics`+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("topics: count topics: %w", err)
	}
	n := len(args)
	args = append(args, f.Limit, f.Offset)
	rows, err := q.QueryContext(ctx, fmt.Sprintf(`SELECT `+topicColumns+` FROM topics`+where+
		` ORDER BY course_id, lesson_id, position, id LIMIT $%d OFFSET $%d`, n+1, n+2), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("topics: list topics: %w", err)
	}
	defer rows.Close()
	out := []Topic{}
	for rows.Next() {
		t, err := scanTopic(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, t)
	}
	return out, total, rows.Err()
}

// forLesson lists a lesson's topics in order.
func forLesson(ctx context.Context, q sqldb.Querier, lessonID int64) ([]Topic, error) {
	return queryTopics(ctx, q, `SELECT `+topicColumns+` FROM topics WHERE lesson_id = $1 ORDER BY position, id`, lessonID)
}

// Resource is an attachment of a topic.
type Resource struct {
	ID          int64
	TopicID     int64
	Name        string
	Path        string
	Size        int64
	ContentType string
	CreatedAt   time.Time
}

const resourceColumns = `id, topic_id, name, path, size, content_type, created_at`

func scanResource(row interface{ Scan(...any) error }) (Resource, error) {
	var r Resource
	err := row.Scan(&r.ID, &r.TopicID, &r.Name, &r.Path, &r.Size, &r.ContentType, &r.CreatedAt)
	return r, err
}

func resourcesOf(ctx context.Context, q sqldb.Querier, topicID int64) ([]Resource, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+resourceColumns+` FROM topic_resources WHERE topic_id = $1 ORDER BY id`, topicID)
	if err != nil {
		return nil, fmt.Errorf("topics: list resources: %w", err)
	}
	defer rows.Close()
	out := []Resource{}
	for rows.Next() {
		r, err := scanResource(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// resourceByID loads a resource of the topic; NotFound when absent or of
// another topic.
func resourceByID(ctx context.Context, q sqldb.Querier, topicID, id int64) (Resource, error) {
	r, err := scanResource(q.QueryRowContext(ctx, `SELECT `+resourceColumns+` FROM topic_resources
		WHERE id = $1 AND topic_id = $2`, id, topicID))
	if sqldb.NotFound(err) {
		return r, apperr.New(apperr.NotFound, "Resource not found.")
	}
	if err != nil {
		return r, fmt.Errorf("topics: load resource %d: %w", id, err)
	}
	return r, nil
}

func insertResource(ctx context.Context, q sqldb.Querier, r Resource) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO topic_resources (topic_id, name, path, size, content_type, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, r.TopicID, r.Name, r.Path, r.Size, r.ContentType, r.CreatedAt).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("topics: insert resource: %w", err)
	}
	return id, nil
}

// Submission is a file a learner uploaded to a project topic.
type Submission struct {
	ID          int64
	TopicID     int64
	UserID      int64
	Name        string
	Path        string
	Size        int64
	ContentType string
	CreatedAt   time.Time
	// The submitting user, filled in by lists.
	Email     string
	FirstName string
	LastName  string
}

const submissionColumns = `id, topic_id, user_id, name, path, size, content_type, created_at`

func scanSubmission(row interface{ Scan(...any) error }) (Submission, error) {
	var s Submission
	err := row.Scan(&s.ID, &s.TopicID, &s.UserID, &s.Name, &s.Path, &s.Size, &s.ContentType, &s.CreatedAt)
	return s, err
}

// withLearners fills in the names and emails of the submissions' learners
// (accounts owns them).
func withLearners(ctx context.Context, q sqldb.Querier, list []Submission) error {
	ids := make([]int64, len(list))
	for i, s := range list {
		ids[i] = s.UserID
	}
	users, err := accounts.Refs(ctx, q, ids)
	if err != nil {
		return err
	}
	for i := range list {
		u := users[list[i].UserID]
		list[i].Email, list[i].FirstName, list[i].LastName = u.Email, u.FirstName, u.LastName
	}
	return nil
}

func insertSubmission(ctx context.Context, q sqldb.Querier, s Submission) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `INSERT INTO project_submissions (topic_id, user_id, name, path, size, content_type,
		created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
		s.TopicID, s.UserID, s.Name, s.Path, s.Size, s.ContentType, s.CreatedAt).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("topics: insert submission: %w", err)
	}
	return id, nil
}

func submissionByID(ctx context.Context, q sqldb.Querier, topicID, id int64) (Submission, error) {
	s, err := scanSubmission(q.QueryRowContext(ctx, `SELECT `+submissionColumns+` FROM project_submissions
		WHERE id = $1 AND topic_id = $2`, id, topicID))
	if sqldb.NotFound(err) {
		return s, apperr.New(apperr.NotFound, "Submission not found.")
	}
	if err != nil {
		return s, fmt.Errorf("topics: load submission %d: %w", id, err)
	}
	list := []Submission{s}
	err = withLearners(ctx, q, list)
	return list[0], err
}

func listSubmissions(ctx context.Context, q sqldb.Querier, topicID int64, offset, limit int) ([]Submission, int64, error) {
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM project_submissions WHERE topic_id = $1`, topicID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("topics: count submissions: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+submissionColumns+` FROM project_submissions
		WHERE topic_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, topicID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("topics: list submissions: %w", err)
	}
	defer rows.Close()
	out := []Submission{}
	for rows.Next() {
		s, err := scanSubmission(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, total, withLearners(ctx, q, out)
}
