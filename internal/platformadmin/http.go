package platformadmin

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

type idInput struct {
	ID int64 `path:"id" minimum:"1"`
}

type createInput struct {
	Body TenantCreateBody
}

// TenantCreateBody is the body of a tenant's creation.
type TenantCreateBody struct {
	Host          string `json:"host" minLength:"1" maxLength:"253" doc:"The host name the tenant is served at; free, lower-case DNS name or IP address."`
	Name          string `json:"name,omitempty" maxLength:"100" doc:"Display name; omitted: the host."`
	AdminEmail    string `json:"admin_email,omitempty" maxLength:"254" doc:"The first admin's e-mail; omitted: admin@HOST."`
	AdminPassword string `json:"admin_password,omitempty" maxLength:"200" doc:"The first admin's password, at least 8 characters; omitted: generated and returned once."`
	Demo          bool   `json:"demo,omitempty" doc:"A demo tenant: in demo mode a queue job seeds it right after this call, and its reset job resets it on schedule; outside demo mode it is only marked."`
}

type renameInput struct {
	ID   int64 `path:"id" minimum:"1"`
	Body TenantRenameBody
}

// TenantRenameBody is the body of a rename.
type TenantRenameBody struct {
	Name string `json:"name" minLength:"1" maxLength:"100"`
}

type deleteInput struct {
	ID           int64  `path:"id" minimum:"1"`
	Confirmation string `query:"confirmation" maxLength:"200" doc:"The confirmation_token of POST /api/platform/tenants/{id}/deletion."`
}

// TenantCreated is the answer of a creation.
type TenantCreated struct {
	Tenant     PlatformTenant `json:"tenant"`
	AdminEmail string         `json:"admin_email"`
	// AdminPassword is only set when it was generated.
	AdminPassword string `json:"admin_password,omitempty" doc:"Only when generated: shown in this answer only."`
}

var (
	tags  = []string{"platform"}
	limit = &httpx.RateLimit{Limit: 60, Per: httpx.PerUser, Name: "platform"}
)

func route(method, path, scope, summary string) httpx.Route {
	return httpx.Route{Method: method, Path: path, Tags: tags, Who: httpx.User, Limit: limit, Scope: httpx.Scope(scope),
		Summary: summary, Description: "Platform API: only on the platform tenant's host (other hosts answer 404); " +
			"permission platform_admin; 60 requests a minute per user."}
}

// Routes registers the platform API.
func Routes(api huma.API, s *Service) {
	httpx.Handle(api, route(http.MethodGet, "/api/platform/tenants", "platform:read",
		"List the tenants with host, name, state, user and course counts, storage used and last activity, oldest first"),
		func(ctx context.Context, in *httpx.PageQuery) (*httpx.PageResponse[PlatformTenant], error) {
			if err := allowed(ctx); err != nil {
				return nil, err
			}
			list, total, err := s.List(ctx, in.Offset(), in.PerPage)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(list, *in, total)
		})
	create := route(http.MethodPost, "/api/platform/tenants", "platform:write",
		"Create a tenant with its database and first admin (as `lms tenant add`); a taken or invalid host is 422")
	create.Status, create.Credentials, create.Errors = http.StatusCreated, true, []int{422}
	httpx.Handle(api, create, func(ctx context.Context, in *createInput) (*httpx.Response[TenantCreated], error) {
		if err := allowed(ctx); err != nil {
			return nil, err
		}
		t, generated, err := s.Add(ctx, NewTenant(in.Body))
		if err != nil {
			return nil, err
		}
		email := in.Body.AdminEmail
		if email == "" {
			email = "admin@" + t.Host
		}
		return httpx.Created(TenantCreated{Tenant: t, AdminEmail: email, AdminPassword: generated}, "Tenant created.")
	})
	httpx.Handle(api, route(http.MethodGet, "/api/platform/tenants/{id}", "platform:read", "One tenant with its figures"),
		func(ctx context.Context, in *idInput) (*httpx.Response[PlatformTenant], error) {
			if err := allowed(ctx); err != nil {
				return nil, err
			}
			return respond(s.Get(ctx, in.ID))
		})
	rename := route(http.MethodPatch, "/api/platform/tenants/{id}", "platform:write", "Rename a tenant")
	rename.Errors = []int{422}
	httpx.Handle(api, rename, func(ctx context.Context, in *renameInput) (*httpx.Response[PlatformTenant], error) {
		if err := allowed(ctx); err != nil {
			return nil, err
		}
		return respond(s.Rename(ctx, in.ID, in.Body.Name))
	})
	suspend := route(http.MethodPost, "/api/platform/tenants/{id}/suspend", "platform:write",
		"Suspend a tenant: every route of its host answers 503 and its jobs stop; its data is kept (the platform tenant: 409)")
	suspend.Errors = []int{409}
	httpx.Handle(api, suspend, func(ctx context.Context, in *idInput) (*httpx.Response[PlatformTenant], error) {
		if err := allowed(ctx); err != nil {
			return nil, err
		}
		return respond(s.Suspend(ctx, in.ID))
	})
	httpx.Handle(api, route(http.MethodPost, "/api/platform/tenants/{id}/resume", "platform:write",
		"Resume a suspended tenant (idempotent)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[PlatformTenant], error) {
			if err := allowed(ctx); err != nil {
				return nil, err
			}
			return respond(s.Resume(ctx, in.ID))
		})
	deletion := route(http.MethodPost, "/api/platform/tenants/{id}/deletion", "platform:write",
		"First step of a deletion: changes nothing, answers what would be removed and a confirmation token valid 10 minutes for this tenant and caller")
	deletion.Errors = []int{409}
	httpx.Handle(api, deletion, func(ctx context.Context, in *idInput) (*httpx.Response[TenantDeletion], error) {
		if err := allowed(ctx); err != nil {
			return nil, err
		}
		return respond(s.RequestDeletion(ctx, in.ID, httpx.PrincipalFrom(ctx).UserID))
	})
	del := route(http.MethodDelete, "/api/platform/tenants/{id}", "platform:write",
		"Delete a tenant for good: its database, files, keys and hosts (free for a new tenant); needs the confirmation of POST .../deletion (422 without it, nothing changed)")
	del.Errors = []int{409, 422}
	httpx.Handle(api, del, func(ctx context.Context, in *deleteInput) (*httpx.Response[*httpx.Empty], error) {
		if err := allowed(ctx); err != nil {
			return nil, err
		}
		if err := s.Delete(ctx, in.ID, httpx.PrincipalFrom(ctx).UserID, in.Confirmation); err != nil {
			return nil, err
		}
		return httpx.Done("Tenant deleted.")
	})
}

func respond[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}

func allowed(ctx context.Context) error {
	if !httpx.PrincipalFrom(ctx).Has(access.PlatformAdmin) {
		return apperr.New(apperr.Forbidden, "This action is unauthorized.")
	}
	return nil
}

// OnlyOnPlatformHost answers 404 to every platform API request on a host
// other than the platform tenant's, before authentication and scopes, so
// the API does not even show there.
func OnlyOnPlatformHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if t := httpx.TenantFrom(r.Context()); t != nil && !t.IsPlatform && isPlatformPath(r.URL.Path) {
			httpx.WriteError(w, r, apperr.New(apperr.NotFound, "Not Found."))
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isPlatformPath(p string) bool {
	return p == "/api/platform" || strings.HasPrefix(p, "/api/platform/")
}
