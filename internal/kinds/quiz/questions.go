package quiz

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// QuizQuestion is a quiz question as authors see it: its GIFT text, its
// score and its parse.
type QuizQuestion struct {
	ID       int64         `json:"id"`
	TopicID  int64         `json:"topic_id"`
	Order    int           `json:"order"`
	Value    string        `json:"value" doc:"The question in GIFT."`
	Score    float64       `json:"score"`
	Type     gift.Type     `json:"type"`
	Question gift.Question `json:"gift"`
}

func adminQuestions(topicID int64, v Value) []QuizQuestion {
	out := make([]QuizQuestion, 0, len(v.Questions))
	for i, q := range v.Questions {
		out = append(out, QuizQuestion{ID: q.ID, TopicID: topicID, Order: i + 1, Value: q.GIFT, Score: q.Score, Type: q.Q.Type, Question: q.Q})
	}
	return out
}

// quizFor loads a quiz topic after checking that p may read (or, with
// write, edit) its course, so that a caller without the right learns
// nothing of the topic.
func quizFor(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, write bool) (Value, error) {
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return Value{}, err
	}
	course, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return Value{}, err
	}
	if !courses.CanEdit(p, course) && (write || !courses.CanRead(p, course)) {
		return Value{}, errUnauthorized
	}
	if topic.TopicableType != Class {
		return Value{}, errNotQuiz
	}
	return Parse(topic.Content)
}

// Questions lists a quiz's questions in order.
func (s *Service) Questions(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) ([]QuizQuestion, error) {
	v, err := quizFor(ctx, t, p, topicID, false)
	if err != nil {
		return nil, err
	}
	return adminQuestions(topicID, v), nil
}

// questionsLockTTL bounds how long a crashed editor can hold a quiz's
// question list.
const questionsLockTTL = 30 * time.Second

// rewrite applies edit to the quiz's question list and stores it through
// the topic update, which rebuilds and checks the value.
func (s *Service) rewrite(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64,
	edit func([]Input) ([]Input, error)) (Value, error) {
	unlock, err := s.Locker.Acquire(ctx, "quiz-questions:"+strconv.FormatInt(t.ID, 10)+":"+strconv.FormatInt(topicID, 10),
		questionsLockTTL)
	if err != nil {
		return Value{}, err
	}
	defer unlock(context.WithoutCancel(ctx))
	v, err := quizFor(ctx, t, p, topicID, true)
	if err != nil {
		return v, err
	}
	items := make([]Input, 0, len(v.Questions))
	for _, q := range v.Questions {
		score := q.Score
		items = append(items, Input{ID: q.ID, GIFT: q.GIFT, Score: &score})
	}
	if items, err = edit(items); err != nil {
		return v, err
	}
	body, err := json.Marshal(map[string]any{"questions": items})
	if err != nil {
		return v, err
	}
	if _, err := s.Topics.UpdateJSON(ctx, t, p, topicID, body); err != nil {
		return v, err
	}
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return v, err
	}
	return Parse(topic.Content)
}

func find(list []QuizQuestion, id int64) (QuizQuestion, error) {
	i := slices.IndexFunc(list, func(q QuizQuestion) bool { return q.ID == id })
	if i < 0 {
		return QuizQuestion{}, apperr.New(apperr.NotFound, "Question not found.")
	}
	return list[i], nil
}

// AddQuestion appends a GIFT question to a quiz.
func (s *Service) AddQuestion(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, src string, score *float64) (QuizQuestion, error) {
	v, err := s.rewrite(ctx, t, p, topicID, func(items []Input) ([]Input, error) {
		return append(items, Input{GIFT: src, Score: score}), nil
	})
	if err != nil {
		return QuizQuestion{}, err
	}
	// The new question is the last one.
	list := adminQuestions(topicID, v)
	return list[len(list)-1], nil
}

// UpdateQuestion changes a question's GIFT text or score.
func (s *Service) UpdateQuestion(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID, id int64, src *string, score *float64) (QuizQuestion, error) {
	v, err := s.rewrite(ctx, t, p, topicID, func(items []Input) ([]Input, error) {
		i := slices.IndexFunc(items, func(q Input) bool { return q.ID == id })
		if i < 0 {
			return nil, apperr.New(apperr.NotFound, "Question not found.")
		}
		if src != nil {
			items[i].GIFT = *src
		}
		if score != nil {
			items[i].Score = score
		}
		return items, nil
	})
	if err != nil {
		return QuizQuestion{}, err
	}
	return find(adminQuestions(topicID, v), id)
}

// DeleteQuestion removes a question; removing one that is not there
// succeeds. Attempts under way keep the questions they started with.
func (s *Service) DeleteQuestion(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID, id int64) error {
	_, err := s.rewrite(ctx, t, p, topicID, func(items []Input) ([]Input, error) {
		return slices.DeleteFunc(items, func(q Input) bool { return q.ID == id }), nil
	})
	return err
}

// OrderQuestions puts the questions in the order of ids, which must name
// each question once.
func (s *Service) OrderQuestions(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, ids []int64) ([]QuizQuestion, error) {
	v, err := s.rewrite(ctx, t, p, topicID, func(items []Input) ([]Input, error) {
		out := make([]Input, 0, len(items))
		for _, id := range ids {
			i := slices.IndexFunc(items, func(q Input) bool { return q.ID == id })
			if i < 0 {
				return nil, apperr.Field("ids", "The ids must name each question of the quiz once.")
			}
			out = append(out, items[i])
			items = slices.Delete(items, i, i+1)
		}
		if len(items) > 0 {
			return nil, apperr.Field("ids", "The ids must name each question of the quiz once.")
		}
		return out, nil
	})
	if err != nil {
		return nil, err
	}
	return adminQuestions(topicID, v), nil
}
