package lti

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/platform"
)

// Part is the lti kind with both LTI roles: the platform that launches
// lti topics (and gets their scores back), and the tool other platforms
// launch.
type Part struct {
	Kind
	platform *Platform
	tool     *Tool
	grades   *Grades
	front    func(platform.Record) string
}

// Options are what the tool role needs beside deps.
type Options struct {
	// Issue logs a launched user in (package auth).
	Issue func(ctx context.Context, t *platform.Tenant, userID int64) (auth.Issued, error)
	// FrontURL is where a tenant's launches land on the frontend.
	FrontURL func(platform.Record) string
}

// New builds the lti kind and both roles; learning allows the platform's
// launches and keeps the scores sent back to the platforms that launched
// us.
func New(d kinds.Deps, o Options) Part {
	outbound := fetch.New(fetch.Options{AllowPrivate: d.Config.FetchAllowPrivate})
	keys := &KeySets{Fetch: outbound, Now: d.Clock.Now}
	k := Part{
		tool:     &Tool{Clock: d.Clock, Keys: keys, Issue: o.Issue},
		platform: &Platform{Clock: d.Clock, Gate: d.Learning, Keys: keys, Progress: d.Learning, Topics: d.Topics},
		front:    o.FrontURL,
	}
	if d.Learning != nil {
		k.grades = &Grades{Clock: d.Clock, Fetch: outbound, Kept: keptScore(d.Learning)}
	}
	return k
}

// keptScore is the learner's kept score of a topic, for the grades sent
// back to LTI platforms.
func keptScore(l kinds.Learning) func(ctx context.Context, t *platform.Tenant, userID, topicID int64) (float64, float64, bool, error) {
	return func(ctx context.Context, t *platform.Tenant, userID, topicID int64) (float64, float64, bool, error) {
		_, score, err := l.TopicResult(ctx, t, userID, topicID)
		if err != nil || score == nil {
			return 0, 0, false, err
		}
		return score.Raw, score.Max, true, nil
	}
}

// Routes registers the tool role's routes, then the platform role's.
func (k Part) Routes(api huma.API) {
	ToolRoutes(api, k.tool, k.front)
	PlatformRoutes(api, k.platform)
}

// Listeners post the scores of learners who finish what a platform
// launched back to it.
func (k Part) Listeners() []kinds.Reaction {
	if k.grades == nil {
		return nil
	}
	return []kinds.Reaction{{Name: "lti_grades", On: GradeEvents, Run: k.grades.Listener}}
}
