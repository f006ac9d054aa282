package quiz

import (
	"context"
	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/platform"
	"time"
)

// AttemptView is an attempt as the API shows it. While the attempt is under way
// it shows the questions as gift.Shown (nothing that tells the right
// answers) with the learner's saved answers, and no score; once ended it
// adds the score and the pass. The review of a question is shown to the
// learner as the attempt's review setting says: after the end, once the
// question is answered, or never; graders always see it.
type AttemptView struct {
	ID          int64      `json:"id"`
	TopicID     int64      `json:"topic_id"`
	UserID      int64      `json:"user_id"`
	Number      int        `json:"number"`
	Status      string     `json:"status" enum:"open,ended"`
	StartedAt   time.Time  `json:"started_at"`
	EndsAt      time.Time  `json:"ends_at"`
	EndedAt     *time.Time `json:"ended_at"`
	SecondsLeft int64      `json:"seconds_left"`
	MaxScore    float64    `json:"max_score"`
	// Score, Passed and PendingGrading are shown once the attempt ended.
	Score          *float64          `json:"score"`
	MinPassScore   *float64          `json:"min_pass_score"`
	Passed         *bool             `json:"passed"`
	PendingGrading bool              `json:"pending_grading"`
	Review         string            `json:"review" enum:"after_end,after_answer,never"`
	Questions      []AttemptQuestion `json:"questions,omitempty"`
}

// AttemptQuestion is one question of an attempt.
type AttemptQuestion struct {
	ID     int64          `json:"id"`
	Score  float64        `json:"score"`
	Shown  gift.Shown     `json:"question"`
	Answer *gift.Response `json:"answer"`
	// QuestionReview is shown as the attempt's review setting says.
	QuestionReview *QuestionReview `json:"review,omitempty"`
}

// QuestionReview is a question after its attempt: the question in full (answers,
// weights, feedback) and what the answer earned.
type QuestionReview struct {
	Question gift.Question `json:"gift"`
	// Earned is nil while an essay waits for a grade.
	Earned *float64 `json:"earned"`
}

// SavedAnswer acknowledges a saved answer.
type SavedAnswer struct {
	QuestionID int64         `json:"question_id"`
	Answer     gift.Response `json:"answer"`
	SavedAt    time.Time     `json:"saved_at"`
	// Review is the answer's review, under the review setting after_answer.
	Review *QuestionReview `json:"review,omitempty"`
}

// summary is an attempt without its questions.
func summary(a Attempt, now time.Time) AttemptView {
	v := AttemptView{ID: a.ID, TopicID: a.TopicID, UserID: a.UserID, Number: a.Number, Status: "open", StartedAt: a.StartedAt,
		EndsAt: a.EndsAt, EndedAt: a.EndedAt, MaxScore: a.MaxScore, MinPassScore: a.MinPassScore, Review: a.Review}
	// An attempt whose time is over shows as ended even before a request
	// ends it in the database.
	if a.EndedAt != nil || !now.Before(a.EndsAt) {
		v.Status = "ended"
	}
	if a.EndedAt != nil {
		score := a.Score
		v.Score, v.Passed, v.PendingGrading = &score, a.Passed, a.Pending
	} else if now.Before(a.EndsAt) {
		v.SecondsLeft = int64(a.EndsAt.Sub(now).Seconds())
	}
	return v
}

// view is an attempt with its questions and answers; review shows the
// review even before the end (for graders).
func (s *Service) view(ctx context.Context, t *platform.Tenant, a Attempt, now time.Time, review bool) (AttemptView, error) {
	answers, err := answersOf(ctx, t.DB, a.ID)
	if err != nil {
		return AttemptView{}, err
	}
	return viewOf(a, answers, now, review), nil
}

// viewOf is view with the attempt's answers at hand.
func viewOf(a Attempt, answers map[int64]Answer, now time.Time, review bool) AttemptView {
	v := summary(a, now)
	for _, q := range a.Questions {
		qv := AttemptQuestion{ID: q.ID, Score: q.Score, Shown: q.Q.Show()}
		ans, answered := answers[q.ID]
		if answered {
			r := ans.Response
			qv.Answer = &r
		}
		var shown bool
		switch a.Review {
		case ReviewNever:
			shown = review
		case ReviewAfterAnswer:
			shown = review || a.EndedAt != nil || answered
		default:
			shown = review || a.EndedAt != nil
		}
		if shown {
			qv.QuestionReview = reviewOf(q, ans, answered)
		}
		v.Questions = append(v.Questions, qv)
	}
	return v
}

// reviewOf is the review of one question and its answer, if answered.
func reviewOf(q Question, ans Answer, answered bool) *QuestionReview {
	rv := &QuestionReview{Question: q.Q}
	switch {
	case !q.Q.Scored() || !answered:
		zero := 0.0
		rv.Earned = &zero
	case ans.Fraction != nil:
		earned := *ans.Fraction * q.Score
		rv.Earned = &earned
	}
	return rv
}
