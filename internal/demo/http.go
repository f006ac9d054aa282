package demo

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/httpx"
)

// loginLimit is the Limits table's row for POST /api/demo/login.
var loginLimit = &httpx.RateLimit{Limit: 60, Per: httpx.PerUserOrIP}

type demoLoginInput struct {
	Body struct {
		Role       string    `json:"role" enum:"student,tutor,admin" doc:"The demo account to log in as."`
		RememberMe auth.Flag `json:"remember_me,omitempty" doc:"true or 1 for a one-month token, as at /api/auth/login"`
	}
}

var tags = []string{"demo"}

// Routes registers the demo routes. They exist in every deployment and
// answer 404 outside demo mode, like a route that does not exist.
func Routes(api huma.API, s *Service) {
	// Demo sign-ins are sessions: never with a scoped token.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/demo/login", Tags: tags, Limit: loginLimit, Credentials: true,
		Scope: httpx.NoTokens,
		Summary: "Demo mode: log in as the demo account of a role without a password (the demo student first gets " +
			"access to every published course); the same answer as /api/auth/login; 404 outside demo mode"},
		func(ctx context.Context, in *demoLoginInput) (*httpx.Response[auth.Issued], error) {
			out, err := s.Login(ctx, httpx.TenantFrom(ctx), in.Body.Role, bool(in.Body.RememberMe))
			if err != nil {
				return nil, err
			}
			return auth.LoginResponse(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/demo", Tags: tags,
		Scope: httpx.NoTokens,
		Summary: "Demo mode: the demo accounts (role and e-mail, never a password), front and admin URLs and " +
			"the reset schedule; 404 outside demo mode"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Info], error) {
			info, err := s.Describe(ctx, httpx.TenantFrom(ctx))
			if err != nil {
				return nil, err
			}
			return httpx.OK(info)
		})
}
