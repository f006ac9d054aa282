package learning

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// topicProgress is a learner's row of topic_progress.
type topicProgress struct {
	TopicID    int64
	Status     int
	Seconds    int64
	StartedAt  *time.Time
	FinishedAt *time.Time
	LastPingAt *time.Time
	Score      *topics.TopicScore
}

// courseProgress is a learner's row of course_progress.
type courseProgress struct {
	CourseID   int64
	StartedAt  *time.Time
	FinishedAt *time.Time
	Deadline   *time.Time
}

func timePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	v := t.Time.UTC()
	return &v
}

// missed reports whether the deadline has passed at now.
func (cp *courseProgress) missed(now time.Time) bool {
	return cp != nil && cp.Deadline != nil && !now.Before(*cp.Deadline)
}

// topicRows loads the learner's progress in the topics of one course.
func topicRows(ctx context.Context, q sqldb.Querier, userID, courseID int64) (map[int64]topicProgress, error) {
	rows, err := q.QueryContext(ctx, `SELECT topic_id, status, seconds, started_at, finished_at, last_ping_at, score_raw,
		score_max FROM topic_progress WHERE user_id = $1 AND course_id = $2`, userID, courseID)
	if err != nil {
		return nil, fmt.Errorf("learning: load topic progress: %w", err)
	}
	defer rows.Close()
	out := map[int64]topicProgress{}
	for rows.Next() {
		var tp topicProgress
		var started, finished, ping sql.NullTime
		var raw, outOf sql.NullFloat64
		if err := rows.Scan(&tp.TopicID, &tp.Status, &tp.Seconds, &started, &finished, &ping, &raw, &outOf); err != nil {
			return nil, fmt.Errorf("learning: scan topic progress: %w", err)
		}
		tp.StartedAt, tp.FinishedAt, tp.LastPingAt = timePtr(started), timePtr(finished), timePtr(ping)
		tp.Score = rowScore(raw, outOf)
		out[tp.TopicID] = tp
	}
	return out, rows.Err()
}

// learnerState reads, in one query, the course's program counter (see
// programVersion), the learner's progress in its topics and their course
// row (as courseRow). The course row comes first so that SQLite reports
// the time columns' declared types.
func learnerState(ctx context.Context, q sqldb.Querier, userID, courseID int64) (int64, map[int64]topicProgress,
	*courseProgress, error) {
	rows, err := q.QueryContext(ctx, `SELECT 1, NULL, 0, 0, started_at, finished_at, deadline FROM course_progress
			WHERE user_id = $1 AND course_id = $2
		UNION ALL SELECT 2, version, 0, 0, NULL, NULL, NULL FROM program_versions WHERE course_id = $2
		UNION ALL SELECT 3, topic_id, status, seconds, NULL, NULL, NULL FROM topic_progress
			WHERE user_id = $1 AND course_id = $2`, userID, courseID)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("learning: load learner state: %w", err)
	}
	defer rows.Close()
	var version int64
	progress := map[int64]topicProgress{}
	var cp *courseProgress
	for rows.Next() {
		var kind, status int
		var id sql.NullInt64
		var seconds int64
		var started, finished, deadline sql.NullTime
		if err := rows.Scan(&kind, &id, &status, &seconds, &started, &finished, &deadline); err != nil {
			return 0, nil, nil, fmt.Errorf("learning: load learner state: %w", err)
		}
		switch kind {
		case 1:
			if started.Valid {
				cp = &courseProgress{CourseID: courseID, StartedAt: timePtr(started), FinishedAt: timePtr(finished),
					Deadline: timePtr(deadline)}
			}
		case 2:
			version = id.Int64
		case 3:
			progress[id.Int64] = topicProgress{TopicID: id.Int64, Status: status, Seconds: seconds}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, nil, nil, fmt.Errorf("learning: load learner state: %w", err)
	}
	return version, progress, cp, nil
}

