package platform

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/changes"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Recreate makes the tenant's database new again: every table, view,
// trigger and function in it is dropped and the migrations and roles run
// as for a new tenant. It works in place, on the same SQLite file or
// PostgreSQL database, so every process that has the database open (the
// server while `lms demo reset` runs from a shell, other replicas) sees the
// new database at once and no connection anywhere keeps the old data.
// Every token of the tenant stops working, since tokens are recorded in
// that database. The open handle of this process is then evicted, so the
// next request starts with fresh per-tenant state, and the other processes
// hear that everything of the tenant changed and which tokens ended (the
// H5P service of each drops their profiles). Used by the demo reset.
func (ts *Tenants) Recreate(ctx context.Context, rec Record) error {
	// Callers refuse the platform tenant first; this guards the mechanism
	// itself, since emptying that database would end every session of the
	// platform's operators.
	if rec.IsPlatform {
		return fmt.Errorf("platform: the platform tenant's database is never recreated")
	}
	loc, err := ts.databaseLocation(rec)
	if err != nil {
		return err
	}
	if err := ts.createDatabase(ctx, rec); err != nil {
		return err
	}
	db, err := sqldb.Open(ctx, loc)
	if err != nil {
		return err
	}
	defer db.Close()
	if db.Dialect == sqldb.Postgres {
		err = emptyPostgres(ctx, db)
	} else {
		err = emptySQLite(ctx, db)
	}
	if err != nil {
		return fmt.Errorf("platform: empty database of tenant %d: %w", rec.ID, err)
	}
	if err := migrateTenant(ctx, db); err != nil {
		return fmt.Errorf("platform: migrate tenant %d: %w", rec.ID, err)
	}
	// Every session ended with the old database: the notice drops the
	// principals and H5P profiles each process cached for the tenant (the
	// handle still open here hears it too, before it goes).
	ts.opts.Changes.Publish(ctx, changes.Notice{Tenant: rec.ID, Keys: []string{access.TenantKey}})
	ts.Evict(rec.ID)
	return nil
}

// emptyPostgres drops the public schema with everything in it. The drop
// locks the tables one by one. A transaction of this process or another
// replica can hold one of them while its own work waits, on another
// pooled connection, for a table the drop already holds (an event
// delivery's listener reading through the pool): PostgreSQL sees no cycle
// across connections, so both would wait for ever. The drop therefore
// gives up a lock wait after dropLockWait, releasing what it took so the
// other side can finish, and tries again. A wait PostgreSQL does see as a
// cycle (a transaction locking two tables in the other order) ends in a
// deadlock error for one side; when that side is the drop, it tries again
// the same way.
func emptyPostgres(ctx context.Context, db *sqldb.DB) error {
	for attempt := 1; ; attempt++ {
		err := db.Tx(ctx, func(tx *sqldb.Tx) error {
			if _, err := tx.ExecContext(ctx, `SET LOCAL lock_timeout = '`+dropLockWait+`'`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DROP SCHEMA IF EXISTS public CASCADE`); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `CREATE SCHEMA public`)
			return err
		})
		// 55P03: lock_not_available, the lock wait ran out; 40P01:
		// deadlock_detected.
		retry := err != nil && (strings.Contains(err.Error(), "SQLSTATE 55P03") || strings.Contains(err.Error(), "SQLSTATE 40P01"))
		if !retry || attempt == dropAttempts {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
	}
}

const (
	dropLockWait = "2s"
	dropAttempts = 10
)

// emptySQLite drops every schema object in one transaction, with foreign
// keys off on its connection so that the order of the drops is free.
func emptySQLite(ctx context.Context, db *sqldb.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `PRAGMA foreign_keys = OFF`); err != nil {
		return err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `PRAGMA foreign_keys = ON`)
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, `SELECT type, name FROM sqlite_master
		WHERE type IN ('view', 'trigger', 'table') AND name NOT LIKE 'sqlite_%'
		ORDER BY CASE type WHEN 'view' THEN 0 WHEN 'trigger' THEN 1 ELSE 2 END, name`)
	if err != nil {
		return err
	}
	var drops []string
	for rows.Next() {
		var kind, name string
		if err := rows.Scan(&kind, &name); err != nil {
			rows.Close()
			return err
		}
		drops = append(drops, fmt.Sprintf(`DROP %s IF EXISTS "%s"`, strings.ToUpper(kind),
			strings.ReplaceAll(name, `"`, `""`)))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, stmt := range drops {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return tx.Commit()
}

// Evict drops the tenant's open handle, so that the next request opens a
// fresh one, without failing the requests and jobs that hold it now: the
// old handle closes when its last holder releases it.
func (ts *Tenants) Evict(id int64) {
	t := ts.forget(id)
	if t == nil {
		return
	}
	t.mu.Lock()
	t.retired = true
	idle := t.users == 0
	t.mu.Unlock()
	if idle {
		t.close()
	}
}

// SetName renames a tenant (the demo reset restores its baseline name).
func (r *Registry) SetName(ctx context.Context, id int64, name string) error {
	_, err := r.db.ExecContext(ctx, `UPDATE tenants SET name = $1, updated_at = $2 WHERE id = $3`, name, r.now(), id)
	if err != nil {
		return fmt.Errorf("platform: rename tenant %d: %w", id, err)
	}
	return nil
}
