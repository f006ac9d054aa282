package cmi5

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/google/uuid"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// The reasons of a waived statement (cmi5 section 9.5.4.3, the reason
// result extension).
const (
	ReasonTestedOut     = "Tested Out"
	ReasonEquivalentAU  = "Equivalent AU"
	ReasonEquivalentOut = "Equivalent Outside Activity"
	ReasonAdmin         = "Administrative"
)

// WaiveInput names the learner who need not take the topic's AU, and why.
type WaiveInput struct {
	User   int64  `json:"user" minimum:"1" doc:"The learner."`
	Reason string `json:"reason" enum:"Tested Out,Equivalent AU,Equivalent Outside Activity,Administrative" doc:"Why the AU is waived (cmi5 section 9.5.4.3)."`
}

// Waived is the answer of a waiver.
type Waived struct {
	Registration string `json:"registration"`
	AUIRI        string `json:"au_iri"`
	Reason       string `json:"reason"`
}

type waiveInput struct {
	Topic int64 `path:"topic" doc:"The cmi5 topic."`
	Body  WaiveInput
}

func waiveRoute(api huma.API, s *Service) {
	// Waiving an AU decides a learner's record as the course's author:
	// courses:write.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/cmi5/waive/{topic}", Tags: []string{"cmi5"}, Who: httpx.User,
		Scope:   "courses:write",
		Summary: "Waive a learner's AU of a cmi5 topic",
		Description: "Per cmi5 section 9.3.7: the LMS issues waived (result success and completion true, the reason extension, the moveon " +
			"category) in the learner's registration, which satisfies the AU for its moveOn: the topic completes and the AU's blocks and " +
			"course are satisfied when all their AUs are. 409 when the AU is already satisfied in the registration. For the course's editors.",
		Errors: []int{http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity}},
		func(ctx context.Context, in *waiveInput) (*httpx.Response[Waived], error) {
			out, err := s.Waive(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.Body)
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
}

// Waive satisfies a topic's AU for a learner who need not take it: the
// waived statement, the AU's status, the topic's completion, and the
// blocks and course the AU satisfies.
func (s *Service) Waive(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, in WaiveInput) (Waived, error) {
	editor, au, pkg, err := topicAU(ctx, t, p, topicID)
	if err != nil {
		return Waived{}, err
	}
	if !editor {
		return Waived{}, errEditor
	}
	switch in.Reason {
	case ReasonTestedOut, ReasonEquivalentAU, ReasonEquivalentOut, ReasonAdmin:
	default:
		return Waived{}, apperr.Field("reason", "The reason must be Tested Out, Equivalent AU, Equivalent Outside Activity or Administrative.")
	}
	exists, err := accounts.Exists(ctx, t.DB, in.User)
	if err != nil {
		return Waived{}, err
	}
	if !exists {
		return Waived{}, apperr.Field("user", "No such user.")
	}
	now := s.now()
	reg, created, err := registration(ctx, t.DB, pkg.ID, in.User, uuid.NewString(), now)
	if err != nil {
		return Waived{}, err
	}
	release, err := s.launchLock(ctx, t, reg)
	if err != nil {
		return Waived{}, err
	}
	defer release()
	if created {
		if err := s.registered(ctx, t, pkg, reg, in.User, topicID); err != nil {
			return Waived{}, err
		}
	}
	st, err := statusOf(ctx, t.DB, reg, au.ID)
	if err != nil {
		return Waived{}, err
	}
	if st.Satisfied {
		return Waived{}, apperr.New(apperr.Conflict, "The AU is already satisfied in the learner's registration.")
	}
	// An LMS statement outside any AU session gets a session id of its
	// own, as every cmi5 defined statement carries one.
	sessionID := uuid.NewString()
	stmt := map[string]any{"actor": Actor(t, in.User), "verb": verb(VerbWaived, "waived"), "object": activity(launchActivityID(t, pkg.ID, au.IRI, reg)),
		"timestamp": now.Format(time.RFC3339Nano),
		"result":    map[string]any{"success": true, "completion": true, "extensions": map[string]any{ExtReason: in.Reason}},
		"context": map[string]any{"registration": reg, "extensions": map[string]any{ExtSessionID: sessionID},
			"contextActivities": map[string]any{"category": []any{activity(CategoryCmi5), activity(CategoryMoveOn)},
				"grouping": []any{activity(au.IRI)}}}}
	if err := s.issue(ctx, t, stmt); err != nil {
		return Waived{}, err
	}
	st.Satisfied = true
	if err := saveStatus(ctx, t.DB, reg, au.ID, st); err != nil {
		return Waived{}, err
	}
	if err := s.completeTopic(ctx, t, in.User, topicID, nil); err != nil {
		return Waived{}, err
	}
	if err := s.satisfyContainers(ctx, t, pkg, reg, in.User, sessionID); err != nil {
		return Waived{}, err
	}
	return Waived{Registration: reg, AUIRI: au.IRI, Reason: in.Reason}, nil
}
