package learning

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// ProgressCourse is what a progress list shows of a course.
type ProgressCourse struct {
	ID              int64      `json:"id"`
	Title           string     `json:"title"`
	Summary         string     `json:"summary"`
	ImagePath       *string    `json:"image_path"`
	Status          string     `json:"status"`
	ActiveFrom      *time.Time `json:"active_from"`
	ActiveTo        *time.Time `json:"active_to"`
	HoursToComplete *int       `json:"hours_to_complete"`
}

// ProgressItem is a course in a learner's progress list.
type ProgressItem struct {
	Course ProgressCourse `json:"course"`
	ProgressSummary
}

// ListFilter selects and orders a learner's progress list.
type ListFilter struct {
	Status  string // planned, started, finished or "" for all
	OrderBy string // id, title, started_at, finished_at, deadline, percent
	Desc    bool
}

// ProgressList returns every course the user is assigned to (directly or
// through a group or its ancestors, within the dates, while the course is
// published) or has started, with the user's progress in it. It runs the
// same five queries whatever the number of courses.
func (s *Service) ProgressList(ctx context.Context, t *platform.Tenant, userID int64, f ListFilter) ([]ProgressItem, error) {
	now := s.now()
	briefs, err := learnerCourses(ctx, t.DB, now, userID)
	if err != nil || len(briefs) == 0 {
		return []ProgressItem{}, err
	}
	ids := make([]int64, len(briefs))
	for i, b := range briefs {
		ids[i] = b.ID
	}
	started, err := courseRows(ctx, t.DB, userID)
	if err != nil {
		return nil, err
	}
	trees, err := loadTrees(ctx, t.DB, ids, now)
	if err != nil {
		return nil, err
	}
	progress, err := userTopicRows(ctx, t.DB, userID)
	if err != nil {
		return nil, err
	}
	out := make([]ProgressItem, 0, len(briefs))
	for _, b := range briefs {
		item := ProgressItem{Course: b, ProgressSummary: summarize(trees[b.ID], progress, started[b.ID])}
		if f.Status == "" || item.Status == f.Status {
			out = append(out, item)
		}
	}
	sortItems(out, f.OrderBy, f.Desc)
	return out, nil
}

func sortItems(items []ProgressItem, by string, desc bool) {
	times := func(a, b *time.Time) int {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		case b == nil:
			return 1
		}
		return a.Compare(*b)
	}
	slices.SortStableFunc(items, func(a, b ProgressItem) int {
		var c int
		switch by {
		case "title":
			c = strings.Compare(strings.ToLower(a.Course.Title), strings.ToLower(b.Course.Title))
		case "started_at":
			c = times(a.StartedAt, b.StartedAt)
		case "finished_at":
			c = times(a.FinishedAt, b.FinishedAt)
		case "deadline":
			c = times(a.Deadline, b.Deadline)
		case "percent":
			c = cmp.Compare(a.Percent, b.Percent)
		}
		if c == 0 {
			c = cmp.Compare(a.Course.ID, b.Course.ID)
		}
		if desc {
			return -c
		}
		return c
	})
}

