package tokens

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

type createInput struct {
	Body struct {
		Name               string     `json:"name" minLength:"1" maxLength:"100" doc:"What the token is for, shown in lists."`
		Scopes             []string   `json:"scopes" minItems:"1" maxItems:"64" doc:"Scope names (see the API description); a scoped token may only name scopes it holds itself."`
		ExpiresAt          *time.Time `json:"expires_at,omitempty" doc:"When the token stops working; omitted: never. A token created with a scoped token expires at the latest with it: omitted is then its expiry, a later time is refused (422)."`
		RateLimitPerMinute *int       `json:"rate_limit_per_minute,omitempty" minimum:"1" maximum:"6000" doc:"Requests per minute this token may make; omitted: no per-token limit. A token created with a scoped token is limited at most like it: omitted is then its limit, a higher one is refused (422)."`
	}
}

type idInput struct {
	ID string `path:"id" maxLength:"64"`
}

type adminListInput struct {
	httpx.PageQuery
	UserID         int64 `query:"user_id" minimum:"0" doc:"Only this user's tokens."`
	IncludeRevoked bool  `query:"include_revoked" doc:"Also list revoked tokens."`
}

type tokenAuditInput struct {
	httpx.PageQuery
	ID string `path:"id" maxLength:"64"`
}

type auditInput struct {
	httpx.PageQuery
	UserID  int64     `query:"user_id" minimum:"0" doc:"Only calls of this user's tokens."`
	TokenID string    `query:"token_id" maxLength:"64" doc:"Only calls of this token."`
	Route   string    `query:"route" maxLength:"300" doc:"Only calls of this route pattern, such as \"GET /api/admin/courses/{id}\"."`
	Status  int       `query:"status" minimum:"0" maximum:"599" doc:"Only calls answered with this status."`
	From    time.Time `query:"from" doc:"Only calls at or after this time (RFC 3339)."`
	To      time.Time `query:"to" doc:"Only calls before this time (RFC 3339)."`
}

var (
	tags       = []string{"tokens"}
	routeLimit = &httpx.RateLimit{Limit: 60, Per: httpx.PerUserOrIP, Name: "tokens"}
)

// Routes registers the scoped token routes of the spec's table. The audit
// routes read what rec wrote.
func Routes(api huma.API, s *Service) {
	// A token manages the caller's own tokens with tokens:read and
	// tokens:write (never wider than itself, see Issue); any token may ask
	// about itself; the tenant's tokens and audits need tokens:manage.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/tokens", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:   "tokens:read",
		Summary: "List the caller's live scoped tokens (never their secrets), with last use time and address"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]Token], error) {
			list, _, err := s.List(ctx, httpx.TenantFrom(ctx), Filter{UserID: httpx.PrincipalFrom(ctx).UserID, Limit: 1000})
			if err != nil {
				return nil, err
			}
			return httpx.OK(list)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/tokens", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:  "tokens:write",
		Status: http.StatusCreated, Credentials: true,
		Summary: "Create a scoped token for the caller; the secret is in this answer only"},
		func(ctx context.Context, in *createInput) (*httpx.Response[Created], error) {
			p := httpx.PrincipalFrom(ctx)
			out, err := s.Issue(ctx, httpx.TenantFrom(ctx), p.UserID, NewToken{Name: in.Body.Name, Scopes: in.Body.Scopes,
				ExpiresAt: in.Body.ExpiresAt, RateLimitPerMinute: in.Body.RateLimitPerMinute, Ceiling: p.Scopes,
				Parent: ParentOf(p)})
			if err != nil {
				return nil, err
			}
			return httpx.Created(out, "Token created. Copy the secret now: it is not shown again.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/tokens/current", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:   httpx.AnyToken,
		Summary: "The scoped token this request carries; 404 for a signed access token"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Token], error) {
			p := httpx.PrincipalFrom(ctx)
			if !p.Scoped() {
				return nil, apperr.New(apperr.NotFound, "This request carries no scoped token.")
			}
			tok, err := s.Get(ctx, httpx.TenantFrom(ctx), p.TokenID)
			if err != nil {
				return nil, err
			}
			return httpx.OK(tok)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodDelete, Path: "/api/auth/tokens/{id}", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:   "tokens:write",
		Summary: "Revoke one of the caller's scoped tokens (idempotent; another user's token is not found)"},
		func(ctx context.Context, in *idInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.RevokeOwn(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx).UserID, in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Token revoked.")
		})
	adminRoutes(api, s)
}

func adminRoutes(api huma.API, s *Service) {
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/tokens", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:   "tokens:manage",
		Summary: "List every scoped token of the tenant, newest first, optionally one user's (permission token_manage)"},
		func(ctx context.Context, in *adminListInput) (*httpx.PageResponse[Token], error) {
			if err := manage(ctx); err != nil {
				return nil, err
			}
			list, total, err := s.List(ctx, httpx.TenantFrom(ctx), Filter{UserID: in.UserID, IncludeRevoked: in.IncludeRevoked,
				Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(list, in.PageQuery, total)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodDelete, Path: "/api/admin/tokens/{id}", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:   "tokens:manage",
		Summary: "Revoke any scoped token of the tenant (idempotent; permission token_manage)"},
		func(ctx context.Context, in *idInput) (*httpx.Response[*httpx.Empty], error) {
			if err := manage(ctx); err != nil {
				return nil, err
			}
			if err := s.RevokeAny(ctx, httpx.TenantFrom(ctx), in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Token revoked.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/tokens/{id}/audit", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:   "tokens:manage",
		Summary: "The agent audit of one scoped token, newest first (permission token_manage)"},
		func(ctx context.Context, in *tokenAuditInput) (*httpx.PageResponse[AuditEntry], error) {
			if err := manage(ctx); err != nil {
				return nil, err
			}
			t := httpx.TenantFrom(ctx)
			if _, err := s.Get(ctx, t, in.ID); err != nil {
				return nil, err
			}
			list, total, err := Audit(ctx, t, AuditFilter{TokenID: in.ID, Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(list, in.PageQuery, total)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/agent-audit", Tags: tags, Who: httpx.User, Limit: routeLimit,
		Scope:   "tokens:manage",
		Summary: "Every call made with a scoped token, newest first, with filters (permission token_manage)"},
		func(ctx context.Context, in *auditInput) (*httpx.PageResponse[AuditEntry], error) {
			if err := manage(ctx); err != nil {
				return nil, err
			}
			list, total, err := Audit(ctx, httpx.TenantFrom(ctx), AuditFilter{UserID: in.UserID, TokenID: in.TokenID,
				Route: in.Route, Status: in.Status, From: in.From, To: in.To, Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(list, in.PageQuery, total)
		})
}

// ParentOf is the scoped token p's request carries, the parent of any
// token it creates; "" for a signed access token.
func ParentOf(p *access.Principal) string {
	if p.Scoped() {
		return p.TokenID
	}
	return ""
}

func manage(ctx context.Context) error {
	if !httpx.PrincipalFrom(ctx).Has(access.TokenManage) {
		return apperr.New(apperr.Forbidden, "This action is unauthorized.")
	}
	return nil
}
