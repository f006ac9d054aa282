package quiz

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Attempt is one learner's attempt at a quiz topic.
type Attempt struct {
	ID, TopicID, UserID int64
	Number              int
	// Questions are the quiz's questions when the attempt started.
	Questions    []Question
	StartedAt    time.Time
	EndsAt       time.Time
	EndedAt      *time.Time
	Score        float64
	MaxScore     float64
	MinPassScore *float64
	// Pending is true while an essay answer waits for a grade.
	Pending bool
	Passed  *bool
	// Review is the quiz's review setting when the attempt started.
	Review string
}

// Answer is a saved answer to one question of an attempt.
type Answer struct {
	QuestionID int64
	Response   gift.Response
	// Fraction is the share of the question's score earned; nil while an
	// essay waits for a grade.
	Fraction  *float64
	GradedBy  *int64
	UpdatedAt time.Time
}

var errAttemptMissing = apperr.New(apperr.NotFound, "Attempt not found.")

const attemptColumns = `id, topic_id, user_id, number, questions, started_at, ends_at, ended_at, score, max_score,
	min_pass_score, pending, passed, review`

func scanAttempt(row interface{ Scan(...any) error }) (Attempt, error) {
	var a Attempt
	var questions string
	var ended sql.NullTime
	var min sql.NullFloat64
	var passed sql.NullBool
	err := row.Scan(&a.ID, &a.TopicID, &a.UserID, &a.Number, &questions, &a.StartedAt, &a.EndsAt, &ended, &a.Score,
		&a.MaxScore, &min, &a.Pending, &passed, &a.Review)
	if err != nil {
		return a, err
	}
	if ended.Valid {
		a.EndedAt = &ended.Time
	}
	if min.Valid {
		a.MinPassScore = &min.Float64
	}
	if passed.Valid {
		a.Passed = &passed.Bool
	}
	if err := json.Unmarshal([]byte(questions), &a.Questions); err != nil {
		return a, fmt.Errorf("quiz: attempt %d questions: %w", a.ID, err)
	}
	for i := range a.Questions {
		if a.Questions[i].Q, err = ParseOne(a.Questions[i].GIFT); err != nil {
			return a, fmt.Errorf("quiz: attempt %d question %d: %w", a.ID, a.Questions[i].ID, err)
		}
	}
	return a, nil
}

func attemptByID(ctx context.Context, q sqldb.Querier, id int64) (Attempt, error) {
	a, err := scanAttempt(q.QueryRowContext(ctx, `SELECT `+attemptColumns+` FROM quiz_attempts WHERE id = $1`, id))
	if sqldb.NotFound(err) {
		return a, errAttemptMissing
	}
	if err != nil {
		return a, fmt.Errorf("quiz: load attempt %d: %w", id, err)
	}
	return a, nil
}

// listAttempts lists attempts by topic and, when userID is not 0, user,
// newest first; topicID 0 lists all of the user's.
func listAttempts(ctx context.Context, q sqldb.Querier, topicID, userID int64, offset, limit int) ([]Attempt, int64, error) {
	where, args := `WHERE ($1 = 0 OR topic_id = $1) AND ($2 = 0 OR user_id = $2)`, []any{topicID, userID}
	var total int64
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM quiz_attempts `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("quiz: count attempts: %w", err)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+attemptColumns+` FROM quiz_attempts `+where+
		` ORDER BY id DESC LIMIT $3 OFFSET $4`, append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("quiz: list attempts: %w", err)
	}
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, a)
	}
	return out, total, rows.Err()
}

// expiredAttempts lists the attempts still open whose time ran out
// before now, at most limit of them.
func expiredAttempts(ctx context.Context, q sqldb.Querier, now time.Time, limit int) ([]Attempt, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+attemptColumns+` FROM quiz_attempts
		WHERE ended_at IS NULL AND ends_at <= $1 ORDER BY id LIMIT $2`, now, limit)
	if err != nil {
		return nil, fmt.Errorf("quiz: expired attempts: %w", err)
	}
	return scanAttempts(rows)
}

// attemptsOf lists a learner's attempts at a topic, oldest first.
func attemptsOf(ctx context.Context, q sqldb.Querier, topicID, userID int64) ([]Attempt, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+attemptColumns+` FROM quiz_attempts
		WHERE topic_id = $1 AND user_id = $2 ORDER BY number`, topicID, userID)
	if err != nil {
		return nil, fmt.Errorf("quiz: attempts of a learner: %w", err)
	}
	return scanAttempts(rows)
}

// learnerTopic names one learner's attempts at one topic.
type learnerTopic struct{ topic, user int64 }

// attemptsOfMany is attemptsOf for several learners and topics in one
// PostgreSQL query.
func attemptsOfMany(ctx context.Context, q *sqldb.DB, keys []learnerTopic) (map[learnerTopic][]Attempt, error) {
	topicIDs, users := make([]int64, len(keys)), make([]int64, len(keys))
	for i, k := range keys {
		topicIDs[i], users[i] = k.topic, k.user
	}
	rows, err := q.QueryContext(ctx, `SELECT `+attemptColumns+` FROM quiz_attempts
		WHERE (topic_id, user_id) IN (SELECT * FROM unnest($1::bigint[], $2::bigint[])) ORDER BY number`, topicIDs, users)
	if err != nil {
		return nil, fmt.Errorf("quiz: attempts of learners: %w", err)
	}
	all, err := scanAttempts(rows)
	if err != nil {
		return nil, err
	}
	out := make(map[learnerTopic][]Attempt, len(keys))
	for _, k := range keys {
		out[k] = nil
	}
	for _, a := range all {
		k := learnerTopic{a.TopicID, a.UserID}
		out[k] = append(out[k], a)
	}
	return out, nil
}

func scanAttempts(rows *sql.Rows) ([]Attempt, error) {
	defer rows.Close()
	var out []Attempt
	for rows.Next() {
		a, err := scanAttempt(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func insertAttempt(ctx context.Context, q sqldb.Querier, a *Attempt) error {
	questions, err := json.Marshal(a.Questions)
	if err != nil {
		return err
	}
	return q.QueryRowContext(ctx, `INSERT INTO quiz_attempts (topic_id, user_id, number, questions, started_at, ends_at,
		max_score, min_pass_score, review) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
		a.TopicID, a.UserID, a.Number, string(questions), a.StartedAt, a.EndsAt, a.MaxScore, a.MinPassScore, a.Review).Scan(&a.ID)
}