// statuses loads only the statuses of the learner's topics of a course.
func statuses(ctx context.Context, q sqldb.Querier, userID, courseID int64) (map[int64]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT topic_id, status FROM topic_progress WHERE user_id = $1 AND course_id = $2`,
		userID, courseID)
	if err != nil {
		return nil, fmt.Errorf("learning: load statuses: %w", err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var id int64
		var st int
		if err := rows.Scan(&id, &st); err != nil {
			return nil, err
		}
		out[id] = st
	}
	return out, rows.Err()
}

// courseRow loads the learner's course_progress row; nil when the
// learner has not started the course.
func courseRow(ctx context.Context, q sqldb.Querier, userID, courseID int64) (*courseProgress, error) {
	cp := &courseProgress{CourseID: courseID}
	var started, finished, deadline sql.NullTime
	err := q.QueryRowContext(ctx, `SELECT started_at, finished_at, deadline FROM course_progress
		WHERE user_id = $1 AND course_id = $2`, userID, courseID).Scan(&started, &finished, &deadline)
	if sqldb.NotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("learning: load course progress: %w", err)
	}
	cp.StartedAt, cp.FinishedAt, cp.Deadline = timePtr(started), timePtr(finished), timePtr(deadline)
	if cp.StartedAt == nil {
		return nil, nil
	}
	return cp, nil
}

// startCourse starts the course for the learner unless it has started,
// and reports whether this call started it. Its upsert also locks the
// learner's course_progress row on PostgreSQL (ON CONFLICT DO UPDATE locks
// the row even when its WHERE is false), so every progress write of one
// learner in one course runs one after another and sees the others'
// results; SQLite transactions are serial anyway.
func startCourse(ctx context.Context, tx *sqldb.Tx, now time.Time, userID int64, c courses.Course) (bool, error) {
	res, err := tx.ExecContext(ctx, `INSERT INTO course_progress (user_id, course_id, started_at, deadline, updated_at)
		VALUES ($1, $2, $3, $4, $3)
		ON CONFLICT (user_id, course_id) DO UPDATE SET started_at = excluded.started_at, deadline = excluded.deadline,
			updated_at = excluded.updated_at
		WHERE course_progress.started_at IS NULL`, userID, c.ID, now, deadlineFor(c, now))
	if err != nil {
		return false, fmt.Errorf("learning: start course %d: %w", c.ID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// setStatus writes one topic's status and reports whether the topic
// turned complete. Completion is final: a complete topic keeps its status
// whatever is written later.
func setStatus(ctx context.Context, tx *sqldb.Tx, now time.Time, userID, courseID, topicID int64, status int) (bool, error) {
	var started, finished any
	if status != Incomplete {
		started = now
	}
	if status == Complete {
		finished = now
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO topic_progress (user_id, topic_id, course_id, status, seconds, started_at,
			finished_at, updated_at)
		VALUES ($1, $2, $3, $4, 0, $5, $6, $7)
		ON CONFLICT (user_id, topic_id) DO UPDATE SET status = excluded.status,
			started_at = COALESCE(topic_progress.started_at, excluded.started_at),
			finished_at = excluded.finished_at, updated_at = excluded.updated_at
		WHERE topic_progress.status <> 1 AND topic_progress.status <> excluded.status`,
		userID, topicID, courseID, status, started, finished, now)
	if err != nil {
		return false, fmt.Errorf("learning: set topic %d status: %w", topicID, err)
	}
	n, err := res.RowsAffected()
	return status == Complete && n == 1, err
}

// pingInterval is how often the player pings while a topic is on screen
// (internal/web's app.js). maxPingCredit caps what one ping adds: a gap
// longer than two intervals means the learner left, and only the time a
// player could have been on screen without pinging is counted.
const (
	pingInterval  = 30 * time.Second
	maxPingCredit = 2 * pingInterval
)

