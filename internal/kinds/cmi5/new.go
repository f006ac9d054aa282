package cmi5

import (
	"context"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/lrs"
	"github.com/lms-platform/lms/internal/platform"
)

// Part is the cmi5 kind with its service and the LRS its AUs send their
// statements to.
type Part struct {
	*Kind
	Service *Service
	LRS     *lrs.Service
}

// Options are what the cmi5 kind needs beside deps.
type Options struct {
	// Principal reads an API access token sent to the LRS as the password
	// of Basic credentials.
	Principal func(ctx context.Context, t *platform.Tenant, token string) (*access.Principal, error)
}

// New builds the cmi5 kind, its service and the LRS. The LRS asks the
// service about launches and applies its rules, and the service records
// in the LRS: the one mutual reference is made here, while both are built.
func New(d kinds.Deps, o Options) Part {
	s := &Service{Clock: d.Clock, Locker: d.Locker, Progress: d.Learning, Gate: d.Learning, Time: d.Learning}
	s.LRS = &lrs.Service{Clock: d.Clock, Principal: o.Principal, Locker: d.Locker, Limiter: d.Limiter,
		Launches: s, Rules: s}
	return Part{Kind: &Kind{Packages: s}, Service: s, LRS: s.LRS}
}

// Routes registers the LRS and the cmi5 routes.
func (k Part) Routes(api huma.API) {
	lrs.Routes(api, k.LRS)
	Routes(api, k.Service)
}

// Jobs abandon the sessions that went quiet.
func (k Part) Jobs() []jobs.Job { return k.Service.Jobs() }
