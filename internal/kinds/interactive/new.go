package interactive

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/kinds"
)

// Part is the interactive kind on its package library, player and
// progress.
type Part struct {
	*Kind
	Service *Service
}

// New builds the interactive kind and its package library.
func New(d kinds.Deps) Part {
	s := &Service{Clock: d.Clock, Settings: d.Settings, Topics: d.Topics, Progress: d.Learning}
	return Part{Kind: &Kind{Packages: s, Settings: d.Settings}, Service: s}
}

// Routes serves packages, apps, their progress and CSP reports.
func (k Part) Routes(api huma.API) { Routes(api, k.Service) }