// ping records time on a topic. The time is the learner's, not the
// topic's: the whole seconds since the learner's previous ping of any
// topic, at most maxPingCredit, go to the topic pinged, so pinging three
// topics at once counts the wall time once. Both statements run in the
// caller's transaction and the first one updates the learner's row under
// its lock, so concurrent pings add up exactly. The topic moves to in
// progress unless it is complete.
func ping(ctx context.Context, tx *sqldb.Tx, now time.Time, userID, courseID, topicID int64) (int, int64, error) {
	var credit int64
	err := tx.QueryRowContext(ctx, `INSERT INTO learner_time (user_id, counted_until, credit) VALUES ($1, $2, 0)
		ON CONFLICT (user_id) DO UPDATE SET
			credit = CASE
				WHEN learner_time.counted_until >= $2 THEN 0
				WHEN learner_time.counted_until > $3 THEN $4 - `+epochSeconds(tx.Dialect, "learner_time.counted_until")+`
				ELSE $5 END,
			counted_until = CASE WHEN learner_time.counted_until < $2 THEN $2 ELSE learner_time.counted_until END
		RETURNING credit`,
		userID, now, now.Add(-maxPingCredit), now.Unix(), int64(maxPingCredit/time.Second)).Scan(&credit)
	if err != nil {
		return 0, 0, fmt.Errorf("learning: count time of user %d: %w", userID, err)
	}
	var status int
	var seconds int64
	err = tx.QueryRowContext(ctx, `INSERT INTO topic_progress (user_id, topic_id, course_id, status, seconds, started_at,
			last_ping_at, updated_at)
		VALUES ($1, $2, $3, 2, $5, $4, $4, $4)
		ON CONFLICT (user_id, topic_id) DO UPDATE SET
			seconds = topic_progress.seconds + $5,
			last_ping_at = CASE
				WHEN topic_progress.last_ping_at IS NULL OR topic_progress.last_ping_at < $4 THEN $4
				ELSE topic_progress.last_ping_at END,
			status = CASE WHEN topic_progress.status = 1 THEN 1 ELSE 2 END,
			started_at = COALESCE(topic_progress.started_at, $4),
			updated_at = $4
		RETURNING status, seconds`,
		userID, topicID, courseID, now, credit).Scan(&status, &seconds)
	if err != nil {
		return 0, 0, fmt.Errorf("learning: ping topic %d: %w", topicID, err)
	}
	return status, seconds, nil
}

// finishCourse marks the course finished unless it already is, and
// reports whether this call finished it: of two transactions that finish
// the course at once, only one sees its UPDATE change a row.
func finishCourse(ctx context.Context, tx *sqldb.Tx, now time.Time, userID, courseID int64) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE course_progress SET finished_at = $1, updated_at = $1
		WHERE user_id = $2 AND course_id = $3 AND finished_at IS NULL`, now, userID, courseID)
	if err != nil {
		return false, fmt.Errorf("learning: finish course %d: %w", courseID, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// keepScore stores score as the learner's score in a topic when it beats
// the one kept, and reports whether it did and whether the topic was
// complete before. A topic without a row gets one, incomplete, which the
// completion that comes with the score then turns complete.
func keepScore(ctx context.Context, tx *sqldb.Tx, now time.Time, userID, courseID, topicID int64,
	score *topics.TopicScore) (kept, wasComplete bool, err error) {
	var status int
	var raw, outOf sql.NullFloat64
	err = tx.QueryRowContext(ctx, `SELECT status, score_raw, score_max FROM topic_progress WHERE user_id = $1 AND topic_id = $2`,
		userID, topicID).Scan(&status, &raw, &outOf)
	if err != nil && !sqldb.NotFound(err) {
		return false, false, fmt.Errorf("learning: load topic %d score: %w", topicID, err)
	}
	if !score.Beats(rowScore(raw, outOf)) {
		return false, status == Complete, nil
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO topic_progress (user_id, topic_id, course_id, status, seconds, score_raw, score_max,
			updated_at) VALUES ($1, $2, $3, 0, 0, $4, $5, $6)
		ON CONFLICT (user_id, topic_id) DO UPDATE SET score_raw = excluded.score_raw, score_max = excluded.score_max,
			updated_at = excluded.updated_at`, userID, topicID, courseID, score.Raw, score.Max, now)
	if err != nil {
		return false, false, fmt.Errorf("learning: keep topic %d score: %w", topicID, err)
	}
	return true, status == Complete, nil
}

// rowScore is the score of a topic_progress row; nil when it has none.
func rowScore(raw, outOf sql.NullFloat64) *topics.TopicScore {
	if !raw.Valid || !outOf.Valid {
		return nil
	}
	return &topics.TopicScore{Raw: raw.Float64, Max: outOf.Float64}
}
