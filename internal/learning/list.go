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

// learnerCourses lists the courses of a learner's progress list: those
// started, and those listed (published, activated or not) that the
// learner holds access to by assignment.
func learnerCourses(ctx context.Context, q sqldb.Querier, now time.Time, userID int64) ([]ProgressCourse, error) {
	started, err := sqldb.Column[int64](q.QueryContext(ctx, `SELECT course_id FROM course_progress
		WHERE user_id = $1 AND started_at IS NOT NULL`, userID))
	if err != nil {
		return nil, fmt.Errorf("learning: list started courses: %w", err)
	}
	assigned, err := courses.AssignedCourses(ctx, q, now, userID)
	if err != nil {
		return nil, err
	}
	list, err := courses.Rows(ctx, q, sqldb.UniqueIDs(append(started, assigned...)))
	if err != nil {
		return nil, err
	}
	out := []ProgressCourse{}
	for _, c := range list {
		if !slices.Contains(started, c.ID) && !c.Status.Listed() {
			continue
		}
		out = append(out, ProgressCourse{ID: c.ID, Title: c.Title, Summary: c.Summary, ImagePath: c.ImagePath,
			Status: string(c.Status), ActiveFrom: c.ActiveFrom, ActiveTo: c.ActiveTo, HoursToComplete: c.HoursToComplete})
	}
	return out, nil
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
	lessons, err := courses.LessonsOf(ctx, q, courseIDs)
	if err != nil {
		return nil, err
	}
	all, err := topics.Placements(ctx, q, courseIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]*tree, len(courseIDs))
	for _, id := range courseIDs {
		out[id] = newTree(lessons[id], all[id], now)
	}
	return out, nil
}
