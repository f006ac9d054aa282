package topics

import (
	"context"
	"math"

	"github.com/lms-platform/lms/internal/platform"
)

// TopicScore is a learner's result in a topic: Raw points out of Max. It
// lives here, beside Completer, because the content kinds that measure it
// and package learning that keeps it both import this package. The API
// shows it, and its name is not plain Score, which the schemas of the
// OpenAPI description, named by type, already give to scorm's.
type TopicScore struct {
	Raw float64 `json:"raw"`
	Max float64 `json:"max"`
}

// Scaled is the score of a kind that reports a share of the maximum (a
// cmi5 or SCORM 2004 scaled score, 0 to 1): percent points out of 100.
// The points are rounded to 4 decimals, so 0.85 gives 85, not the
// 85.00000000000001 of the binary product, which platforms would show.
func Scaled(scaled float64) *TopicScore {
	return &TopicScore{Raw: math.Round(scaled*100*1e4) / 1e4, Max: 100}
}

// Valid tells whether the score is one a topic can keep and compare: a
// positive maximum and 0 ≤ Raw ≤ Max (NaN fails every comparison).
func (s TopicScore) Valid() bool {
	return s.Max > 0 && s.Raw >= 0 && s.Raw <= s.Max
}

// Beats tells whether s is a valid score better than kept (nil: none
// kept). Scores of different maximums compare by their share of it.
func (s *TopicScore) Beats(kept *TopicScore) bool {
	return s != nil && s.Valid() && (kept == nil || s.Raw/s.Max > kept.Raw/kept.Max)
}

// ScoredCompleter completes a topic for a learner with the score the
// learner earned in it (nil: the kind measured none). Package learning
// keeps the best score; see its CompleteTopicScored.
type ScoredCompleter interface {
	Completer
	CompleteTopicScored(ctx context.Context, t *platform.Tenant, userID, topicID int64, score *TopicScore) error
}
