package scorm

import (
	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/kinds"
)

// Part is the SCORM kind with the service that stores its packages, runs
// its SCOs and completes its topics through learning.
type Part struct {
	Kind
	Service *Service
}

// New builds the SCORM kind and its service.
func New(d kinds.Deps) Part {
	s := &Service{Clock: d.Clock, Progress: d.Learning, Scanner: d.Scanner, PlayerDir: d.Config.ScormPlayerDir}
	return Part{Kind: Kind{Packages: s}, Service: s}
}

// Routes registers the SCORM routes.
func (k Part) Routes(api huma.API) { Routes(api, k.Service) }
