package server

import (
	"context"
	"fmt"
	"net/http"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/demo"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
)

// checkDemo refuses a demo configuration that cannot run: the reset
// schedule must parse when demo mode is on.
func checkDemo(cfg *config.Config) error {
	if !cfg.Demo.Enabled {
		return nil
	}
	expr := cfg.Demo.ResetCron
	if expr == "" {
		expr = demo.DefaultCron
	}
	if _, err := jobs.Cron(expr); err != nil {
		return fmt.Errorf("server: LMS_DEMO_RESET_CRON: %w", err)
	}
	return nil
}

// demoRoutes builds demo mode: its routes, which answer 404 outside demo
// mode, and, with demo mode on, the scheduled reset of demo tenants. The
// seed calls the API through s.Handler, which wraps these routes and so
// exists only after them, and the H5P service at its address, known once
// it listens: both are read when a seed runs.
func (s *Server) demoRoutes(authService *auth.Service) {
	s.Demo = &demo.Service{Config: s.Config.Demo, WebAddr: s.Config.WebAddr, Clock: s.Clock, Log: s.Log,
		Registry: s.Registry, Tenants: s.Tenants, Cache: s.Cache, Locker: s.Locker, Passwords: s.Passwords,
		Auth: authService, Accounts: &accounts.Service{Clock: s.Clock, Passwords: s.Passwords},
		Courses: &courses.Service{Clock: s.Clock}, Settings: s.Settings,
		API:           func() http.Handler { return s.Handler },
		H5PURL:        s.H5P.API.BaseURL,
		InternalToken: s.Config.InternalKey,
		FFmpeg:        s.Videos.FFmpeg.FFmpeg,
		Queue:         s.Queue,
	}
	demo.Routes(s.API, s.Demo)
	if s.Queue != nil && s.Config.Demo.Enabled {
		s.Queue.Handle(s.Demo.SeedJob())
	}
	if s.Jobs == nil || !s.Config.Demo.Enabled {
		return
	}
	job, err := s.Demo.Job()
	if err != nil {
		// checkDemo refused this configuration before the API was built.
		panic(err)
	}
	s.Jobs.Add(job)
}

// demoSettings shows the lms_demo settings group of tenants in demo mode.
// s.Demo is built after the settings, so it is read on each call.
func (s *Server) demoSettings(ctx context.Context, t *platform.Tenant) (map[string]any, bool) {
	if s.Demo == nil {
		return nil, false
	}
	return s.Demo.SettingsValues(ctx, t)
}

// seedDemoTenants seeds, at start-up, the demo tenants that have no
// course yet, once the API answers (the seed's H5P packages go through
// the H5P service over HTTP).
func (s *Server) seedDemoTenants(ctx context.Context) {
	if s.Demo == nil || !s.Config.Demo.Enabled {
		return
	}
	if err := s.Demo.SeedIfEmpty(ctx); err != nil && ctx.Err() == nil {
		s.Log.Error("demo seed failed", "error", err)
	}
}
