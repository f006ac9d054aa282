package learning

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// The gradebook's reads (package reports): every learner's progress in one
// course at once, for tutors and admins. Each runs a fixed number of
// queries whatever the number of learners, so a course of hundreds of
// learners costs what a course of one does, less the rows.

// GradebookTopic is a visible topic of a course, in program order.
type GradebookTopic struct {
	ID          int64
	LessonID    int64
	LessonTitle string
	Title       string
	// Kind is the kind's name ("scorm", "quiz"), "unknown" when no kind
	// is registered for the topic's class.
	Kind string
}

// GradebookRow is one learner's progress in a course.
type GradebookRow struct {
	UserID int64
	ProgressSummary
	// ScoreRaw and ScoreMax add up the scores of the visible topics that
	// keep one; ScoreMax is 0 when none does.
	ScoreRaw, ScoreMax float64
	// LastActivity is the latest change of the learner's topic progress.
	LastActivity *time.Time
}

// GradebookCell is a learner's progress in one topic.
type GradebookCell struct {
	TopicProgress
	LastActivity *time.Time
}

// Gradebook is the progress of every learner who has any in a course.
type Gradebook struct {
	Topics []GradebookTopic
	// Rows holds the learners with progress rows, by user id.
	Rows map[int64]*GradebookRow
}

// Gradebook loads the course's visible topics and the progress of every
// learner who has any in it, or only of the learners of only when it is
// not nil: three queries besides the program's.
func (s *Service) Gradebook(ctx context.Context, t *platform.Tenant, courseID int64, only []int64) (Gradebook, error) {
	tr, err := loadTree(ctx, t.DB, courseID, s.now())
	if err != nil {
		return Gradebook{}, err
	}
	gb := Gradebook{Topics: make([]GradebookTopic, 0, len(tr.order)), Rows: map[int64]*GradebookRow{}}
	ids := make([]int64, 0, len(tr.order))
	for _, topic := range tr.order {
		gb.Topics = append(gb.Topics, GradebookTopic{ID: topic.ID, LessonID: topic.LessonID,
			LessonTitle: tr.lessons[topic.LessonID].Title, Title: topic.Title, Kind: s.kindName(topic)})
		ids = append(ids, topic.ID)
	}
	if only != nil && len(only) == 0 {
		return gb, nil
	}
	if err := courseRowsOf(ctx, t.DB, courseID, only, len(ids), gb.Rows); err != nil {
		return Gradebook{}, err
	}
	if err := topicSums(ctx, t.DB, courseID, only, ids, gb.Rows); err != nil {
		return Gradebook{}, err
	}
	return gb, nil
}

func (s *Service) kindName(topic *topics.Topic) string {
	if s.Kinds != nil {
		if kind, ok := s.Kinds.ByClass(topic.TopicableType); ok {
			return kind.Name()
		}
	}
	return "unknown"
}

// row is the learner's row of rows, made when missing.
func row(rows map[int64]*GradebookRow, userID int64, total int) *GradebookRow {
	r := rows[userID]
	if r == nil {
		r = &GradebookRow{UserID: userID, ProgressSummary: ProgressSummary{Status: Planned, TotalTopics: total}}
		rows[userID] = r
	}
	return r
}

// learnersIn is the condition that keeps the rows of the learners of only
// (all when nil).
func learnersIn(a *sqldb.Args, only []int64) string {
	if only == nil {
		return ""
	}
	return ` AND user_id IN (` + a.List(only) + `)`
}

func courseRowsOf(ctx context.Context, db *sqldb.DB, courseID int64, only []int64, total int, rows map[int64]*GradebookRow) error {
	a := sqldb.Args{courseID}
	res, err := db.QueryContext(ctx, `SELECT user_id, started_at, finished_at, deadline FROM course_progress
		WHERE course_id = $1`+learnersIn(&a, only), a...)
	if err != nil {
		return fmt.Errorf("learning: gradebook of course %d: %w", courseID, err)
	}
	defer res.Close()
	for res.Next() {
		var userID int64
		var started, finished, deadline sql.NullTime
		if err := res.Scan(&userID, &started, &finished, &deadline); err != nil {
			return fmt.Errorf("learning: scan gradebook row: %w", err)
		}
		r := row(rows, userID, total)
		r.StartedAt, r.FinishedAt, r.Deadline = timePtr(started), timePtr(finished), timePtr(deadline)
		r.Status = Started
		if r.FinishedAt != nil {
			r.Status = Finished
		}
	}
	return res.Err()
}

// topicSums adds up each learner's progress in the visible topics in the
// database, so that only one row per learner comes back.
func topicSums(ctx context.Context, db *sqldb.DB, courseID int64, only, visible []int64, rows map[int64]*GradebookRow) error {
	if len(visible) == 0 {
		return nil
	}
	a := sqldb.Args{courseID, Complete}
	res, err := db.QueryContext(ctx, `SELECT user_id, SUM(CASE WHEN status = $2 THEN 1 ELSE 0 END), SUM(seconds),
		SUM(score_raw), SUM(CASE WHEN score_raw IS NULL THEN NULL ELSE score_max END), MAX(`+epochSeconds(db.Dialect, "updated_at")+`)
		FROM topic_progress WHERE course_id = $1 AND topic_id IN (`+a.List(visible)+`)`+learnersIn(&a, only)+` GROUP BY user_id`, a...)
	if err != nil {
		return fmt.Errorf("learning: gradebook sums of course %d: %w", courseID, err)
	}
	defer res.Close()
	for res.Next() {
		var userID, finished, seconds int64
		var raw, outOf sql.NullFloat64
		var last sql.NullInt64
		if err := res.Scan(&userID, &finished, &seconds, &raw, &outOf, &last); err != nil {
			return fmt.Errorf("learning: scan gradebook sums: %w", err)
		}
		r := row(rows, userID, len(visible))
		r.FinishedTopics, r.Seconds = int(finished), seconds
		r.Percent = r.FinishedTopics * 100 / r.TotalTopics
		if raw.Valid && outOf.Valid && outOf.Float64 > 0 {
			r.ScoreRaw, r.ScoreMax = raw.Float64, outOf.Float64
		}
		if last.Valid {
			at := time.Unix(last.Int64, 0).UTC()
			r.LastActivity = &at
		}
	}
	return res.Err()
}

