package server

import (
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/notify"
	"github.com/lms-platform/lms/internal/settings"
	"github.com/lms-platform/lms/internal/tokens"
)

// routes registers every capability, in the order of the spec's tables,
// and the event listeners behind them.
func (s *Server) routes() {
	authService := &auth.Service{Clock: s.Clock, Passwords: s.Passwords, Settings: s.Settings, Mailer: s.Mailer}
	notifications := &notify.Notifications{Clock: s.Clock, Exclude: s.Config.NotifyExclude, UserExists: accounts.Exists}
	s.generalRoutes()
	auth.Routes(s.API, authService)
	tokens.Routes(s.API, s.Tokens)
	accounts.Routes(s.API, &accounts.Service{Clock: s.Clock, Passwords: s.Passwords, Mailer: s.Mailer,
		RevokeSessions: auth.RevokeSessions, FileURL: s.Files.URL, Scanner: s.Scanner})
	notify.Routes(s.API, notifications)
	settings.Routes(s.API, s.Settings)
	s.newLearning()
	s.topicRoutes()
	s.Courses = &courses.Service{Clock: s.Clock, Topics: s.topics, FileURL: s.Files.URL, Scanner: s.Scanner}
	courses.Routes(s.API, s.Courses)
	if s.Jobs != nil {
		s.Jobs.Add(s.Courses.Jobs()...)
	}
	s.learningRoutes()
	s.demoRoutes(authService)
	if s.Dispatcher != nil {
		s.Dispatcher.Listen(notifications.Listener)
		s.Dispatcher.Listen(authService.Listener)
		// Reactions between capabilities (docs/architecture.md).
		s.Dispatcher.Listen(s.Courses.Listener)
		s.Dispatcher.Listen(s.Learning.Listener)
		s.Dispatcher.Listen(s.topics.Listener)
	}
}
