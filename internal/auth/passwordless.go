package auth

import (
	"context"

	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
)

// LoginUser issues a token for a user chosen by the caller, with no
// password: the demo login. It records Login like a password login and
// gives the token the same lifetime class; the caller decides who may be
// logged in this way.
func (s *Service) LoginUser(ctx context.Context, t *platform.Tenant, userID int64, remember bool) (Issued, error) {
	return s.issueWithEvent(ctx, t, userID, remember, 0, events.Event{Name: events.Login, UserID: userID})
}

// LoginResponse is the answer of a successful login, shared by every route
// that logs a user in so that all answer with the same body.
func LoginResponse(out Issued) (*httpx.Response[Issued], error) {
	return httpx.OKMessage(out, "Login successful.")
}
