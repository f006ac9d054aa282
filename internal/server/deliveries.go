package server

import (
	"context"
	"database/sql"
	"errors"
	"net/http"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/webhooks"
)

// DeliveryFilter is the query of the delivery lists and the bulk retry.
type DeliveryFilter struct {
	State    string    `query:"state" enum:"pending,delivered,failed," doc:"Only deliveries in this state."`
	Listener string    `query:"listener" doc:"Only this listener (as listed: notifications, mail, lti_grades, webhook:<id>...)."`
	Event    string    `query:"event" doc:"Only deliveries of events of this name."`
	From     time.Time `query:"from" doc:"Only events at or after this time (RFC 3339)."`
	To       time.Time `query:"to" doc:"Only events before this time (RFC 3339)."`
}

func (f DeliveryFilter) filter() events.Filter {
	return events.Filter{State: f.State, Listener: f.Listener, Event: f.Event, From: f.From, To: f.To}
}

type deliveryListInput struct {
	httpx.PageQuery
	DeliveryFilter
}

type deliveryIDInput struct {
	ID int64 `path:"id" doc:"Delivery id."`
}

type retriedData struct {
	Retried int64 `json:"retried" doc:"How many deliveries were made due now."`
}

var (
	errDeliveryForbidden = apperr.New(apperr.Forbidden, "This action is unauthorized.")
	errNoDelivery        = apperr.New(apperr.NotFound, "Delivery not found.")
	errDelivered         = apperr.New(apperr.Conflict, "The delivery was already made; it is not run again.")
)

const deliveriesDoc = "After a change commits, each listener of its event (notifications, mail, LTI grades, certificates, " +
	"webhook endpoints...) is delivered on its own: pending until it succeeds, retried with exponential backoff for the " +
	"tenant's retry window (setting lms_events.retry_window_hours, 72 by default), then failed (a dead letter) with " +
	"its last error. A retry makes a failed or pending delivery due now, with a fresh window."

// deliveryRoutes registers the admin API of event deliveries and of the
// webhook endpoints, whose deliveries they are too.
func (s *Server) deliveryRoutes() {
	hooks := &webhooks.Service{Clock: s.Clock, AllowHTTP: s.Config.FetchAllowPrivate,
		Fetch: fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate})}
	webhooks.Routes(s.API, hooks)
	if s.Dispatcher != nil {
		s.Dispatcher.ListenTargets(hooks.Targets())
	}
	tags := []string{"deliveries"}
	admin := func(ctx context.Context) error {
		if !httpx.PrincipalFrom(ctx).HasRole(access.Admin) {
			return errDeliveryForbidden
		}
		return nil
	}
	// Event deliveries and their dead letters are operations of the tenant:
	// settings scopes.
	httpx.Handle(s.API, httpx.Route{Method: http.MethodGet, Path: "/api/admin/deliveries", Tags: tags, Who: httpx.User,
		Scope:       "settings:read",
		Summary:     "Event deliveries per listener, newest first, with attempts, next try and last error (admins)",
		Description: deliveriesDoc},
		func(ctx context.Context, in *deliveryListInput) (*httpx.PageResponse[events.Delivery], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			f := in.filter()
			f.Offset, f.Limit = in.Offset(), in.PerPage
			items, total, err := events.ListDeliveries(ctx, httpx.TenantFrom(ctx).DB, f)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(items, in.PageQuery, total)
		})
	httpx.Handle(s.API, httpx.Route{Method: http.MethodPost, Path: "/api/admin/deliveries/{id}/retry", Tags: tags,
		Scope: "settings:write",
		Who:   httpx.User, Summary: "Try a failed or pending delivery again now (admins); 409 when it was delivered",
		Description: deliveriesDoc, Errors: []int{404, 409}},
		func(ctx context.Context, in *deliveryIDInput) (*httpx.Response[events.Delivery], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			t := httpx.TenantFrom(ctx)
			d, err := events.GetDelivery(ctx, t.DB, in.ID)
			if errors.Is(err, sql.ErrNoRows) {
				return nil, errNoDelivery
			}
			if err != nil {
				return nil, err
			}
			if d.State == events.StateDelivered {
				return nil, errDelivered
			}
			if _, err := events.RetryDeliveries(ctx, t.DB, s.Clock.Now(), events.Filter{State: d.State}, d.ID); err != nil {
				return nil, err
			}
			// The answer is the delivery as the retry left it: read before
			// the dispatcher is woken, which may deliver it at once.
			if d, err = events.GetDelivery(ctx, t.DB, in.ID); err != nil {
				return nil, err
			}
			t.Kick()
			return httpx.OKMessage(d, "Delivery retried.")
		})
	httpx.Handle(s.API, httpx.Route{Method: http.MethodPost, Path: "/api/admin/deliveries/retry", Tags: tags,
		Scope: "settings:write",
		Who:   httpx.User, Summary: "Try again now the failed deliveries the filters select (admins)",
		Description: deliveriesDoc + " Without state, the failed ones are retried; state=pending makes pending ones due now."},
		func(ctx context.Context, in *DeliveryFilter) (*httpx.Response[retriedData], error) {
			if err := admin(ctx); err != nil {
				return nil, err
			}
			t := httpx.TenantFrom(ctx)
			n, err := events.RetryDeliveries(ctx, t.DB, s.Clock.Now(), in.filter())
			if err != nil {
				return nil, err
			}
			t.Kick()
			return httpx.OKMessage(retriedData{n}, "Deliveries retried.")
		})
}
