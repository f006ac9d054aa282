package platform

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/changes"
	"github.com/lms-platform/lms/internal/sqldb"
)

// RecordKey names a tenant's registry record in a change notice: it was
// renamed, suspended, resumed or deleted. Every process drops its open
// handle of the tenant, whose copy of the record is stale, so the next
// request reads the record again (and a suspended tenant is refused).
const RecordKey = "record"

// ErrSuspended is what every request to a suspended tenant answers.
var ErrSuspended = apperr.New(apperr.Unavailable,
	"This site is suspended by the platform operator. Its data is kept; it is back once the operator resumes it.")

// errPlatformTenant refuses the lifecycle changes that would lock the
// operators out of the platform itself.
var errPlatformTenant = apperr.New(apperr.Conflict, "The platform tenant cannot be suspended or deleted.")

// Rename gives the tenant a new display name.
func (ts *Tenants) Rename(ctx context.Context, rec Record, name string) error {
	if err := ts.reg.SetName(ctx, rec.ID, name); err != nil {
		return err
	}
	ts.recordChanged(ctx, rec.ID)
	return nil
}

// Suspend stops serving the tenant and running its jobs, keeping its data.
// Requests already running finish.
func (ts *Tenants) Suspend(ctx context.Context, rec Record) error {
	if rec.IsPlatform {
		return errPlatformTenant
	}
	now := ts.opts.Clock.Now()
	return ts.setSuspended(ctx, rec, &now)
}

// Resume serves a suspended tenant again.
func (ts *Tenants) Resume(ctx context.Context, rec Record) error {
	return ts.setSuspended(ctx, rec, nil)
}

func (ts *Tenants) setSuspended(ctx context.Context, rec Record, at *time.Time) error {
	_, err := ts.reg.db.ExecContext(ctx, `UPDATE tenants SET suspended_at = $1, updated_at = $2 WHERE id = $3`,
		at, ts.opts.Clock.Now(), rec.ID)
	if err != nil {
		return fmt.Errorf("platform: suspend or resume tenant %d: %w", rec.ID, err)
	}
	ts.recordChanged(ctx, rec.ID)
	return nil
}

// Delete removes the tenant for good: it is suspended first, so nothing
// opens it meanwhile, then its database, its files and its registry
// record with its hosts and keys go. Its hosts are free for a new tenant.
// A failure leaves it suspended, and Delete can be run again.
func (ts *Tenants) Delete(ctx context.Context, rec Record) error {
	if rec.IsPlatform {
		return errPlatformTenant
	}
	if !rec.Suspended() {
		if err := ts.Suspend(ctx, rec); err != nil {
			return err
		}
	}
	if err := ts.dropDatabase(ctx, rec); err != nil {
		return fmt.Errorf("platform: drop database of tenant %d: %w", rec.ID, err)
	}
	if ts.opts.Blob != nil {
		if err := ts.opts.Blob.DeletePrefix(ctx, rec.BlobPrefix); err != nil {
			return fmt.Errorf("platform: delete files of tenant %d: %w", rec.ID, err)
		}
	}
	// The hosts, demo state, job claims and queue marks go with the row.
	if _, err := ts.reg.db.ExecContext(ctx, `DELETE FROM tenants WHERE id = $1`, rec.ID); err != nil {
		return fmt.Errorf("platform: delete tenant %d: %w", rec.ID, err)
	}
	ts.recordChanged(ctx, rec.ID)
	return nil
}

func (ts *Tenants) dropDatabase(ctx context.Context, rec Record) error {
	if ts.opts.DatabaseURL != "" {
		return sqldb.DropDatabase(ctx, ts.opts.DatabaseURL, rec.DatabaseName)
	}
	loc, err := ts.databaseLocation(rec)
	if err != nil {
		return err
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(loc + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// recordChanged tells every process, this one at once, that the tenant's
// record changed (RecordKey).
func (ts *Tenants) recordChanged(ctx context.Context, id int64) {
	ts.opts.Changes.Publish(ctx, changes.Notice{Tenant: id, Keys: []string{RecordKey}})
}

// evictChanged drops the handle of a tenant whose record changed.
func (ts *Tenants) evictChanged(n changes.Notice) {
	if n.Tenant != 0 && slices.Contains(n.Keys, RecordKey) {
		ts.Evict(n.Tenant)
	}
}

// Inspect runs fn on the tenant's database whatever its state, suspended
// too, without opening the tenant (no handle, no background work): for
// reports about tenants, such as their sizes. fn only reads.
func (ts *Tenants) Inspect(ctx context.Context, rec Record, fn func(db *sqldb.DB) error) error {
	loc, err := ts.databaseLocation(rec)
	if err != nil {
		return err
	}
	db, err := sqldb.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// Storage is how many bytes the tenant's files take in the blob store.
func (ts *Tenants) Storage(ctx context.Context, rec Record) (int64, error) {
	if ts.opts.Blob == nil {
		return 0, nil
	}
	var total int64
	err := ts.opts.Blob.List(ctx, rec.BlobPrefix, func(i blob.Info) error {
		total += i.Size
		return nil
	})
	return total, err
}