// GradebookCells loads the progress of some learners in the course's
// topics, by user and topic, in one query.
func (s *Service) GradebookCells(ctx context.Context, t *platform.Tenant, courseID int64, userIDs []int64) (map[int64]map[int64]GradebookCell, error) {
	out := make(map[int64]map[int64]GradebookCell, len(userIDs))
	if len(userIDs) == 0 {
		return out, nil
	}
	a := sqldb.Args{courseID}
	res, err := t.DB.QueryContext(ctx, `SELECT user_id, topic_id, status, seconds, started_at, finished_at,
		score_raw, score_max, updated_at FROM topic_progress
		WHERE course_id = $1 AND user_id IN (`+a.List(userIDs)+`)`, a...)
	if err != nil {
		return nil, fmt.Errorf("learning: gradebook cells of course %d: %w", courseID, err)
	}
	defer res.Close()
	for res.Next() {
		var userID int64
		var c GradebookCell
		var started, finished sql.NullTime
		var raw, outOf sql.NullFloat64
		var updated time.Time
		if err := res.Scan(&userID, &c.TopicID, &c.Status, &c.Seconds, &started, &finished, &raw, &outOf,
			&updated); err != nil {
			return nil, fmt.Errorf("learning: scan gradebook cell: %w", err)
		}
		c.StartedAt, c.FinishedAt, c.Score = timePtr(started), timePtr(finished), rowScore(raw, outOf)
		updated = updated.UTC()
		c.LastActivity = &updated
		if out[userID] == nil {
			out[userID] = map[int64]GradebookCell{}
		}
		out[userID][c.TopicID] = c
	}
	return out, res.Err()
}

// H5PTrack sums up the statements H5P content reported in a topic for a
// learner.
type H5PTrack struct {
	Statements      int
	LastVerb        string
	Score, MaxScore *float64
	LastAt          time.Time
}

// H5PTracks sums up the learner's H5P statements in the topics, by topic,
// in one query.
func (s *Service) H5PTracks(ctx context.Context, t *platform.Tenant, userID int64, topicIDs []int64) (map[int64]H5PTrack, error) {
	out := map[int64]H5PTrack{}
	if len(topicIDs) == 0 {
		return out, nil
	}
	a := sqldb.Args{userID}
	res, err := t.DB.QueryContext(ctx, `SELECT topic_id, verb, score, max_score, created_at FROM topic_h5p_statements
		WHERE user_id = $1 AND topic_id IN (`+a.List(topicIDs)+`) ORDER BY id`, a...)
	if err != nil {
		return nil, fmt.Errorf("learning: H5P tracks of user %d: %w", userID, err)
	}
	defer res.Close()
	for res.Next() {
		var topicID int64
		var verb string
		var score, outOf sql.NullFloat64
		var at time.Time
		if err := res.Scan(&topicID, &verb, &score, &outOf, &at); err != nil {
			return nil, fmt.Errorf("learning: scan H5P track: %w", err)
		}
		tr := out[topicID]
		tr.Statements++
		tr.LastVerb, tr.LastAt = verb, at.UTC()
		if score.Valid {
			raw := score.Float64
			tr.Score, tr.MaxScore = &raw, nil
			if outOf.Valid {
				m := outOf.Float64
				tr.MaxScore = &m
			}
		}
		out[topicID] = tr
	}
	return out, res.Err()
}

// H5PReport is one xAPI statement H5P content reported in a topic:
// its JSON as reported, and when.
type H5PReport struct {
	Body []byte
	At   time.Time
}

// H5PStatements lists the latest statements H5P content reported for the
// learner in a topic, at most limit, oldest first, in one query.
func (s *Service) H5PStatements(ctx context.Context, t *platform.Tenant, userID, topicID int64, limit int) ([]H5PReport, error) {
	res, err := t.DB.QueryContext(ctx, `SELECT statement, created_at FROM topic_h5p_statements
		WHERE user_id = $1 AND topic_id = $2 ORDER BY id DESC LIMIT $3`, userID, topicID, limit)
	if err != nil {
		return nil, fmt.Errorf("learning: H5P statements of user %d: %w", userID, err)
	}
	defer res.Close()
	var out []H5PReport
	for res.Next() {
		var body string
		var at time.Time
		if err := res.Scan(&body, &at); err != nil {
			return nil, fmt.Errorf("learning: scan H5P statement: %w", err)
		}
		out = append(out, H5PReport{Body: []byte(body), At: at.UTC()})
	}
	slices.Reverse(out)
	return out, res.Err()
}
