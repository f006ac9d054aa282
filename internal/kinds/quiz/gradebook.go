package quiz

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/gift"
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

// AttemptRecord is one of a learner's attempts as a tutor reads it: the
// figures and each question with the answer given and the right one, in
// words.
type AttemptRecord struct {
	ID, Number         int64
	StartedAt, EndsAt  time.Time
	EndedAt            *time.Time
	Score, MaxScore    float64
	Passed             *bool
	Pending            bool
	Answered, AllRight int
	Questions          []AnswerRecord
}

// AnswerRecord is one question of an attempt and the learner's answer.
type AnswerRecord struct {
	QuestionID int64
	Type       string
	Prompt     string
	Points     float64
	// Earned is nil while an essay waits for a grade.
	Earned        *float64
	Answered      bool
	Answer, Right []string
}

// RecordsOf lists the learner's attempts at a topic, oldest first, with
// their answers: the quiz track of one learner's topic in the gradebook
// (package reports). One query for the attempts, one per attempt for its
// answers (a quiz allows few attempts).
func RecordsOf(ctx context.Context, q sqldb.Querier, userID, topicID int64) ([]AttemptRecord, error) {
	list, err := attemptsOf(ctx, q, topicID, userID)
	if err != nil {
		return nil, err
	}
	out := make([]AttemptRecord, 0, len(list))
	for _, a := range list {
		answers, err := answersOf(ctx, q, a.ID)
		if err != nil {
			return nil, err
		}
		r := AttemptRecord{ID: a.ID, Number: int64(a.Number), StartedAt: a.StartedAt.UTC(), EndsAt: a.EndsAt.UTC(), EndedAt: a.EndedAt,
			Score: a.Score, MaxScore: a.MaxScore, Passed: a.Passed, Pending: a.Pending}
		for _, qu := range a.Questions {
			if !qu.Q.Scored() {
				continue
			}
			ans, answered := answers[qu.ID]
			rec := AnswerRecord{QuestionID: qu.ID, Type: string(qu.Q.Type), Prompt: qu.Q.Prompt(), Points: qu.Score,
				Answered: answered, Right: gift.RightWords(qu.Q)}
			if answered {
				r.Answered++
				rec.Answer = gift.ResponseWords(qu.Q, ans.Response)
				if ans.Fraction != nil {
					earned := *ans.Fraction * qu.Score
					rec.Earned = &earned
					if *ans.Fraction >= 1 {
						r.AllRight++
					}
				}
			} else {
				zero := 0.0
				rec.Earned = &zero
			}
			r.Questions = append(r.Questions, rec)
		}
		out = append(out, r)
	}
	return out, nil
}
