package sqldb

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// Migrations are kept in step per dialect: migrations/<dialect>/<set>/.
//
//go:embed migrations
var migrations embed.FS

// Set names a group of migrations: the platform database or a tenant's.
type Set string

const (
	PlatformSet Set = "platform"
	TenantSet   Set = "tenant"
)

// MigrationFS returns the migrations of one set for one dialect.
func MigrationFS(d Dialect, set Set) (fs.FS, error) {
	return fs.Sub(migrations, "migrations/"+string(d)+"/"+string(set))
}

// Migrate brings the database up to the newest migration of the set. On
// PostgreSQL a session lock keeps concurrent migrators (a server and a CLI
// command) from running the same migration twice.
func Migrate(ctx context.Context, db *DB, set Set) error {
	fsys, err := MigrationFS(db.Dialect, set)
	if err != nil {
		return err
	}
	dialect := goose.DialectSQLite3
	var opts []goose.ProviderOption
	if db.Dialect == Postgres {
		dialect = goose.DialectPostgres
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(dialect, db.DB, fsys, opts...)
	if err != nil {
		return fmt.Errorf("sqldb: migrations %s/%s: %w", db.Dialect, set, err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("sqldb: migrate %s/%s: %w", db.Dialect, set, err)
	}
	return nil
}
