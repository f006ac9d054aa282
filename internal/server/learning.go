package server

import "github.com/lms-platform/lms/internal/learning"

// learningRoutes registers the learner routes (programs, previews,
// progress) and the scheduled jobs of learning. The scheduler is absent
// when only the API description is built.
func (s *Server) learningRoutes() {
	s.Learning = &learning.Service{Clock: s.Clock, Kinds: s.Kinds, FileURL: s.Files.URL, Settings: s.Settings}
	learning.Routes(s.API, s.Learning)
	if s.Jobs != nil {
		s.Jobs.Add(s.Learning.Jobs()...)
	}
}
