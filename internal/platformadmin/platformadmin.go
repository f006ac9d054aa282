// Package platformadmin is the platform API (/api/platform/*): what an
// operator of many tenants does over HTTP instead of `lms tenant` on the
// server. It is served only on the platform tenant's host, to holders of
// platform_admin. The tenant lifecycle itself lives in internal/platform.
package platformadmin

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// ConfirmFor is how long a deletion's confirmation token is valid.
const ConfirmFor = 10 * time.Minute

// NewTenant is what Create needs.
type NewTenant struct {
	Host, Name, AdminEmail, AdminPassword string
	Demo                                  bool
}

// Service runs the platform API on the registry and the open tenants.
type Service struct {
	Clock   clock.Clock
	Tenants *platform.Tenants
	// Create registers a tenant with its database and first admin, as
	// `lms tenant add` does; it returns the password it generated, if any.
	Create func(ctx context.Context, in NewTenant) (platform.Record, string, error)
	// Users, Courses and LastActivity read a tenant's database for the
	// list; the capabilities owning those tables provide them.
	Users, Courses func(ctx context.Context, q sqldb.Querier) (int64, error)
	LastActivity   func(ctx context.Context, q sqldb.Querier) (*time.Time, error)
	// Key signs deletion confirmation tokens.
	Key []byte
}

