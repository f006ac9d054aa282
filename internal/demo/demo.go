// Package demo is demo mode: the passwordless demo login, the description
// of the demo at GET /api/demo, the seed that fills a demo tenant with
// accounts and courses worth clicking through, and the reset that puts a
// demo tenant back to that state (docs/demo.md).
//
// A tenant runs in demo mode when the process has DEMO_MODE=true and the
// tenant is marked as a demo tenant (`lms tenant add --demo`). Logging in
// without a password is only ever possible there: a deployment that turns
// demo mode on for its demo tenant does not open its other tenants.
package demo

import (
	"context"
	"github.com/lms-platform/lms/internal/queue"
	"log/slog"
	"net/http"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/cache"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
)

// Roles lists the demo roles in the order GET /api/demo shows them.
var Roles = []string{access.Student, access.Tutor, access.Admin}

// Settings is what demo reads of the administrable configuration.
type Settings interface {
	String(ctx context.Context, t *platform.Tenant, key string) (string, error)
}

// Service carries demo mode. The zero values of its optional fields turn
// the matching part off (no cache to clear, no H5P service to call).
type Service struct {
	Config config.Demo
	// WebAddr is the frontend's listen address; its port makes the default
	// front URL of a demo tenant.
	WebAddr   string
	Clock     clock.Clock
	Log       *slog.Logger
	Registry  *platform.Registry
	Tenants   *platform.Tenants
	Cache     cache.Cache
	Locker    lock.Locker
	Passwords *auth.Passwords
	Auth      *auth.Service
	Accounts  *accounts.Service
	Courses   *courses.Service
	Settings  Settings
	// API returns the API's handler: the seed is a client of the API, so
	// it creates exactly what an author would (validation, events, files).
	// It is read on each seed, since the handler is built last.
	API func() http.Handler
	// H5PURL returns the base URL of the H5P service, which the seed and
	// the reset call with InternalToken, as other parts do.
	H5PURL        func() string
	InternalToken string
	// FFmpeg is the path of ffmpeg, which speaks the voice-over of the
	// demo's films; "" when it is missing (a chime instead).
	FFmpeg string
	// Queue runs the seed of demo tenants created while the platform runs
	// (SeedLater); nil: they are seeded at the next start-up or reset.
	Queue *queue.Queue
}

// On reports whether tenant rec runs in demo mode.
func (s *Service) On(rec platform.Record) bool {
	return s != nil && s.Config.Enabled && rec.IsDemo && !rec.IsPlatform
}

// Email is the configured account of a role.
func (s *Service) Email(role string) string {
	switch role {
	case access.Student:
		return s.Config.StudentEmail
	case access.Tutor:
		return s.Config.TutorEmail
	case access.Admin:
		return s.Config.AdminEmail
	}
	return ""
}

// isDemoAccount reports whether email is one of the configured accounts.
func (s *Service) isDemoAccount(email string) bool {
	return email != "" && slices.Contains([]string{s.Config.StudentEmail, s.Config.TutorEmail, s.Config.AdminEmail}, email)
}

// FrontURL is the frontend of a demo tenant: the configured URL, or the
// tenant's host at the port the frontend listens on.
func (s *Service) FrontURL(rec platform.Record) string {
	if s.Config.FrontURL != "" {
		return s.Config.FrontURL
	}
	host := ""
	if len(rec.Hosts) > 0 {
		host = rec.Hosts[0]
	}
	return config.FrontURL("", s.WebAddr, host)
}

// SettingsValues are the lms_demo settings of a tenant in demo mode, for
// settings.WithDemo: GET /api/config shows the group only then.
func (s *Service) SettingsValues(_ context.Context, t *platform.Tenant) (map[string]any, bool) {
	if t == nil || !s.On(t.Record) {
		return nil, false
	}
	values := map[string]any{"lms_demo.enabled": true, "lms_demo.front_url": s.FrontURL(t.Record)}
	if s.Config.AdminURL != "" {
		values["lms_demo.admin_url"] = s.Config.AdminURL
	}
	return values, true
}

// Schedule is the reset schedule.
func (s *Service) Schedule() (jobs.Schedule, error) {
	expr := s.Config.ResetCron
	if expr == "" {
		expr = DefaultCron
	}
	return jobs.Cron(expr)
}

// DefaultCron is the reset schedule when none is configured: hourly.
const DefaultCron = "0 * * * *"

func (s *Service) logger() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// systemAdmin acts for the demo itself where a service wants a caller
// (granting course access at the demo login): the admin role's
// permissions of the tenant, no user.
func systemAdmin(t *platform.Tenant) *access.Principal {
	p := &access.Principal{Roles: []string{access.Admin}, Permissions: map[access.Permission]bool{}}
	for _, perm := range t.RolePermissions[access.Admin] {
		p.Permissions[perm] = true
	}
	return p
}
