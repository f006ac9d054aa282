package server

import (
	"context"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/cmi5"
	"github.com/lms-platform/lms/internal/lrs"
	"github.com/lms-platform/lms/internal/platform"
)

// newCmi5 builds the LRS and the cmi5 service before the content kinds,
// which import packages through it. Progress and Gate are learning, set
// once it exists (cmi5Routes).
func (s *Server) newCmi5() {
	s.lrs = &lrs.Service{Clock: s.Clock, Principal: s.lrsPrincipal, Locker: s.Locker, Limiter: s.Limiter}
	s.cmi5 = &cmi5.Service{Clock: s.Clock, LRS: s.lrs, Locker: s.Locker}
	s.lrs.Launches = s.cmi5
	s.lrs.Rules = s.cmi5
}

// cmi5Routes registers the LRS and the cmi5 routes; a satisfied AU
// completes its topic through learning, and session time is added there.
func (s *Server) cmi5Routes() {
	s.cmi5.Progress = s.Learning
	s.cmi5.Gate = s.Learning
	s.cmi5.Time = s.Learning
	if s.Jobs != nil {
		s.Jobs.Add(s.cmi5.Jobs()...)
	}
	lrs.Routes(s.API, s.lrs)
	cmi5.Routes(s.API, s.cmi5)
}

// lrsPrincipal reads an API access token sent as the password of Basic
// credentials to the LRS. Scoped tokens are refused: the LRS is not among
// their scopes.
func (s *Server) lrsPrincipal(ctx context.Context, t *platform.Tenant, token string) (*access.Principal, error) {
	if strings.HasPrefix(token, auth.ScopedTokenPrefix) {
		return nil, apperr.New(apperr.Forbidden, "Scoped tokens cannot use the LRS.")
	}
	now := s.Clock.Now()
	claims, err := auth.Parse(t, now, token, 0)
	if err != nil {
		return nil, err
	}
	return auth.LoadPrincipal(ctx, t, now, claims)
}
