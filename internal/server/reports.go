package server

import (
	"github.com/lms-platform/lms/internal/reports"
)

// reportRoutes registers the gradebook, which reads the learners'
// progress through learning and their tracks through the kinds.
func (s *Server) reportRoutes() {
	reports.Routes(s.API, &reports.Service{Clock: s.Clock, Progress: s.Learning})
}
