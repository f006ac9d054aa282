package server

import (
	"context"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/platform"
)

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
