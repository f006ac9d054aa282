// Package platform keeps the tenant registry and opens each tenant's
// database, blob store and keys on demand.
package platform

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"database/sql"
	"encoding/hex"
	"fmt"
	"maps"
	"net"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Record is a tenant as the registry stores it.
type Record struct {
	ID           int64
	Name         string
	Hosts        []string
	DatabaseName string
	BlobPrefix   string
	KeyID        string
	PublicKey    string
	sealedKey    string
	IsPlatform   bool
	IsDemo       bool
	// SuspendedAt is when the tenant was suspended (nil: active). A
	// suspended tenant keeps its data but is never opened: it serves no
	// request and runs no job.
	SuspendedAt *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Suspended reports whether the tenant is suspended.
func (r Record) Suspended() bool { return r.SuspendedAt != nil }

var hostPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$`)

// NormalizeHost lower-cases a host and drops its port, as the registry
// stores hosts.
func NormalizeHost(host string) string {
	host = strings.ToLower(strings.TrimSpace(host))
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.TrimSuffix(host, ".")
}

// ValidHost reports whether host is a DNS name or an IP address.
func ValidHost(host string) bool {
	return len(host) <= 253 && (hostPattern.MatchString(host) || net.ParseIP(host) != nil)
}

const recordColumns = `t.id, t.name, t.database_name, t.blob_prefix, t.key_id, t.public_key,
	t.private_key_sealed, t.is_platform, t.is_demo, t.suspended_at, t.created_at, t.updated_at`

func scanRecord(row interface{ Scan(...any) error }) (Record, error) {
	var r Record
	var suspended sql.NullTime
	err := row.Scan(&r.ID, &r.Name, &r.DatabaseName, &r.BlobPrefix, &r.KeyID, &r.PublicKey,
		&r.sealedKey, &r.IsPlatform, &r.IsDemo, &suspended, &r.CreatedAt, &r.UpdatedAt)
	if suspended.Valid {
		r.SuspendedAt = &suspended.Time
	}
	return r, err
}

// Registry reads and writes the platform database.
type Registry struct {
	db  *sqldb.DB
	mk  MasterKey
	now func() time.Time

	shared bool // WithSharedKeys
	mu     sync.Mutex
	handed map[string]bool // shared keys handed out, by ID
}

// RegistryOption changes how a Registry works.
type RegistryOption func(*Registry)

// WithSharedKeys gives new tenants keys from a list the registries of the
// process share, for tests, which start hundreds of platforms in one
// process: generating a 2048-bit RSA key takes a tenth of a second of CPU
// or more. The tenants of one platform database still have keys of their
// own: a tenant takes the first shared key none of them has.
func WithSharedKeys() RegistryOption { return func(r *Registry) { r.shared = true } }

// NewRegistry wraps an open, migrated platform database.
func NewRegistry(db *sqldb.DB, mk MasterKey, now func() time.Time, opts ...RegistryOption) *Registry {
	r := &Registry{db: db, mk: mk, now: now}
	for _, o := range opts {
		o(r)
	}
	return r
}

// newKey is the key of a new tenant: a fresh one, or with WithSharedKeys
// the first shared key that no tenant of the platform has.
func (r *Registry) newKey(ctx context.Context) (*rsa.PrivateKey, error) {
	if !r.shared {
		return generateKey()
	}
	ids, err := sqldb.Column[string](r.db.QueryContext(ctx, `SELECT key_id FROM tenants`))
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.handed == nil {
		r.handed = map[string]bool{}
	}
	taken := maps.Clone(r.handed)
	for _, id := range ids {
		taken[id] = true
	}
	priv, err := sharedKey(taken)
	if err != nil {
		return nil, err
	}
	id, _, err := keyID(priv)
	r.handed[id] = true
	return priv, err
}

// DB returns the platform database.
func (r *Registry) DB() *sqldb.DB { return r.db }

// NewTenant is the input of Create.
type NewTenant struct {
	Name       string
	Host       string
	IsPlatform bool
	IsDemo     bool
}

// Create registers a tenant with a fresh key pair. Its database is created
// by Tenants.Provision, not here, so the registry stays storage-agnostic.
func (r *Registry) Create(ctx context.Context, in NewTenant) (Record, error) {
	host := NormalizeHost(in.Host)
	if !ValidHost(host) {
		return Record{}, apperr.Field("host", "The host must be a valid host name.")
	}
	if in.Name == "" {
		in.Name = host
	}
	priv, err := r.newKey(ctx)
	if err != nil {
		return Record{}, fmt.Errorf("platform: generate key: %w", err)
	}
	kp, pubPEM, sealed, err := newKeyPair(r.mk, priv)
	if err != nil {
		return Record{}, fmt.Errorf("platform: generate key: %w", err)
	}
	suffix := make([]byte, 5)
	rand.Read(suffix)
	// On PostgreSQL tenant databases are named after the platform database,
	// so several platforms (and test runs) can share one server.
	key := "t_" + hex.EncodeToString(suffix)
	name := key
	if r.db.Dialect == sqldb.Postgres {
		name = sqldb.DatabaseName(r.db.Location) + "_" + key
	}
	now := r.now()
	rec := Record{Name: in.Name, Hosts: []string{host}, DatabaseName: name, BlobPrefix: "tenants/" + key + "/",
		KeyID: kp.ID, PublicKey: pubPEM, sealedKey: sealed, IsPlatform: in.IsPlatform, IsDemo: in.IsDemo,
		CreatedAt: now, UpdatedAt: now}
	err = r.db.Tx(ctx, func(tx *sqldb.Tx) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO tenants (name, database_name, blob_prefix, key_id, public_key,
			private_key_sealed, is_platform, is_demo, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
			rec.Name, rec.DatabaseName, rec.BlobPrefix, rec.KeyID, rec.PublicKey, sealed, rec.IsPlatform, rec.IsDemo, now, now).Scan(&rec.ID)
		if err != nil {
			return fmt.Errorf("platform: insert tenant: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO tenant_hosts (host, tenant_id) VALUES ($1, $2)`, host, rec.ID); err != nil {
			if sqldb.IsUniqueViolation(err) {
				return apperr.Field("host", "The host is already used by a tenant.")
			}
			return fmt.Errorf("platform: insert host: %w", err)
		}
		return nil
	})
	return rec, err
}

