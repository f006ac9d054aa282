package demo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// ResetOptions are the options of `lms demo reset`.
type ResetOptions struct {
	// WipeFiles also deletes every file under the tenant's blob prefix.
	WipeFiles bool
	// Recapture records a new baseline from the tenant before the reset.
	Recapture bool
}

// ResetReport says what a reset did.
type ResetReport struct {
	H5PDeleted int
	Seed       SeedReport
	// AdminEmail is the tenant's admin account, re-created with its
	// password; AdminPassword is set only when the reset had to make the
	// account up (the tenant had no admin) and generated a password.
	AdminEmail    string
	AdminPassword string
	Baseline      Baseline
}

// jobName names the scheduled reset in job_runs and in its lock, which
// `lms demo reset` takes too: a reset never overlaps another.
const jobName = "demo-reset"

// resetTimeout bounds one reset, and is how long its lock is held at most.
const resetTimeout = 15 * time.Minute

// Errors of Check.
var (
	ErrDemoOff     = errors.New("demo mode is off: set DEMO_MODE=true to reset demo tenants")
	ErrPlatform    = errors.New("the platform tenant is never reset")
	ErrNotDemo     = errors.New("the tenant is not a demo tenant (mark one with `lms tenant add --demo`)")
	ErrResetLocked = errors.New("a reset of this tenant is already running")
)

// Check tells whether the tenant may be reset.
func (s *Service) Check(rec platform.Record) error {
	switch {
	case !s.Config.Enabled:
		return ErrDemoOff
	case rec.IsPlatform:
		return ErrPlatform
	case !rec.IsDemo:
		return ErrNotDemo
	}
	return nil
}

// Reset puts a demo tenant back to its baseline, under the reset's lock.
func (s *Service) Reset(ctx context.Context, rec platform.Record, opts ResetOptions) (ResetReport, error) {
	if err := s.Check(rec); err != nil {
		return ResetReport{}, err
	}
	unlock, err := s.Locker.TryAcquire(ctx, lockName(rec.ID), resetTimeout)
	if errors.Is(err, lock.ErrNotAcquired) {
		return ResetReport{}, ErrResetLocked
	}
	if err != nil {
		return ResetReport{}, err
	}
	defer unlock(context.WithoutCancel(ctx))
	return s.reset(ctx, rec, opts)
}

// lockName is the lock of the tenant's resets and seeding, taken by the
// scheduled reset, a reset by hand and the seeding at start-up alike.
func lockName(tenantID int64) string { return "demo-reset:" + strconv.FormatInt(tenantID, 10) }

// admin is the tenant's admin account as the reset re-creates it.
type admin struct {
	Email, FirstName, LastName, PasswordHash string
}

// reset does the work of Reset, under the lock its caller holds:
//  1. with Recapture, record a new baseline from the tenant as it is;
//  2. remember the tenant's admin account (its first admin that is not a
//     demo account), password included;
//  3. delete the tenant's H5P content through the H5P service;
//  4. recreate the tenant database (every token stops working) with its
//     roles, and evict the open handle;
//  5. with WipeFiles, delete every file of the tenant; else ask the H5P
//     service to delete content files nothing owns any more;
//  6. restore the baseline's name, re-create the admin account and seed;
//  7. clear the tenant's cache keys and record the time of the reset.
func (s *Service) reset(ctx context.Context, rec platform.Record, opts ResetOptions) (ResetReport, error) {
	var rep ResetReport
	t, release, err := s.Tenants.Get(ctx, rec)
	if err != nil {
		return rep, err
	}
	if opts.Recapture {
		b, err := s.capture(ctx, t)
		if err == nil {
			err = s.saveBaseline(ctx, rec.ID, b, s.Clock.Now())
		}
		if err != nil {
			release()
			return rep, fmt.Errorf("demo: recapture: %w", err)
		}
	}
	keep, err := s.tenantAdmin(ctx, t)
	if err == nil && s.H5PURL != nil {
		rep.H5PDeleted, err = s.deleteH5P(ctx, t)
	}
	release()
	if err != nil {
		return rep, err
	}
	if err := s.Tenants.Recreate(ctx, rec); err != nil {
		return rep, err
	}
	s.clearCache(ctx, rec.ID)
	if rep.Baseline, err = s.baseline(ctx, rec); err != nil {
		return rep, err
	}
	if rep.Baseline.Name != "" && rep.Baseline.Name != rec.Name {
		if err := s.Registry.SetName(ctx, rec.ID, rep.Baseline.Name); err != nil {
			return rep, err
		}
		rec.Name = rep.Baseline.Name
	}
	t, release, err = s.Tenants.Get(ctx, rec)
	if err != nil {
		return rep, err
	}
	defer release()
	if opts.WipeFiles {
		if err := t.Blob.DeletePrefix(ctx, ""); err != nil {
			return rep, fmt.Errorf("demo: wipe files: %w", err)
		}
	} else if s.H5PURL != nil {
		if err := s.deleteH5POrphans(ctx, t); err != nil {
			return rep, err
		}
	}
	if keep.Email == "" {
		keep = admin{Email: "admin@" + t.PrimaryHost(), FirstName: "Admin"}
		rep.AdminPassword = randomPassword()
		if keep.PasswordHash, err = s.Passwords.Hash(rep.AdminPassword); err != nil {
			return rep, err
		}
	}
	rep.AdminEmail = keep.Email
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		_, err := accounts.Create(ctx, tx, s.Clock.Now(), accounts.NewUser{Email: keep.Email, FirstName: keep.FirstName,
			LastName: keep.LastName, PasswordHash: keep.PasswordHash, Roles: []string{access.Admin}, IsActive: true, Verified: true})
		return err
	})
	if err != nil {
		return rep, fmt.Errorf("demo: re-create admin %s: %w", keep.Email, err)
	}
	if rep.Seed, err = s.seed(ctx, t); err != nil {
		return rep, err
	}
	s.clearCache(ctx, rec.ID)
	s.logger().Info("demo tenant reset", "tenant", rec.ID, "host", t.PrimaryHost(), "h5p_deleted", rep.H5PDeleted,
		"courses", rep.Seed.Courses, "wipe_files", opts.WipeFiles, "recapture", opts.Recapture)
	return rep, s.markFresh(ctx, rec.ID, s.Clock.Now())
}

