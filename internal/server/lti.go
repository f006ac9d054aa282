package server

import (
	"context"

	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/lti"
	"github.com/lms-platform/lms/internal/platform"
)

// ltiRoutes registers LTI 1.3: the tool role, whose launches log users
// in through auth, and land on the frontend's /lti/launch, and whose
// learners' completions go back to their platforms as scores; and the
// platform role, whose launches learning allows.
func (s *Server) ltiRoutes(authService *auth.Service) {
	outbound := fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate})
	keys := &lti.KeySets{Fetch: outbound, Now: s.Clock.Now}
	tool := &lti.Tool{Clock: s.Clock, Keys: keys,
		Issue: func(ctx context.Context, t *platform.Tenant, userID int64) (auth.Issued, error) {
			return authService.LoginUser(ctx, t, userID, false)
		}}
	lti.ToolRoutes(s.API, tool, func(rec platform.Record) string {
		host := ""
		if len(rec.Hosts) > 0 {
			host = rec.Hosts[0]
		}
		return config.FrontURL(s.Config.WebURL, s.Config.WebAddr, host)
	})
	lti.PlatformRoutes(s.API, &lti.Platform{Clock: s.Clock, Gate: s.Learning, Keys: keys, Progress: s.Learning, Topics: s.topics})
	if s.Dispatcher != nil {
		// Learners who finish what a platform launched get their score
		// posted back to it.
		s.Dispatcher.Listen("lti_grades", (&lti.Grades{Clock: s.Clock, Fetch: outbound, Kept: s.keptScore}).Listener)
	}
}

// keptScore is the learner's kept score of a topic, for the grades sent
// back to LTI platforms.
func (s *Server) keptScore(ctx context.Context, t *platform.Tenant, userID, topicID int64) (float64, float64, bool, error) {
	_, score, err := s.Learning.TopicResult(ctx, t, userID, topicID)
	if err != nil || score == nil {
		return 0, 0, false, err
	}
	return score.Raw, score.Max, true, nil
}
