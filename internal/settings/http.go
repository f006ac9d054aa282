package settings

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

// Config is the data of both routes: setting values nested along the keys'
// dots, e.g. {"lms_auth": {"registration": "enabled"}}.
type Config = map[string]any

// Item is one setting to change.
type Item struct {
	Key   string `json:"key" minLength:"1" doc:"Setting key, e.g. lms_auth.registration."`
	Value any    `json:"value" required:"true" doc:"New value: any JSON value, null included, that the key's rule accepts."`
}

type updateInput struct {
	Body struct {
		Config []Item `json:"config" minItems:"1" doc:"Settings to change, all or none."`
	}
}

// Routes registers the settings routes, in the order of the interface.
func Routes(api huma.API, s *Service) {
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/config", Tags: []string{"Settings"},
		Scope:   "settings:read",
		Summary: "Public settings; admins also get private ones", Who: httpx.Anyone},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Config], error) {
			admin := httpx.PrincipalFrom(ctx).HasRole(access.Admin)
			all, err := s.All(ctx, httpx.TenantFrom(ctx), admin)
			if err != nil {
				return nil, err
			}
			return httpx.OK(all)
		})

	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/admin/config", Tags: []string{"Settings"},
		Scope:   "settings:write",
		Summary: "Change settings (admin)", Who: httpx.User},
		func(ctx context.Context, in *updateInput) (*httpx.Response[Config], error) {
			if !httpx.PrincipalFrom(ctx).HasRole(access.Admin) {
				return nil, apperr.New(apperr.Forbidden, "This action is unauthorized.")
			}
			t := httpx.TenantFrom(ctx)
			values := make(map[string]any, len(in.Body.Config))
			for _, item := range in.Body.Config {
				values[item.Key] = item.Value
			}
			if err := s.Update(ctx, t, values); err != nil {
				return nil, err
			}
			all, err := s.All(ctx, t, true)
			if err != nil {
				return nil, err
			}
			return httpx.OK(all)
		})
}