// PlatformTenant is a tenant as the platform API shows it.
type PlatformTenant struct {
	ID    int64    `json:"id"`
	Host  string   `json:"host" doc:"The tenant's primary host."`
	Hosts []string `json:"hosts"`
	Name  string   `json:"name"`
	State string   `json:"state" enum:"active,suspended" doc:"suspended: every route answers 503, no job runs; the data is kept."`
	// Platform marks the platform tenant, which is never suspended or deleted.
	Platform       bool       `json:"platform"`
	Demo           bool       `json:"demo"`
	Users          int64      `json:"users"`
	Courses        int64      `json:"courses"`
	StorageBytes   int64      `json:"storage_bytes" doc:"Bytes the tenant's files take in the file store."`
	LastActivityAt *time.Time `json:"last_activity_at" doc:"When a user of the tenant last logged in or refreshed a token; null: never."`
	SuspendedAt    *time.Time `json:"suspended_at"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
}

// describe adds a tenant's figures to its record.
func (s *Service) describe(ctx context.Context, rec platform.Record) (PlatformTenant, error) {
	out := PlatformTenant{ID: rec.ID, Hosts: rec.Hosts, Name: rec.Name, State: "active", Platform: rec.IsPlatform,
		Demo: rec.IsDemo, SuspendedAt: rec.SuspendedAt, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt}
	if len(rec.Hosts) > 0 {
		out.Host = rec.Hosts[0]
	}
	if rec.Suspended() {
		out.State = "suspended"
	}
	err := s.Tenants.Inspect(ctx, rec, func(db *sqldb.DB) error {
		var err error
		if out.Users, err = s.Users(ctx, db); err != nil {
			return err
		}
		if out.Courses, err = s.Courses(ctx, db); err != nil {
			return err
		}
		out.LastActivityAt, err = s.LastActivity(ctx, db)
		return err
	})
	if err != nil {
		return out, fmt.Errorf("platformadmin: tenant %d: %w", rec.ID, err)
	}
	out.StorageBytes, err = s.Tenants.Storage(ctx, rec)
	return out, err
}

// List returns one page of the tenants, oldest first, and their number.
func (s *Service) List(ctx context.Context, offset, limit int) ([]PlatformTenant, int64, error) {
	recs, err := s.Tenants.Registry().List(ctx)
	if err != nil {
		return nil, 0, err
	}
	total := int64(len(recs))
	recs = recs[min(offset, len(recs)):]
	recs = recs[:min(limit, len(recs))]
	out := make([]PlatformTenant, 0, len(recs))
	for _, rec := range recs {
		t, err := s.describe(ctx, rec)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, t)
	}
	return out, total, nil
}

// Get returns one tenant.
func (s *Service) Get(ctx context.Context, id int64) (PlatformTenant, error) {
	rec, err := s.Tenants.Registry().ByID(ctx, id)
	if err != nil {
		return PlatformTenant{}, err
	}
	return s.describe(ctx, rec)
}

// Add creates a tenant and returns it with the admin password generated
// for it, if any.
func (s *Service) Add(ctx context.Context, in NewTenant) (PlatformTenant, string, error) {
	name, err := checkName(in.Name, true)
	if err != nil {
		return PlatformTenant{}, "", err
	}
	in.Name = name
	rec, generated, err := s.Create(ctx, in)
	if err != nil {
		return PlatformTenant{}, "", err
	}
	t, err := s.describe(ctx, rec)
	return t, generated, err
}

func checkName(name string, empty bool) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" && !empty {
		return "", apperr.Field("name", "The name must not be empty.")
	}
	if len([]rune(name)) > 100 {
		return "", apperr.Field("name", "The name may have at most 100 characters.")
	}
	return name, nil
}

// Rename gives the tenant a new display name.
func (s *Service) Rename(ctx context.Context, id int64, name string) (PlatformTenant, error) {
	name, err := checkName(name, false)
	if err != nil {
		return PlatformTenant{}, err
	}
	return s.change(ctx, id, func(rec platform.Record) error { return s.Tenants.Rename(ctx, rec, name) })
}

// Suspend and Resume change the tenant's state.
func (s *Service) Suspend(ctx context.Context, id int64) (PlatformTenant, error) {
	return s.change(ctx, id, func(rec platform.Record) error { return s.Tenants.Suspend(ctx, rec) })
}

func (s *Service) Resume(ctx context.Context, id int64) (PlatformTenant, error) {
	return s.change(ctx, id, func(rec platform.Record) error { return s.Tenants.Resume(ctx, rec) })
}

func (s *Service) change(ctx context.Context, id int64, fn func(platform.Record) error) (PlatformTenant, error) {
	rec, err := s.Tenants.Registry().ByID(ctx, id)
	if err != nil {
		return PlatformTenant{}, err
	}
	if err := fn(rec); err != nil {
		return PlatformTenant{}, err
	}
	return s.Get(ctx, id)
}

// TenantDeletion is the first step of deleting a tenant: what would go, and the
// token the second step must send.
type TenantDeletion struct {
	Tenant            PlatformTenant `json:"tenant" doc:"The tenant the deletion would remove, with everything it holds."`
	ConfirmationToken string         `json:"confirmation_token" doc:"Send it as the confirmation parameter of the deletion."`
	ExpiresAt         time.Time      `json:"expires_at"`
}

// RequestDeletion changes nothing: it answers what a deletion would
// remove and a token, valid ConfirmFor for this tenant and this user only,
// that the deletion needs.
func (s *Service) RequestDeletion(ctx context.Context, id, userID int64) (TenantDeletion, error) {
	t, err := s.Get(ctx, id)
	if err != nil {
		return TenantDeletion{}, err
	}
	if t.Platform {
		return TenantDeletion{}, apperr.New(apperr.Conflict, "The platform tenant cannot be suspended or deleted.")
	}
	exp := s.Clock.Now().Add(ConfirmFor).Truncate(time.Second)
	return TenantDeletion{Tenant: t, ConfirmationToken: s.sign(id, userID, exp), ExpiresAt: exp}, nil
}

// Delete removes the tenant when token is a live confirmation of it by
// this user; otherwise nothing changes.
func (s *Service) Delete(ctx context.Context, id, userID int64, token string) error {
	rec, err := s.Tenants.Registry().ByID(ctx, id)
	if err != nil {
		return err
	}
	if !s.valid(id, userID, token) {
		return apperr.Field("confirmation", "The confirmation is missing, invalid or expired: request a new one with POST /api/platform/tenants/{id}/deletion.")
	}
	return s.Tenants.Delete(ctx, rec)
}

func (s *Service) sign(id, userID int64, exp time.Time) string {
	e := strconv.FormatInt(exp.Unix(), 10)
	m := hmac.New(sha256.New, s.Key)
	fmt.Fprintf(m, "tenant-deletion\x00%d\x00%d\x00%s", id, userID, e)
	return e + "." + hex.EncodeToString(m.Sum(nil))
}

func (s *Service) valid(id, userID int64, token string) bool {
	e, _, ok := strings.Cut(token, ".")
	unix, err := strconv.ParseInt(e, 10, 64)
	if !ok || err != nil || !s.Clock.Now().Before(time.Unix(unix, 0)) {
		return false
	}
	return hmac.Equal([]byte(token), []byte(s.sign(id, userID, time.Unix(unix, 0))))
}
