package webhooks

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/httpx"
)

type webhookCreateInput struct {
	Body struct {
		URL         string   `json:"url" doc:"The HTTPS URL that receives the events."`
		Events      []string `json:"events" minItems:"1" doc:"Event names of GET /api/events, * as a wildcard (Course*, *)."`
		Description string   `json:"description,omitempty"`
	}
}

type webhookIDInput struct {
	ID int64 `path:"id" doc:"Endpoint id."`
}

type webhookPatchInput struct {
	ID   int64 `path:"id" doc:"Endpoint id."`
	Body struct {
		URL         *string   `json:"url,omitempty"`
		Events      *[]string `json:"events,omitempty"`
		Description *string   `json:"description,omitempty"`
		Enabled     *bool     `json:"enabled,omitempty" doc:"true switches a switched-off endpoint on again."`
	}
}

type webhookListInput struct {
	httpx.PageQuery
}

type webhookDeliveriesInput struct {
	ID int64 `path:"id" doc:"Endpoint id."`
	httpx.PageQuery
	State string `query:"state" enum:"pending,delivered,failed," doc:"Only deliveries in this state."`
}

var (
	errForbidden = apperr.New(apperr.Forbidden, "This action is unauthorized.")
	errMissing   = apperr.New(apperr.NotFound, "Webhook endpoint not found.")
)

const doc = "Each event an endpoint is subscribed to is POSTed to it as JSON {type, id, timestamp, data} with the " +
	"Standard Webhooks headers webhook-id (the same on every attempt: receivers drop repeats), webhook-timestamp and " +
	"webhook-signature (v1, base64 HMAC-SHA256 of \"id.timestamp.body\" keyed with the endpoint's secret, answered " +
	"once at creation). A 2xx answer delivers it; any other is retried with the outbox's backoff for the tenant's " +
	"retry window, after which the endpoint is switched off and its creator notified."

func (s *Service) check(u string, patterns []string) error {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" || (p.Scheme != "https" && !(s.AllowHTTP && p.Scheme == "http")) {
		return apperr.Field("url", "The url must be an https URL.")
	}
	for _, pat := range patterns {
		if !ValidPattern(pat) {
			return apperr.Field("events", "The event "+pat+" matches no event of GET /api/events.")
		}
	}
	return nil
}

func admin(ctx context.Context) error {
	if !httpx.PrincipalFrom(ctx).HasRole(access.Admin) {
		return errForbidden
	}
	return nil
}

func notFound(err error) error {
	if errors.Is(err, errNotFound) {
		return errMissing
	}
	return err
}

// Routes registers the admin API of webhook endpoints.
func Routes(api huma.API, s *Service) {
	tags := []string{"webhooks"}
	// Webhook endpoints are settings of the tenant: settings scopes.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/admin/webhooks", Tags: tags, Who: httpx.User,
		Scope: "settings:write", Status: http.StatusCreated,
		Summary: "Subscribe an endpoint to events (admins); the answer carries its signing secret, once", Description: doc},
		func(ctx context.Context, in *webhookCreateInput) (*httpx.Response[Endpoint], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			if err := s.check(in.Body.URL, in.Body.Events); err != nil {
				return nil, err
			}
			e, err := s.Create(ctx, httpx.TenantFrom(ctx).DB, Endpoint{URL: in.Body.URL, Events: in.Body.Events,
				Description: in.Body.Description}, httpx.PrincipalFrom(ctx).UserID)
			if err != nil {
				return nil, err
			}
			return httpx.Created(e, "Webhook endpoint created.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/webhooks", Tags: tags, Who: httpx.User,
		Scope:   "settings:read",
		Summary: "The webhook endpoints (admins)", Description: doc},
		func(ctx context.Context, in *webhookListInput) (*httpx.PageResponse[Endpoint], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			items, total, err := s.List(ctx, httpx.TenantFrom(ctx).DB, in.Offset(), in.PerPage)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(items, in.PageQuery, total)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/webhooks/{id}", Tags: tags, Who: httpx.User,
		Scope:   "settings:read",
		Summary: "One webhook endpoint (admins)", Description: doc, Errors: []int{404}},
		func(ctx context.Context, in *webhookIDInput) (*httpx.Response[Endpoint], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			e, err := s.Get(ctx, httpx.TenantFrom(ctx).DB, in.ID)
			if err != nil {
				return nil, notFound(err)
			}
			return httpx.OK(e)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPatch, Path: "/api/admin/webhooks/{id}", Tags: tags, Who: httpx.User,
		Scope:   "settings:write",
		Summary: "Change a webhook endpoint, or switch it on or off (admins)", Description: doc, Errors: []int{404}},
		func(ctx context.Context, in *webhookPatchInput) (*httpx.Response[Endpoint], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			db := httpx.TenantFrom(ctx).DB
			e, err := s.Get(ctx, db, in.ID)
			if err != nil {
				return nil, notFound(err)
			}
			if in.Body.URL != nil {
				e.URL = *in.Body.URL
			}
			if in.Body.Events != nil {
				e.Events = *in.Body.Events
			}
			if in.Body.Description != nil {
				e.Description = *in.Body.Description
			}
			if in.Body.Enabled != nil {
				e.Enabled = *in.Body.Enabled
				if !e.Enabled {
					e.DisabledReason = "switched off by an admin"
				}
			}
			if err := s.check(e.URL, e.Events); err != nil {
				return nil, err
			}
			if e, err = s.Update(ctx, db, e); err != nil {
				return nil, notFound(err)
			}
			return httpx.OKMessage(e, "Webhook endpoint updated.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodDelete, Path: "/api/admin/webhooks/{id}", Tags: tags, Who: httpx.User,
		Scope:   "settings:write",
		Summary: "Remove a webhook endpoint (admins)", Description: doc, Errors: []int{404}},
		func(ctx context.Context, in *webhookIDInput) (*httpx.Response[*httpx.Empty], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			if err := s.Delete(ctx, httpx.TenantFrom(ctx).DB, in.ID); err != nil {
				return nil, notFound(err)
			}
			return httpx.Done("Webhook endpoint deleted.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/webhooks/{id}/deliveries", Tags: tags,
		Scope: "settings:read",
		Who:   httpx.User, Summary: "The endpoint's delivery log, newest first (admins)", Description: doc, Errors: []int{404}},
		func(ctx context.Context, in *webhookDeliveriesInput) (*httpx.PageResponse[events.Delivery], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			db := httpx.TenantFrom(ctx).DB
			if _, err := s.Get(ctx, db, in.ID); err != nil {
				return nil, notFound(err)
			}
			items, total, err := events.ListDeliveries(ctx, db, events.Filter{State: in.State,
				Listener: Prefix + strconv.FormatInt(in.ID, 10), Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(items, in.PageQuery, total)
		})
}