// tenantAdmin is the tenant's first admin that is not a demo account.
func (s *Service) tenantAdmin(ctx context.Context, t *platform.Tenant) (admin, error) {
	admins, err := s.usersWithRole(ctx, t, access.Admin, 1000)
	if err != nil {
		return admin{}, err
	}
	for _, u := range admins {
		if !s.isDemoAccount(u.Email) {
			return admin{Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, PasswordHash: u.PasswordHash}, nil
		}
	}
	return admin{}, nil
}

// cachePrefixes are the shared cache keys of a tenant: the H5P service's
// (profiles of tokens) and the tenant space other parts key by tenant id.
func cachePrefixes(tenantID int64) []string {
	id := strconv.FormatInt(tenantID, 10)
	return []string{"h5p:" + id + ":", "tenant:" + id + ":"}
}

// clearCache deletes the tenant's cache keys. A failure is logged: stale
// entries expire on their own (the longest live a minute).
func (s *Service) clearCache(ctx context.Context, tenantID int64) {
	if s.Cache == nil {
		return
	}
	for _, p := range cachePrefixes(tenantID) {
		if err := s.Cache.DeletePrefix(ctx, p); err != nil {
			s.logger().Warn("demo: clear cache", "tenant", tenantID, "prefix", p, "error", err)
		}
	}
}

// Job is the scheduled reset of every demo tenant. It takes the reset's
// lock like a reset by hand; the job skips a tenant that was reset or
// seeded after the latest time of the schedule, so a freshly created
// tenant is not reset at once and a reset by hand counts as the next one.
func (s *Service) Job() (jobs.Job, error) {
	sched, err := s.Schedule()
	if err != nil {
		return jobs.Job{}, err
	}
	return jobs.Job{Name: jobName, Schedule: sched, Timeout: resetTimeout,
		Tenants: func(rec platform.Record) bool { return s.Check(rec) == nil },
		Run: func(ctx context.Context, t *platform.Tenant, now time.Time) error {
			unlock, err := s.Locker.TryAcquire(ctx, lockName(t.ID), resetTimeout)
			if errors.Is(err, lock.ErrNotAcquired) {
				// A reset by hand or the seeding runs now; it counts.
				return nil
			}
			if err != nil {
				return err
			}
			defer unlock(context.WithoutCancel(ctx))
			last, err := s.LastReset(ctx, t.ID)
			if err != nil {
				return err
			}
			if last != nil && sched.Next(*last).After(now) {
				return nil
			}
			_, err = s.reset(ctx, t.Record, ResetOptions{})
			return err
		}}, nil
}

// SeedIfEmpty seeds every demo tenant that has no course, at start-up. It
// takes the reset's lock, so it never runs beside a reset (which seeds).
func (s *Service) SeedIfEmpty(ctx context.Context) error {
	recs, err := s.Registry.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, rec := range recs {
		if s.Check(rec) != nil {
			continue
		}
		if err := s.seedIfEmpty(ctx, rec); err != nil {
			errs = append(errs, fmt.Errorf("demo: seed tenant %d: %w", rec.ID, err))
		}
	}
	return errors.Join(errs...)
}

func (s *Service) seedIfEmpty(ctx context.Context, rec platform.Record) error {
	unlock, err := s.Locker.TryAcquire(ctx, lockName(rec.ID), resetTimeout)
	if errors.Is(err, lock.ErrNotAcquired) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unlock(context.WithoutCancel(ctx))
	t, release, err := s.Tenants.Get(ctx, rec)
	if err != nil {
		return err
	}
	defer release()
	_, total, err := s.Courses.ListCourses(ctx, t, systemAdmin(t), courses.CourseFilter{Limit: 1})
	if err != nil || total > 0 {
		return err
	}
	rep, err := s.seed(ctx, t)
	if err == nil {
		s.logger().Info("demo tenant seeded", "tenant", rec.ID, "host", t.PrimaryHost(), "courses", rep.Courses, "h5p", rep.H5P)
	}
	return err
}
