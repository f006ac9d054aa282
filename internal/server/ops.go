package server

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// NewTenant is the input of AddTenant.
type NewTenant struct {
	Host          string
	Name          string
	AdminEmail    string
	AdminPassword string // empty: generated and returned
	Demo          bool
	Platform      bool
}

// AddTenant registers a tenant, creates its database and its first admin.
// It returns the admin password when it generated one.
func (s *Server) AddTenant(ctx context.Context, in NewTenant) (platform.Record, string, error) {
	generated := ""
	if in.AdminPassword == "" {
		generated = randomPassword()
		in.AdminPassword = generated
	}
	if msg := accounts.ValidPassword(in.AdminPassword); msg != "" {
		return platform.Record{}, "", apperr.Field("admin_password", msg)
	}
	if in.AdminEmail == "" {
		in.AdminEmail = "admin@" + platform.NormalizeHost(in.Host)
	}
	if _, ok := accounts.NormalizeEmail(in.AdminEmail); !ok {
		return platform.Record{}, "", apperr.Field("admin_email", "The admin e-mail must be a valid address.")
	}
	rec, err := s.Registry.Create(ctx, platform.NewTenant{Name: in.Name, Host: in.Host, IsPlatform: in.Platform, IsDemo: in.Demo})
	if err != nil {
		return rec, "", err
	}
	// Adding the admin opens the tenant, which provisions its database
	// (Tenants.Get): provisioning first would open it twice.
	if err := s.AddUser(ctx, rec, in.AdminEmail, in.AdminPassword, access.Admin); err != nil {
		return rec, "", err
	}
	return rec, generated, nil
}

// EnsurePlatform creates the platform tenant on the platform host with the
// configured admin, once. It returns the generated admin password when it
// made one, to be printed once.
func (s *Server) EnsurePlatform(ctx context.Context) (platform.Record, string, error) {
	rec, err := s.Registry.Platform(ctx)
	if err == nil {
		return rec, "", nil
	}
	if !apperr.Is(err, apperr.NotFound) {
		return rec, "", err
	}
	return s.AddTenant(ctx, NewTenant{Host: s.Config.PlatformHost, Name: "Platform", AdminEmail: s.Config.AdminEmail,
		AdminPassword: s.Config.AdminPass, Platform: true})
}

// AddUser creates a verified, active user with one role in a tenant.
func (s *Server) AddUser(ctx context.Context, rec platform.Record, email, password, role string) error {
	if msg := accounts.ValidPassword(password); msg != "" {
		return apperr.Field("password", msg)
	}
	known := false
	for _, r := range access.Roles {
		known = known || r == role
	}
	if !known {
		return apperr.Field("role", "The role must be one of student, tutor or admin.")
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return err
	}
	t, release, err := s.Tenants.Get(ctx, rec)
	if err != nil {
		return err
	}
	defer release()
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		_, err := accounts.Create(ctx, tx, s.Clock.Now(), accounts.NewUser{Email: email, PasswordHash: hash,
			Roles: []string{role}, IsActive: true, Verified: true})
		return err
	})
}

// TenantByHost finds a tenant's record by one of its hosts.
func (s *Server) TenantByHost(ctx context.Context, host string) (platform.Record, error) {
	rec, err := s.Registry.ByHost(ctx, host)
	if apperr.Is(err, apperr.NotFound) {
		return rec, fmt.Errorf("no tenant serves host %q", host)
	}
	return rec, err
}

func randomPassword() string {
	b := make([]byte, 15)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
