package scorm

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
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

// SCORecord is a learner's track of one SCO of a topic as a tutor reads
// it: what progress keeps, and a few elements of the stored CMI model.
type SCORecord struct {
	SCOID                        int64
	Title                        string
	Attempt                      int64
	Completion, Success, Exit    string
	ScoreRaw, ScoreMin, ScoreMax *float64
	ScoreScaled                  *float64
	TotalSeconds, SessionSeconds int64
	Location                     string
	SuspendDataLength            int
	Interactions                 []Interaction
	CompletedAt                  *time.Time
	UpdatedAt                    time.Time
}

// Interaction is one cmi.interactions.n of a track (SCORM 1.2 or 2004).
type Interaction struct {
	ID, Type, Description, LearnerResponse, CorrectResponse string
	Result, Latency, Time                                   string
}

// maxInteractions bounds the interactions a record reads of one track.
const maxInteractions = 500

// RecordsOf lists the learner's tracks of a topic's SCOs in the package's
// order, in one query: the SCORM track of one learner's topic in the
// gradebook (package reports).
func RecordsOf(ctx context.Context, q sqldb.Querier, userID, topicID int64) ([]SCORecord, error) {
	rows, err := q.QueryContext(ctx, `SELECT t.sco_id, s.title, t.attempt, t.completion, t.success, t.exit_mode, t.score_raw,
		t.score_min, t.score_max, t.score_scaled, t.base_seconds + t.session_seconds, t.session_seconds, t.cmi, t.completed_at,
		t.updated_at FROM scorm_tracks t JOIN scorm_scos s ON s.id = t.sco_id
		WHERE t.user_id = $1 AND t.topic_id = $2 ORDER BY s.position, t.id`, userID, topicID)
	if err != nil {
		return nil, fmt.Errorf("scorm: tracks of user %d in topic %d: %w", userID, topicID, err)
	}
	defer rows.Close()
	out := []SCORecord{}
	for rows.Next() {
		var r SCORecord
		var raw, lo, hi, scaled sql.NullFloat64
		var cmiText string
		var completed sql.NullTime
		if err := rows.Scan(&r.SCOID, &r.Title, &r.Attempt, &r.Completion, &r.Success, &r.Exit, &raw, &lo, &hi, &scaled,
			&r.TotalSeconds, &r.SessionSeconds, &cmiText, &completed, &r.UpdatedAt); err != nil {
			return nil, fmt.Errorf("scorm: scan track: %w", err)
		}
		r.ScoreRaw, r.ScoreMin, r.ScoreMax, r.ScoreScaled = floatPtr(raw), floatPtr(lo), floatPtr(hi), floatPtr(scaled)
		r.UpdatedAt = r.UpdatedAt.UTC()
		if completed.Valid {
			at := completed.Time.UTC()
			r.CompletedAt = &at
		}
		var cmi map[string]any
		if err := json.Unmarshal([]byte(cmiText), &cmi); err != nil {
			return nil, fmt.Errorf("scorm: read the CMI model of SCO %d: %w", r.SCOID, err)
		}
		r.Location = orDefault(text(cmi, "cmi.location"), text(cmi, "cmi.core.lesson_location"))
		r.SuspendDataLength = len([]rune(text(cmi, "cmi.suspend_data")))
		r.Interactions = interactions(cmi)
		out = append(out, r)
	}
	return out, rows.Err()
}

func floatPtr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	f := v.Float64
	return &f
}

// interactions reads cmi.interactions.n.* in order, the 1.2 names
// (student_response, time) and the 2004 ones (learner_response,
// timestamp) alike; the first correct response pattern stands for all.
func interactions(cmi map[string]any) []Interaction {
	out := []Interaction{}
	for n := 0; n < maxInteractions; n++ {
		key := "cmi.interactions." + strconv.Itoa(n) + "."
		it := Interaction{ID: text(cmi, key+"id"), Type: text(cmi, key+"type"), Description: text(cmi, key+"description"),
			LearnerResponse: orDefault(text(cmi, key+"learner_response"), text(cmi, key+"student_response")),
			CorrectResponse: text(cmi, key+"correct_responses.0.pattern"), Result: text(cmi, key+"result"),
			Latency: text(cmi, key+"latency"), Time: orDefault(text(cmi, key+"timestamp"), text(cmi, key+"time"))}
		if it == (Interaction{}) {
			break
		}
		out = append(out, it)
	}
	return out
}
