package liascript

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// LiaProgressInput is what the player reports: sections visited and quiz
// results, by index in document order (from 0).
type LiaProgressInput struct {
	Visited []int           `json:"visited,omitempty" maxItems:"2000" doc:"Section indexes the learner opened."`
	Quizzes []LiaQuizResult `json:"quizzes,omitempty" maxItems:"2000" doc:"Quiz results."`
}

// LiaQuizResult is one quiz's result.
type LiaQuizResult struct {
	Quiz   int  `json:"quiz" minimum:"0" doc:"Quiz index in the course, from 0."`
	Solved bool `json:"solved" doc:"Whether the learner's answer was right; a solved quiz stays solved."`
}

// LiaProgressView is the learner's progress in the topic.
type LiaProgressView struct {
	Visited    []int  `json:"visited"`
	Solved     []int  `json:"solved"`
	Sections   int    `json:"sections"`
	Quizzes    int    `json:"quizzes"`
	Completion string `json:"completion"`
	Completed  bool   `json:"completed" doc:"Whether the topic's rule is met; the topic is then complete in the learner's progress."`
}

// Record adds a report to the learner's progress and completes the topic
// when its rule is met.
func (s *Service) Record(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, in LiaProgressInput) (LiaProgressView, error) {
	topic, err := s.Topics.Learnable(ctx, t, p, topicID)
	if err != nil {
		return LiaProgressView{}, err
	}
	if topic.TopicableType != Class {
		return LiaProgressView{}, apperr.New(apperr.Invalid, "This topic is not a LiaScript course.")
	}
	v, err := ParseValue(topic.Content)
	if err != nil {
		return LiaProgressView{}, err
	}
	errs := map[string][]string{}
	for i, sec := range in.Visited {
		if sec < 0 || sec >= len(v.Structure.Sections) {
			errs[fmt.Sprintf("visited.%d", i)] = []string{fmt.Sprintf("The course has sections 0 to %d.", len(v.Structure.Sections)-1)}
		}
	}
	for i, q := range in.Quizzes {
		if q.Quiz < 0 || q.Quiz >= v.Structure.Quizzes {
			errs[fmt.Sprintf("quizzes.%d.quiz", i)] = []string{fmt.Sprintf("The course has %d quizzes, numbered from 0.", v.Structure.Quizzes)}
		}
	}
	if len(errs) > 0 {
		return LiaProgressView{}, apperr.Validation(errs)
	}
	var view LiaProgressView
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		visited, solved, err := loadProgress(ctx, tx, topicID, p.UserID)
		if err != nil {
			return err
		}
		for _, sec := range in.Visited {
			if !slices.Contains(visited, sec) {
				visited = append(visited, sec)
			}
		}
		for _, q := range in.Quizzes {
			if q.Solved && !slices.Contains(solved, q.Quiz) {
				solved = append(solved, q.Quiz)
			}
		}
		slices.Sort(visited)
		slices.Sort(solved)
		if err := saveProgress(ctx, tx, s, topicID, p.UserID, visited, solved); err != nil {
			return err
		}
		view = LiaProgressView{Visited: visited, Solved: solved, Sections: len(v.Structure.Sections), Quizzes: v.Structure.Quizzes,
			Completion: v.Completion, Completed: v.Complete(len(visited), len(solved))}
		return nil
	})
	if err != nil || !view.Completed {
		return view, err
	}
	return view, s.Progress.CompleteTopic(ctx, t, p.UserID, topicID)
}

func loadProgress(ctx context.Context, q sqldb.Querier, topicID, userID int64) ([]int, []int, error) {
	var visited, solved string
	err := q.QueryRowContext(ctx, `SELECT visited, solved FROM liascript_progress WHERE topic_id = $1 AND user_id = $2`, topicID, userID).
		Scan(&visited, &solved)
	if sqldb.NotFound(err) {
		return []int{}, []int{}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("liascript: load progress: %w", err)
	}
	var v, s []int
	if err := json.Unmarshal([]byte(visited), &v); err != nil {
		return nil, nil, err
	}
	if err := json.Unmarshal([]byte(solved), &s); err != nil {
		return nil, nil, err
	}
	return v, s, nil
}

func saveProgress(ctx context.Context, q sqldb.Querier, s *Service, topicID, userID int64, visited, solved []int) error {
	v, _ := json.Marshal(visited)
	sv, _ := json.Marshal(solved)
	_, err := q.ExecContext(ctx, `INSERT INTO liascript_progress (topic_id, user_id, visited, solved, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (topic_id, user_id) DO UPDATE SET visited = excluded.visited, solved = excluded.solved, updated_at = excluded.updated_at`,
		topicID, userID, string(v), string(sv), s.now())
	if err != nil {
		return fmt.Errorf("liascript: save progress: %w", err)
	}
	return nil
}
