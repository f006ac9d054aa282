package demo

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The reset state of demo tenants lives in the platform database (table
// demo_tenants): it must outlive the tenant database the reset recreates.

// state is one demo tenant's row.
type state struct {
	Baseline    *Baseline
	CapturedAt  *time.Time
	LastResetAt *time.Time
}

func (s *Service) loadState(ctx context.Context, tenantID int64) (state, error) {
	var (
		raw      string
		captured sql.NullTime
		reset    sql.NullTime
		st       state
	)
	err := s.Registry.DB().QueryRowContext(ctx, `SELECT baseline, captured_at, last_reset_at FROM demo_tenants
		WHERE tenant_id = $1`, tenantID).Scan(&raw, &captured, &reset)
	if sqldb.NotFound(err) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("demo: load state of tenant %d: %w", tenantID, err)
	}
	if raw != "" {
		var b Baseline
		if err := json.Unmarshal([]byte(raw), &b); err != nil {
			return st, fmt.Errorf("demo: baseline of tenant %d: %w", tenantID, err)
		}
		st.Baseline = &b
	}
	if captured.Valid {
		v := captured.Time.UTC()
		st.CapturedAt = &v
	}
	if reset.Valid {
		v := reset.Time.UTC()
		st.LastResetAt = &v
	}
	return st, nil
}

// saveBaseline records a new baseline.
func (s *Service) saveBaseline(ctx context.Context, tenantID int64, b Baseline, now time.Time) error {
	raw, err := json.Marshal(b)
	if err != nil {
		return err
	}
	_, err = s.Registry.DB().ExecContext(ctx, `INSERT INTO demo_tenants (tenant_id, baseline, captured_at) VALUES ($1, $2, $3)
		ON CONFLICT (tenant_id) DO UPDATE SET baseline = excluded.baseline, captured_at = excluded.captured_at`,
		tenantID, string(raw), now)
	if err != nil {
		return fmt.Errorf("demo: save baseline of tenant %d: %w", tenantID, err)
	}
	return nil
}

// markFresh records that the tenant was reset (or first seeded) at now.
func (s *Service) markFresh(ctx context.Context, tenantID int64, now time.Time) error {
	_, err := s.Registry.DB().ExecContext(ctx, `INSERT INTO demo_tenants (tenant_id, last_reset_at) VALUES ($1, $2)
		ON CONFLICT (tenant_id) DO UPDATE SET last_reset_at = excluded.last_reset_at`, tenantID, now)
	if err != nil {
		return fmt.Errorf("demo: record reset of tenant %d: %w", tenantID, err)
	}
	return nil
}

// LastReset is when the tenant was last reset or first seeded, or nil.
func (s *Service) LastReset(ctx context.Context, tenantID int64) (*time.Time, error) {
	st, err := s.loadState(ctx, tenantID)
	return st.LastResetAt, err
}

// usersWithRole lists the users holding a role, oldest first, with their
// password hashes (which ListUsers, made for responses, leaves out).
func (s *Service) usersWithRole(ctx context.Context, t *platform.Tenant, role string, limit int) ([]accounts.User, error) {
	list, _, err := s.Accounts.ListUsers(ctx, t, systemAdmin(t), accounts.UserFilter{Role: role, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]accounts.User, 0, len(list))
	for _, sum := range list {
		u, err := accounts.ByID(ctx, t.DB, sum.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}
