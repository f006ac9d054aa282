package quiz

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/kinds"
)

// Part is the quiz kind with its attempts and question routes.
type Part struct {
	Kind
	Service *Service
}

// New builds the quiz kind; an attempt that passes completes its topic
// through learning.
func New(d kinds.Deps) Part {
	return Part{Service: &Service{Clock: d.Clock, Settings: d.Settings, Topics: d.Topics, Progress: d.Learning,
		Gate: d.Learning, Locker: d.Locker}}
}

// Routes registers the attempt and question routes.
func (k Part) Routes(api huma.API) { Routes(api, k.Service) }

// Jobs are the scheduled jobs of quiz attempts.
func (k Part) Jobs() []jobs.Job { return k.Service.Jobs() }
