package liascript

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/kinds"
)

// Part is the LiaScript kind on its course store.
type Part struct {
	*Kind
	Service *Service
}

// New builds the LiaScript kind and its course store.
func New(d kinds.Deps) Part {
	s := &Service{Clock: d.Clock, RuntimeDir: d.Config.LiaScriptDir, Topics: d.Topics, Progress: d.Learning, FileURL: d.FileURL}
	return Part{Kind: &Kind{Courses: s}, Service: s}
}

// Routes serves course uploads, progress and previews.
func (k Part) Routes(api huma.API) { Routes(api, k.Service) }
