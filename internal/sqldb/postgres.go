package sqldb

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"regexp"
)

var dbName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// WithDatabase returns the server URL pointing at another database name.
func WithDatabase(serverURL, name string) (string, error) {
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", fmt.Errorf("sqldb: parse %s: %w", Redact(serverURL), err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// DatabaseName returns the database named by a PostgreSQL URL.
func DatabaseName(serverURL string) string {
	u, err := url.Parse(serverURL)
	if err != nil || len(u.Path) < 2 {
		return ""
	}
	return u.Path[1:]
}

// CreateDatabase creates database name on the server of serverURL unless it
// exists. Names are checked because CREATE DATABASE takes no parameters.
func CreateDatabase(ctx context.Context, serverURL, name string) error {
	if !dbName.MatchString(name) {
		return fmt.Errorf("sqldb: invalid database name %q", name)
	}
	db, err := sql.Open("pgx", serverURL)
	if err != nil {
		return err
	}
	defer db.Close()
	var exists bool
	if err := db.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("sqldb: look up database %s: %w", name, err)
	}
	if exists {
		return nil
	}
	if _, err := db.ExecContext(ctx, `CREATE DATABASE "`+name+`"`); err != nil && !IsDuplicateDatabase(err) {
		return fmt.Errorf("sqldb: create database %s: %w", name, err)
	}
	return nil
}

// DropDatabase drops database name, closing other sessions on it first.
func DropDatabase(ctx context.Context, serverURL, name string) error {
	if !dbName.MatchString(name) {
		return fmt.Errorf("sqldb: invalid database name %q", name)
	}
	db, err := sql.Open("pgx", serverURL)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+name+`" WITH (FORCE)`); err != nil {
		return fmt.Errorf("sqldb: drop database %s: %w", name, err)
	}
	return nil
}

// IsDuplicateDatabase reports a CREATE DATABASE race lost to another process.
func IsDuplicateDatabase(err error) bool {
	return err != nil && (regexp.MustCompile(`SQLSTATE (42P04|23505)`).MatchString(err.Error()))
}

// DropDatabasesLike drops every database whose name starts with prefix: a
// platform database and the tenant databases named after it.
func DropDatabasesLike(ctx context.Context, serverURL, prefix string) error {
	db, err := sql.Open("pgx", serverURL)
	if err != nil {
		return err
	}
	defer db.Close()
	names, err := Column[string](db.QueryContext(ctx, `SELECT datname FROM pg_database WHERE starts_with(datname, $1)`, prefix))
	if err != nil {
		return fmt.Errorf("sqldb: list databases: %w", err)
	}
	for _, n := range names {
		if err := DropDatabase(ctx, serverURL, n); err != nil {
			return err
		}
	}
	return nil
}
