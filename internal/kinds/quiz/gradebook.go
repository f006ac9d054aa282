package quiz

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// AttemptsTrack sums up a learner's attempts at a quiz topic.
type AttemptsTrack struct {
	Attempts, Ended int
	// BestPercent is the best score of an ended attempt in percent of its
	// maximum; nil when none ended.
	BestPercent *float64
	Passed      bool
	LastStarted time.Time
}

// AttemptsOf sums up the learner's attempts at some topics, by topic, in
// one query: the quiz tracks of the gradebook (package reports).
func AttemptsOf(ctx context.Context, q sqldb.Querier, userID int64, topicIDs []int64) (map[int64]AttemptsTrack, error) {
	out := map[int64]AttemptsTrack{}
	if len(topicIDs) == 0 {
		return out, nil
	}
	a := sqldb.Args{userID}
	rows, err := q.QueryContext(ctx, `SELECT topic_id, started_at, ended_at, score, max_score, passed FROM quiz_attempts
		WHERE user_id = $1 AND topic_id IN (`+a.List(topicIDs)+`) ORDER BY number`, a...)
	if err != nil {
		return nil, fmt.Errorf("quiz: attempts of user %d: %w", userID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var topicID int64
		var started time.Time
		var ended sql.NullTime
		var score, outOf float64
		var passed sql.NullBool
		if err := rows.Scan(&topicID, &started, &ended, &score, &outOf, &passed); err != nil {
			return nil, fmt.Errorf("quiz: scan attempt: %w", err)
		}
		tr := out[topicID]
		tr.Attempts++
		tr.LastStarted = started.UTC()
		if ended.Valid {
			tr.Ended++
			if outOf > 0 && (tr.BestPercent == nil || score*100/outOf > *tr.BestPercent) {
				pct := score * 100 / outOf
				tr.BestPercent = &pct
			}
			tr.Passed = tr.Passed || passed.Bool
		}
		out[topicID] = tr
	}
	return out, rows.Err()
}
