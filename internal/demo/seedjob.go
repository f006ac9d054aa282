package demo

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/queue"
	"github.com/lms-platform/lms/internal/sqldb"
)

// SeedJobKind is the queue job that seeds a demo tenant created while the
// platform runs (by the platform API), as the start-up seeds the demo
// tenants that exist before it. The seed calls the API and the H5P
// service over HTTP, so it runs after the request that created the
// tenant, not inside it.
const SeedJobKind = "demo.seed"

// SeedJob is the queue's handling of SeedJobKind: it seeds the tenant
// unless it has courses already (a reset came first) or demo mode no
// longer applies to it.
func (s *Service) SeedJob() queue.Kind {
	return queue.Kind{Name: SeedJobKind, MaxAttempts: 3, Backoff: time.Minute,
		Run: func(ctx context.Context, t *platform.Tenant, _ queue.Job) error {
			if s.Check(t.Record) != nil {
				return nil
			}
			return s.seedIfEmpty(ctx, t.Record)
		}}
}

// SeedLater queues the seed of a tenant just created. Outside demo mode,
// or for a tenant that is not a demo, it does nothing: such a tenant is
// seeded when demo mode is turned on (at start-up).
func (s *Service) SeedLater(ctx context.Context, rec platform.Record) error {
	if s.Queue == nil || s.Check(rec) != nil {
		return nil
	}
	t, release, err := s.Tenants.Get(ctx, rec)
	if err != nil {
		return err
	}
	defer release()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		return s.Queue.Enqueue(ctx, t, tx, queue.New{Kind: SeedJobKind, Key: SeedJobKind})
	})
}
