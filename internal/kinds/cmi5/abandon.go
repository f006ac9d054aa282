package cmi5

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// AbandonInput names the learner whose open session is abandoned.
type AbandonInput struct {
	User int64 `json:"user" minimum:"1" doc:"The learner."`
}

// Abandoned is the answer of an abandonment: the sessions it ended.
type Abandoned struct {
	Registration string   `json:"registration"`
	Sessions     []string `json:"sessions" doc:"The ids of the sessions abandoned."`
}

type abandonInput struct {
	Topic int64 `path:"topic" doc:"The cmi5 topic."`
	Body  AbandonInput
}

func abandonRoute(api huma.API, s *Service) {
	// Ending a learner's session decides their record as the course's
	// author, as a waiver does: courses:write.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/cmi5/abandon/{topic}", Tags: []string{"cmi5"}, Who: httpx.User,
		Scope:   "courses:write",
		Summary: "Abandon a learner's open session of a cmi5 topic",
		Description: "Per cmi5 section 9.3.6: the LMS ends the learner's sessions of the topic's AU that neither terminated nor were " +
			"abandoned, with an abandoned statement each (its duration from the launch to the session's last statement); their auth " +
			"tokens stop working (401). 409 when the learner has no open session of the AU. For the course's editors.",
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity}},
		func(ctx context.Context, in *abandonInput) (*httpx.Response[Abandoned], error) {
			out, err := s.Abandon(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.Body)
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
}

var errNoOpenSession = apperr.New(apperr.Conflict, "The learner has no open session of this AU.")

// Abandon ends a learner's open sessions of a topic's AU, as a new launch
// of the learner would: an operator's way to close a session the AU left
// open.
func (s *Service) Abandon(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, in AbandonInput) (Abandoned, error) {
	editor, au, pkg, err := topicAU(ctx, t, p, topicID)
	if err != nil {
		return Abandoned{}, err
	}
	if !editor {
		return Abandoned{}, errEditor
	}
	var reg string
	err = t.DB.QueryRowContext(ctx, `SELECT id FROM cmi5_registrations WHERE package_id = $1 AND user_id = $2`, pkg.ID, in.User).Scan(&reg)
	if errors.Is(err, sql.ErrNoRows) {
		return Abandoned{}, errNoOpenSession
	}
	if err != nil {
		return Abandoned{}, fmt.Errorf("cmi5: load registration: %w", err)
	}
	release, err := s.launchLock(ctx, t, reg)
	if err != nil {
		return Abandoned{}, err
	}
	defer release()
	open, err := openSessions(ctx, t.DB, reg, au.ID)
	if err != nil {
		return Abandoned{}, err
	}
	if len(open) == 0 {
		return Abandoned{}, errNoOpenSession
	}
	out := Abandoned{Registration: reg, Sessions: []string{}}
	now := s.now()
	for _, sess := range open {
		if err := s.abandon(ctx, t, sess, au, now); err != nil {
			return Abandoned{}, err
		}
		out.Sessions = append(out.Sessions, sess.ID)
	}
	return out, nil
}