// learnerCourses lists the courses of a learner's progress list.
func learnerCourses(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) ([]ProgressCourse, error) {
	rows, err := q.QueryContext(ctx, `
		WITH RECURSIVE member_groups(id) AS (
			SELECT group_id FROM user_group_members WHERE user_id = $1
			UNION
			SELECT g.parent_id FROM user_groups g JOIN member_groups m ON g.id = m.id WHERE g.parent_id IS NOT NULL
		)
		SELECT id, title, summary, image_path, status, active_from, active_to, hours_to_complete FROM courses
		WHERE id IN (SELECT course_id FROM course_progress WHERE user_id = $1 AND started_at IS NOT NULL)
			OR (status IN ($3, $4) AND (
				id IN (SELECT course_id FROM course_users WHERE user_id = $1 AND (end_date IS NULL OR end_date > $2))
				OR id IN (SELECT cg.course_id FROM course_groups cg JOIN member_groups m ON m.id = cg.group_id
					WHERE cg.end_date IS NULL OR cg.end_date > $2)))
		ORDER BY id`, userID, now, string(courses.Published), string(courses.PublishedUnactivated))
	if err != nil {
		return nil, fmt.Errorf("learning: list learner courses: %w", err)
	}
	defer rows.Close()
	out := []ProgressCourse{}
	for rows.Next() {
		var b ProgressCourse
		var image sql.NullString
		var from, to sql.NullTime
		var hours sql.NullInt64
		if err := rows.Scan(&b.ID, &b.Title, &b.Summary, &image, &b.Status, &from, &to, &hours); err != nil {
			return nil, fmt.Errorf("learning: scan course: %w", err)
		}
		if image.Valid {
			b.ImagePath = &image.String
		}
		b.ActiveFrom, b.ActiveTo = timePtr(from), timePtr(to)
		if hours.Valid {
			h := int(hours.Int64)
			b.HoursToComplete = &h
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

// courseRows loads the user's started courses by course id.
func courseRows(ctx context.Context, q sqldb.Querier, userID int64) (map[int64]*courseProgress, error) {
	rows, err := q.QueryContext(ctx, `SELECT course_id, started_at, finished_at, deadline FROM course_progress
		WHERE user_id = $1 AND started_at IS NOT NULL`, userID)
	if err != nil {
		return nil, fmt.Errorf("learning: load course progress: %w", err)
	}
	defer rows.Close()
	out := map[int64]*courseProgress{}
	for rows.Next() {
		cp := &courseProgress{}
		var started, finished, deadline sql.NullTime
		if err := rows.Scan(&cp.CourseID, &started, &finished, &deadline); err != nil {
			return nil, err
		}
		cp.StartedAt, cp.FinishedAt, cp.Deadline = timePtr(started), timePtr(finished), timePtr(deadline)
		out[cp.CourseID] = cp
	}
	return out, rows.Err()
}

// userTopicRows loads the user's progress in every topic. Topic ids are
// unique across courses, so one map serves every course's tree.
func userTopicRows(ctx context.Context, q sqldb.Querier, userID int64) (map[int64]topicProgress, error) {
	rows, err := q.QueryContext(ctx, `SELECT topic_id, status, seconds FROM topic_progress WHERE user_id = $1`, userID)
	if err != nil {
		return nil, fmt.Errorf("learning: load topic progress: %w", err)
	}
	defer rows.Close()
	out := map[int64]topicProgress{}
	for rows.Next() {
		var tp topicProgress
		if err := rows.Scan(&tp.TopicID, &tp.Status, &tp.Seconds); err != nil {
			return nil, err
		}
		out[tp.TopicID] = tp
	}
	return out, rows.Err()
}

// loadTrees builds the visible trees of several courses from two queries
// that read only what counting topics needs.
func loadTrees(ctx context.Context, q sqldb.Querier, courseIDs []int64, now time.Time) (map[int64]*tree, error) {
	in := placeholders(1, len(courseIDs))
	args := int64Args(courseIDs)
	lessons := map[int64][]courses.Lesson{}
	rows, err := q.QueryContext(ctx, `SELECT id, course_id, parent_id, active FROM lessons WHERE course_id IN (`+in+`)
		ORDER BY position, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("learning: list lessons: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var l courses.Lesson
		var parent sql.NullInt64
		if err := rows.Scan(&l.ID, &l.CourseID, &parent, &l.Active); err != nil {
			return nil, err
		}
		if parent.Valid {
			l.ParentID = &parent.Int64
		}
		lessons[l.CourseID] = append(lessons[l.CourseID], l)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	all := map[int64][]topics.Topic{}
	trows, err := q.QueryContext(ctx, `SELECT id, lesson_id, course_id, active FROM topics WHERE course_id IN (`+in+`)
		ORDER BY lesson_id, position, id`, args...)
	if err != nil {
		return nil, fmt.Errorf("learning: list topics: %w", err)
	}
	defer trows.Close()
	for trows.Next() {
		var tp topics.Topic
		if err := trows.Scan(&tp.ID, &tp.LessonID, &tp.CourseID, &tp.Active); err != nil {
			return nil, err
		}
		all[tp.CourseID] = append(all[tp.CourseID], tp)
	}
	if err := trows.Err(); err != nil {
		return nil, err
	}
	out := make(map[int64]*tree, len(courseIDs))
	for _, id := range courseIDs {
		out[id] = newTree(lessons[id], all[id], now)
	}
	return out, nil
}