// ByHost finds the tenant serving host exactly.
func (r *Registry) ByHost(ctx context.Context, host string) (Record, error) {
	row := r.db.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM tenants t
		JOIN tenant_hosts h ON h.tenant_id = t.id WHERE h.host = $1`, NormalizeHost(host))
	rec, err := scanRecord(row)
	if sqldb.NotFound(err) {
		return rec, apperr.New(apperr.NotFound, "Unknown tenant.")
	}
	if err != nil {
		return rec, fmt.Errorf("platform: look up host: %w", err)
	}
	rec.Hosts, err = r.hosts(ctx, rec.ID)
	return rec, err
}

// ByID finds the tenant with the id; NotFound when there is none.
func (r *Registry) ByID(ctx context.Context, id int64) (Record, error) {
	row := r.db.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM tenants t WHERE t.id = $1`, id)
	rec, err := scanRecord(row)
	if sqldb.NotFound(err) {
		return rec, apperr.New(apperr.NotFound, "No tenant has this id.")
	}
	if err != nil {
		return rec, fmt.Errorf("platform: look up tenant %d: %w", id, err)
	}
	rec.Hosts, err = r.hosts(ctx, rec.ID)
	return rec, err
}

// Platform returns the platform tenant, or NotFound before it exists.
func (r *Registry) Platform(ctx context.Context) (Record, error) {
	row := r.db.QueryRowContext(ctx, `SELECT `+recordColumns+` FROM tenants t WHERE t.is_platform ORDER BY t.id LIMIT 1`)
	rec, err := scanRecord(row)
	if sqldb.NotFound(err) {
		return rec, apperr.New(apperr.NotFound, "The platform tenant does not exist yet.")
	}
	if err != nil {
		return rec, fmt.Errorf("platform: look up platform tenant: %w", err)
	}
	rec.Hosts, err = r.hosts(ctx, rec.ID)
	return rec, err
}

// List returns every tenant, oldest first.
func (r *Registry) List(ctx context.Context) ([]Record, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT `+recordColumns+` FROM tenants t ORDER BY t.id`)
	if err != nil {
		return nil, fmt.Errorf("platform: list tenants: %w", err)
	}
	var out []Record
	for rows.Next() {
		rec, err := scanRecord(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, rec)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Hosts, err = r.hosts(ctx, out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (r *Registry) hosts(ctx context.Context, id int64) ([]string, error) {
	hosts, err := sqldb.Column[string](r.db.QueryContext(ctx, `SELECT host FROM tenant_hosts WHERE tenant_id = $1 ORDER BY host`, id))
	if err != nil {
		return nil, fmt.Errorf("platform: tenant hosts: %w", err)
	}
	return hosts, nil
}

// keyPair unseals the record's private key.
func (r *Registry) keyPair(rec Record) (KeyPair, error) {
	return openKeyPair(r.mk, rec.KeyID, rec.sealedKey)
}
