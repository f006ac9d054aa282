package scorm

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// TracksSummary sums up a learner's tracks of a SCORM topic's SCOs.
type TracksSummary struct {
	SCOs int
	// Status, Score and Seconds are those of the SCO tracked last: its
	// success status when known, its completion status otherwise.
	Status    string
	Score     *float64
	Seconds   int64
	UpdatedAt time.Time
}

// TracksOf sums up the learner's SCORM tracks in some topics, by topic, in
// one query: the SCORM tracks of the gradebook (package reports).
func TracksOf(ctx context.Context, q sqldb.Querier, userID int64, topicIDs []int64) (map[int64]TracksSummary, error) {
	out := map[int64]TracksSummary{}
	if len(topicIDs) == 0 {
		return out, nil
	}
	a := sqldb.Args{userID}
	rows, err := q.QueryContext(ctx, `SELECT topic_id, completion, success, score_raw, base_seconds + session_seconds,
		updated_at FROM scorm_tracks WHERE user_id = $1 AND topic_id IN (`+a.List(topicIDs)+`) ORDER BY updated_at, id`, a...)
	if err != nil {
		return nil, fmt.Errorf("scorm: tracks of user %d: %w", userID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var topicID, seconds int64
		var completion, success string
		var score sql.NullFloat64
		var updated time.Time
		if err := rows.Scan(&topicID, &completion, &success, &score, &seconds, &updated); err != nil {
			return nil, fmt.Errorf("scorm: scan track: %w", err)
		}
		tr := out[topicID]
		tr.SCOs++
		tr.Status, tr.Seconds, tr.UpdatedAt, tr.Score = completion, seconds, updated.UTC(), nil
		if success != "" && success != "unknown" {
			tr.Status = success
		}
		if score.Valid {
			v := score.Float64
			tr.Score = &v
		}
		out[topicID] = tr
	}
	return out, rows.Err()
}
