package interactive

import (
	"context"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The events an app reports through the page (docs/content-kinds.md, "Interactive apps").
const (
	EventOpen     = "open"
	EventStep     = "step"
	EventComplete = "complete"
	EventScore    = "score"
)

// AppProgressInput is what the learner's page forwards of the app's messages.
type AppProgressInput struct {
	Event string `json:"event" enum:"open,step,complete,score" doc:"open: the app was shown; step: the learner reached step; complete: the app says it is done; score: the app's score."`
	Step  string `json:"step,omitempty" maxLength:"64" doc:"With step: a step id of the manifest."`
	Score *int   `json:"score,omitempty" minimum:"0" maximum:"100" doc:"With score: a percentage."`
}

// AppProgressView is the learner's activity and whether the topic completed.
type AppProgressView struct {
	Steps       []string `json:"steps" doc:"Step ids reached, in the order first reached."`
	AppComplete bool     `json:"app_complete"`
	Score       *int     `json:"score" doc:"Best score reported."`
	Completion  string   `json:"completion" doc:"The topic's rule."`
	Completed   bool     `json:"completed" doc:"Whether the topic's rule is met; the topic is then complete in the learner's progress."`
	// Range is here because the page needs it for the app's init message
	// and only the server knows the version a followLatest topic plays.
	Range []Step `json:"range" doc:"The steps of the played range (startStep to endStep, defaults resolved) in the version the topic plays, in order; the page sends them to the app in its init message."`
}

// Record applies one report of the app and completes the topic when its
// rule is met: on_open at once, on_range_end when the range's last step
// was reached, on_complete when the app said so, on_score when a score
// reached passScore.
func (s *Service) Record(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, in AppProgressInput) (AppProgressView, error) {
	if _, err := s.Topics.Learnable(ctx, t, p, topicID); err != nil {
		return AppProgressView{}, err
	}
	pl, err := s.playing(ctx, t, topicID)
	if err != nil {
		return AppProgressView{}, err
	}
	m := pl.version.Manifest
	switch in.Event {
	case EventStep:
		if m.Step(in.Step) < 0 {
			return AppProgressView{}, apperr.Field("step", "The step must be a step id of the app's manifest.")
		}
	case EventScore:
		if in.Score == nil {
			return AppProgressView{}, apperr.Field("score", "The score is required with the event score.")
		}
	}
	var view AppProgressView
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		pr, err := loadProgress(ctx, tx, topicID, p.UserID)
		if err != nil {
			return err
		}
		switch in.Event {
		case EventStep:
			if !slices.Contains(pr.Steps, in.Step) {
				pr.Steps = append(pr.Steps, in.Step)
			}
		case EventComplete:
			pr.AppComplete = true
		case EventScore:
			if pr.Score == nil || *in.Score > *pr.Score {
				pr.Score = in.Score
			}
		}
		if err := saveProgress(ctx, tx, s.now(), topicID, p.UserID, pr); err != nil {
			return err
		}
		view = AppProgressView{Steps: pr.Steps, AppComplete: pr.AppComplete, Score: pr.Score, Completion: pl.value.Completion,
			Completed: met(pl.value, m, pr), Range: pl.value.Played(m)}
		return nil
	})
	if err != nil || !view.Completed {
		return view, err
	}
	return view, s.Progress.CompleteTopic(ctx, t, p.UserID, topicID)
}

// met applies the topic's completion rule to the learner's activity.
func met(v Value, m Manifest, pr progress) bool {
	switch v.Completion {
	case OnOpen:
		return true
	case OnComplete:
		return pr.AppComplete
	case OnScore:
		return v.PassScore != nil && pr.Score != nil && *pr.Score >= *v.PassScore
	}
	_, end := v.Range(m)
	return slices.Contains(pr.Steps, m.Steps[end].ID)
}
