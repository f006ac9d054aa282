package server

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/httpx"
)

func listen(addr string) (net.Listener, error) { return net.Listen("tcp", addr) }

// generalLimit is the Limits table's row for /api/events, /api/health,
// /api/healthcheck and /api/name: 60 a minute per IP.
var generalLimit = &httpx.RateLimit{Limit: 60, Per: httpx.PerIP}

type healthData struct {
	OK       bool              `json:"ok"`
	Tenant   int64             `json:"tenant"`
	Services map[string]string `json:"services" doc:"Each dependency with ok or down; ffmpeg ok or missing."`
	// Warnings name what works only in part (a missing ffmpeg stops video
	// transcoding only), without making the service unhealthy.
	Warnings []string `json:"warnings,omitempty" doc:"What works only in part, such as video transcoding without ffmpeg."`
	// Deliveries is told to admins only.
	Deliveries *deliveryBacklog `json:"deliveries,omitempty" doc:"Admins only: event deliveries failed for good, and pending ones overdue by more than a minute."`
}

type deliveryBacklog struct {
	Failed  int64 `json:"failed"`
	Overdue int64 `json:"overdue"`
}

type moduleInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Doc     string `json:"description"`
}

type metaData struct {
	Name        string       `json:"name"`
	Version     string       `json:"version"`
	Description string       `json:"description"`
	OpenAPI     string       `json:"openapi" doc:"Path of the OpenAPI 3.1 description."`
	Tenant      string       `json:"tenant"`
	Modules     []moduleInfo `json:"modules"`
}

// modules lists the API's modules with their own versions (spec
// "Versioning" 5). A module's version moves when its routes change.
var modules = []moduleInfo{
	{"auth", "1.0.0", "Login, registration, e-mail verification, passwords, impersonation"},
	{"accounts", "1.0.0", "Profile, users, groups, categories, interests, personal settings"},
	{"settings", "1.0.0", "Administrable configuration (/api/config)"},
	{"notifications", "1.0.0", "Notification log of platform events"},
	{"courses", "1.0.0", "Courses, lessons, access, tutors and the public catalogue"},
	{"topics", "1.0.0", "Topics, attachments, project submissions and content kinds"},
	{"learning", "1.0.0", "Programs, previews, progress, time tracking and scheduled jobs"},
	{"files", "1.0.0", "Signed links to stored files, with range requests"},
}

type eventInfo struct {
	Name string `json:"name"`
	When string `json:"description"`
}

func (s *Server) generalRoutes() {
	api := s.API
	// The general routes are harmless: any scoped token may call them.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/health", Tags: []string{"general"},
		Scope:   httpx.AnyToken,
		Summary: "Check the tenant's database, blob store and Redis; 503 names what is down", Limit: generalLimit},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[healthData], error) {
			return s.health(ctx)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/healthcheck", Tags: []string{"general"},
		Scope:   httpx.AnyToken,
		Summary: "Liveness: answers when the process serves requests", Limit: generalLimit},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[*httpx.Empty], error) {
			return httpx.Done("ok")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/name", Tags: []string{"general"},
		Scope:   httpx.AnyToken,
		Summary: "The tenant's name", Limit: generalLimit},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[map[string]string], error) {
			return httpx.OK(map[string]string{"name": httpx.TenantFrom(ctx).Name, "app": Name})
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/events", Tags: []string{"general"},
		Scope:   httpx.AnyToken,
		Summary: "The platform's event catalogue", Limit: generalLimit},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]eventInfo], error) {
			out := make([]eventInfo, len(events.Catalog))
			for i, e := range events.Catalog {
				out[i] = eventInfo{e.Name, e.When}
			}
			return httpx.OK(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/meta", Tags: []string{"general"},
		Scope:   httpx.AnyToken,
		Summary: "Describe the API: name, version, modules", Limit: &httpx.RateLimit{Limit: 60, Per: httpx.PerUserOrIP}},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[metaData], error) {
			return httpx.OK(metaData{Name: Name, Version: Version, OpenAPI: "/api/openapi.json",
				Description: "Multi-tenant headless learning platform: courses, accounts, progress, notifications.",
				Tenant:      httpx.TenantFrom(ctx).Name, Modules: modules})
		})
}

// health checks each dependency with a short deadline.
func (s *Server) health(ctx context.Context) (*httpx.Response[healthData], error) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	t := httpx.TenantFrom(ctx)
	d := healthData{OK: true, Tenant: t.ID, Services: map[string]string{}}
	check := func(name string, err error) {
		if err != nil {
			s.Log.Warn("health check failed", "service", name, "error", err)
			d.OK = false
			d.Services[name] = "down"
			return
		}
		d.Services[name] = "ok"
	}
	check("database", t.DB.PingContext(ctx))
	if p := httpx.PrincipalFrom(ctx); p != nil && p.HasRole(access.Admin) {
		failed, overdue, err := events.Backlog(ctx, t.DB, s.Clock.Now())
		check("deliveries", err)
		d.Deliveries = &deliveryBacklog{Failed: failed, Overdue: overdue}
	}
	check("blob", t.Blob.Ping(ctx))
	if s.Redis != nil {
		check("redis", s.Redis.Ping(ctx).Err())
	}
	if c, ok := s.Scanner.(interface{ Ping(context.Context) error }); ok {
		check("clamav", c.Ping(ctx))
	}
	state, warning := s.checkFFmpeg(ctx)
	d.Services["ffmpeg"] = state
	if warning != "" {
		d.Warnings = append(d.Warnings, warning)
	}
	if !d.OK {
		down := ""
		for name, state := range d.Services {
			if state == "down" {
				if down != "" {
					down += ", "
				}
				down += name
			}
		}
		return &httpx.Response[healthData]{Status: http.StatusServiceUnavailable,
			Body: httpx.Envelope[healthData]{Success: false, Message: "Unavailable: " + down + ".", Data: d}}, nil
	}
	return httpx.OK(d)
}
