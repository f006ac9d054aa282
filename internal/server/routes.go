package server

import (
	"context"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/device"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/fetch"
	"github.com/lms-platform/lms/internal/learning"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/platformadmin"
	"github.com/lms-platform/lms/internal/settings"
	"github.com/lms-platform/lms/internal/social"
	"github.com/lms-platform/lms/internal/tokens"
	"github.com/lms-platform/lms/internal/topics"
)

// routes registers every capability, in the order of the spec's tables,
// and the event listeners behind them.
func (s *Server) routes() {
	s.messageTemplates()
	authService := &auth.Service{Clock: s.Clock, Passwords: s.Passwords, Settings: s.Settings, Mail: s.Mail}
	notifications := &notify.Notifications{Clock: s.Clock, Exclude: s.Config.NotifyExclude, UserExists: accounts.Exists}
	s.generalRoutes()
	s.deliveryRoutes()
	auth.Routes(s.API, authService)
	social.Routes(s.API, &social.Service{Clock: s.Clock, Settings: s.Settings, Accounts: authService,
		HTTP: fetch.New(fetch.Options{AllowPrivate: s.Config.FetchAllowPrivate}).HTTPClient(), FrontURL: s.frontURL})
	tokens.Routes(s.API, s.Tokens)
	s.deviceRoutes()
	accounts.Routes(s.API, &accounts.Service{Clock: s.Clock, Passwords: s.Passwords, Mail: s.Mail,
		RevokeSessions: auth.RevokeSessions, FileURL: s.Files.URL, Scanner: s.Scanner})
	notify.Routes(s.API, notifications)
	settings.Routes(s.API, s.Settings)
	s.newLearning()
	s.topicRoutes(authService)
	s.Courses = &courses.Service{Clock: s.Clock, Topics: s.topics, FileURL: s.Files.URL, Scanner: s.Scanner}
	courses.Routes(s.API, s.Courses)
	if s.Jobs != nil {
		s.Jobs.Add(s.Courses.Jobs()...)
	}
	s.learningRoutes()
	s.reportRoutes()
	s.certificateRoutes()
	s.imageRoutes()
	s.inboundRoutes()
	s.demoRoutes(authService)
	s.platformRoutes()
	if s.Dispatcher != nil {
		s.Dispatcher.ListenTo("notifications", notifications.Wants, notifications.Listener)
		s.Dispatcher.ListenTo("auth", events.Named(auth.ListenerEvents...), authService.Listener)
		s.Dispatcher.ListenTo("mail", events.Named(notify.MailedEvents()...), s.Mail.Listener)
		// Reactions between capabilities (docs/architecture.md).
		s.Dispatcher.ListenTo("courses", events.Named(courses.ListenerEvents...), s.Courses.Listener)
		s.Dispatcher.ListenTo("learning", events.Named(learning.ListenerEvents...), s.Learning.Listener)
		s.Dispatcher.ListenTo("topics", events.Named(topics.ListenerEvents...), s.topics.Listener)
	}
}

// deviceRoutes is the device login; its links name the tenant's host on
// the web frontend.
func (s *Server) deviceRoutes() {
	d := &device.Service{Clock: s.Clock, Tokens: s.Tokens, FrontURL: s.frontURL}
	device.Routes(s.API, d)
	if s.Jobs != nil {
		s.Jobs.Add(d.Jobs()...)
	}
}

// frontURL is the web frontend's address for a tenant, where its links and
// the browser sign-ins (LTI launches, social login) land.
func (s *Server) frontURL(rec platform.Record) string {
	host := ""
	if len(rec.Hosts) > 0 {
		host = rec.Hosts[0]
	}
	return config.FrontURL(s.Config.WebURL, s.Config.WebAddr, host)
}

// messageTemplates builds the e-mail channel of the events (message
// templates, internal/notify) and its admin routes.
func (s *Server) messageTemplates() {
	templates := &notify.Templates{Clock: s.Clock}
	s.Mail = &notify.Channels{Templates: templates, Mailer: s.Mailer, Clock: s.Clock,
		Person: accounts.Person, Admins: accounts.ActiveAdmins, CourseTitle: courses.Title,
		SiteURL: func(t *platform.Tenant) string {
			return config.FrontURL(s.Config.WebURL, s.Config.WebAddr, t.PrimaryHost())
		}}
	notify.TemplateRoutes(s.API, templates)
}

// platformRoutes is the platform API; creating a tenant is what
// `lms tenant add` does (AddTenant).
func (s *Server) platformRoutes() {
	platformadmin.Routes(s.API, &platformadmin.Service{Clock: s.Clock, Tenants: s.Tenants,
		Create: func(ctx context.Context, in platformadmin.NewTenant) (platform.Record, string, error) {
			rec, password, err := s.AddTenant(ctx, NewTenant{Host: in.Host, Name: in.Name, AdminEmail: in.AdminEmail,
				AdminPassword: in.AdminPassword, Demo: in.Demo})
			if err == nil && in.Demo {
				// The tenant exists either way; without the job it is seeded
				// at the next start-up or reset.
				if err := s.Demo.SeedLater(ctx, rec); err != nil {
					s.Log.Error("demo seed not queued", "tenant", rec.ID, "error", err)
				}
			}
			return rec, password, err
		},
		Users: accounts.Count, Courses: courses.Count, LastActivity: auth.LastLogin,
		Key: s.MasterKey.Derive("tenant-deletion")})
}