func answersOf(ctx context.Context, q sqldb.Querier, attemptID int64) (map[int64]Answer, error) {
	rows, err := q.QueryContext(ctx, `SELECT question_id, response, fraction, graded_by, updated_at FROM quiz_answers
		WHERE attempt_id = $1`, attemptID)
	if err != nil {
		return nil, fmt.Errorf("quiz: load answers: %w", err)
	}
	defer rows.Close()
	out := map[int64]Answer{}
	for rows.Next() {
		var a Answer
		var resp string
		var fraction sql.NullFloat64
		var by sql.NullInt64
		if err := rows.Scan(&a.QuestionID, &resp, &fraction, &by, &a.UpdatedAt); err != nil {
			return nil, fmt.Errorf("quiz: scan answer: %w", err)
		}
		if err := json.Unmarshal([]byte(resp), &a.Response); err != nil {
			return nil, fmt.Errorf("quiz: answer response: %w", err)
		}
		if fraction.Valid {
			a.Fraction = &fraction.Float64
		}
		if by.Valid {
			a.GradedBy = &by.Int64
		}
		out[a.QuestionID] = a
	}
	return out, rows.Err()
}

// saveAnswer writes an answer while its attempt is open at now; it
// reports false when the attempt has ended or its time is over, or, when
// final, the question already has an answer.
func saveAnswer(ctx context.Context, q sqldb.Querier, attemptID int64, a Answer, now time.Time, final bool) (bool, error) {
	resp, err := json.Marshal(a.Response)
	if err != nil {
		return false, err
	}
	onConflict := `DO UPDATE SET response = excluded.response, fraction = excluded.fraction,
			graded_by = NULL, updated_at = excluded.updated_at`
	if final {
		onConflict = `DO NOTHING`
	}
	// The conditions are part of the write, so an answer racing the end of
	// its attempt, or another answer, is either saved or refused.
	res, err := q.ExecContext(ctx, `INSERT INTO quiz_answers (attempt_id, question_id, response, fraction, updated_at)
		SELECT id, $2, $3, $4, $5 FROM quiz_attempts WHERE id = $1 AND ended_at IS NULL AND ends_at > $5
		ON CONFLICT (attempt_id, question_id) `+onConflict, attemptID, a.QuestionID, string(resp), a.Fraction, now)
	if err != nil {
		return false, fmt.Errorf("quiz: save answer: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// closeAttempt ends an open attempt with its result; it reports false
// when another call ended it first.
func closeAttempt(ctx context.Context, q sqldb.Querier, a Attempt) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE quiz_attempts SET ended_at = $2, score = $3, pending = $4, passed = $5
		WHERE id = $1 AND ended_at IS NULL`, a.ID, *a.EndedAt, a.Score, a.Pending, a.Passed)
	if err != nil {
		return false, fmt.Errorf("quiz: end attempt: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// updateResult rewrites an ended attempt's result after a grade.
func updateResult(ctx context.Context, q sqldb.Querier, a Attempt) error {
	_, err := q.ExecContext(ctx, `UPDATE quiz_attempts SET score = $2, pending = $3, passed = $4 WHERE id = $1`,
		a.ID, a.Score, a.Pending, a.Passed)
	if err != nil {
		return fmt.Errorf("quiz: update result: %w", err)
	}
	return nil
}

func gradeAnswer(ctx context.Context, q sqldb.Querier, attemptID, questionID int64, fraction float64, by int64, now time.Time) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE quiz_answers SET fraction = $3, graded_by = $4, updated_at = $5
		WHERE attempt_id = $1 AND question_id = $2`, attemptID, questionID, fraction, by, now)
	if err != nil {
		return false, fmt.Errorf("quiz: grade answer: %w", err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
