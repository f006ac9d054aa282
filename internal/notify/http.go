package notify

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
)

type listInput struct {
	httpx.PageQuery
	Event  string `query:"event" maxLength:"255" doc:"Only notifications of this event."`
	Unread bool   `query:"unread" doc:"true keeps only unread notifications."`
}

type listAllInput struct {
	httpx.PageQuery
	UserID int64  `query:"user_id" minimum:"0" doc:"Only this user's notifications."`
	Event  string `query:"event" maxLength:"255" doc:"Only notifications of this event."`
	Unread bool   `query:"unread" doc:"true keeps only unread notifications."`
}

type userListInput struct {
	User int64 `path:"user" doc:"User id."`
	httpx.PageQuery
	Event  string `query:"event" maxLength:"255" doc:"Only notifications of this event."`
	Unread bool   `query:"unread" doc:"true keeps only unread notifications."`
}

type readInput struct {
	Notification int64 `path:"notification" doc:"Notification id."`
}

// Marked is the answer of read-all.
type Marked struct {
	Count int64 `json:"count" doc:"How many notifications were marked read."`
}

var tags = []string{"notifications"}

// Routes registers the notification routes of the spec's table.
func Routes(api huma.API, n *Notifications) {
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/notifications", Tags: tags, Who: httpx.User,
		Scope:   "notifications:read",
		Summary: "The caller's notifications, newest first"},
		func(ctx context.Context, in *listInput) (*httpx.PageResponse[Notification], error) {
			return n.page(ctx, in.filter(httpx.PrincipalFrom(ctx).UserID), in.PageQuery, false)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/notifications/events", Tags: tags, Who: httpx.User,
		Scope:   "notifications:read",
		Summary: "Names of the events the notification log stores"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]string], error) {
			return httpx.OK(n.EventNames())
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/notifications/{notification}/read", Tags: tags,
		Scope: "notifications:write",
		Who:   httpx.User, Summary: "Mark one of the caller's notifications read"},
		func(ctx context.Context, in *readInput) (*httpx.Response[Notification], error) {
			return n.markRead(ctx, in.Notification, false)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/notifications/read-all", Tags: tags, Who: httpx.User,
		Scope:   "notifications:write",
		Summary: "Mark all of the caller's notifications read"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Marked], error) {
			return n.markAllRead(ctx, false)
		})

	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/notifications", Tags: tags, Who: httpx.User,
		Scope:   "notifications:read",
		Summary: "The caller's notifications (dashboard-app_notification-list_access_self or _access)"},
		func(ctx context.Context, in *listInput) (*httpx.PageResponse[Notification], error) {
			return n.page(ctx, in.filter(httpx.PrincipalFrom(ctx).UserID), in.PageQuery, true)
		})
	// The caller's own notifications are notifications:read; every user's
	// (/all, /{user}) are users' records: users:read, which also keeps the
	// permission to list them.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/notifications/all", Tags: tags, Who: httpx.User,
		Scope:   "users:read",
		Summary: "Every user's notifications (dashboard-app_notification-list_access)"},
		func(ctx context.Context, in *listAllInput) (*httpx.PageResponse[Notification], error) {
			if !CanListAll(httpx.PrincipalFrom(ctx)) {
				return nil, errUnauthorized
			}
			f := Filter{UserID: in.UserID, Event: in.Event, Unread: in.Unread}
			return n.page(ctx, f, in.PageQuery, true)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/notifications/events", Tags: tags, Who: httpx.User,
		Scope:   "notifications:read",
		Summary: "Names of the events the notification log stores"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]string], error) {
			if !CanListOwn(httpx.PrincipalFrom(ctx)) {
				return nil, errUnauthorized
			}
			return httpx.OK(n.EventNames())
		})
	// ServeMux prefers the literal segments of /all and /events to {user}.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/notifications/{user}", Tags: tags, Who: httpx.User,
		Scope:   "users:read",
		Summary: "One user's notifications (dashboard-app_notification-list_access)"},
		func(ctx context.Context, in *userListInput) (*httpx.PageResponse[Notification], error) {
			if !CanListAll(httpx.PrincipalFrom(ctx)) {
				return nil, errUnauthorized
			}
			f := Filter{UserID: in.User, Event: in.Event, Unread: in.Unread, Offset: in.Offset(), Limit: in.PerPage}
			items, total, err := n.ListFor(ctx, httpx.TenantFrom(ctx), f)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(items, in.PageQuery, total)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/admin/notifications/{notification}/read", Tags: tags,
		Scope: "notifications:write",
		Who:   httpx.User, Summary: "Mark a notification read: any user's with dashboard-app_notification-list_access, else the caller's own"},
		func(ctx context.Context, in *readInput) (*httpx.Response[Notification], error) {
			return n.markRead(ctx, in.Notification, true)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/admin/notifications/read-all", Tags: tags, Who: httpx.User,
		Scope:   "notifications:write",
		Summary: "Mark all of the caller's notifications read"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Marked], error) {
			return n.markAllRead(ctx, true)
		})
}

func (in *listInput) filter(userID int64) Filter {
	return Filter{UserID: userID, Event: in.Event, Unread: in.Unread}
}

// page answers one page of f; admin routes need one of the notification
// list permissions first.
func (n *Notifications) page(ctx context.Context, f Filter, q httpx.PageQuery, admin bool) (*httpx.PageResponse[Notification], error) {
	if admin && !CanListOwn(httpx.PrincipalFrom(ctx)) {
		return nil, errUnauthorized
	}
	f.Offset, f.Limit = q.Offset(), q.PerPage
	items, total, err := n.List(ctx, httpx.TenantFrom(ctx), f)
	if err != nil {
		return nil, err
	}
	return httpx.Paged(items, q, total)
}

func (n *Notifications) markRead(ctx context.Context, id int64, admin bool) (*httpx.Response[Notification], error) {
	p := httpx.PrincipalFrom(ctx)
	if admin && !CanListOwn(p) {
		return nil, errUnauthorized
	}
	nt, err := n.MarkRead(ctx, httpx.TenantFrom(ctx), p, id, admin && CanListAll(p))
	if err != nil {
		return nil, err
	}
	return httpx.OKMessage(nt, "Notification marked as read.")
}

func (n *Notifications) markAllRead(ctx context.Context, admin bool) (*httpx.Response[Marked], error) {
	p := httpx.PrincipalFrom(ctx)
	if admin && !CanListOwn(p) {
		return nil, errUnauthorized
	}
	count, err := n.MarkAllRead(ctx, httpx.TenantFrom(ctx), p.UserID)
	if err != nil {
		return nil, err
	}
	return httpx.OKMessage(Marked{Count: count}, "Notifications marked as read.")
}
