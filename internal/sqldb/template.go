package sqldb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// On PostgreSQL a new database of a set starts as a copy of a template that
// already holds the set's migrations: copying a small database takes a
// tenth of a second, running every migration a few seconds.
// That is most of the time a platform adding tenants by the thousand, or
// the test suite, spends per database.

const templatePrefix = "lms_template_"

// templateIdle is how long a template of other migrations is kept after
// its last use. Two versions of the program share a server for a while
// (replicas during a rolling upgrade, or two checkouts' test suites); each
// dropping the other's template at once would make both rebuild theirs
// over and over, and fail a creation that meets the drop twice.
const templateIdle = time.Hour

// SQLSTATEs the template's life meets.
const (
	pgUndefinedDatabase = "3D000"
	pgObjectInUse       = "55006" // a session is still on the database
)

// CreateMigrated creates database name on the server of serverURL as a copy
// of the set's template, building the template first when this version of
// the set's migrations has none. Migrate on the copy then finds nothing to
// do. A database that exists already is left as it is.
func CreateMigrated(ctx context.Context, serverURL, name string, set Set) error {
	if !dbName.MatchString(name) {
		return fmt.Errorf("sqldb: invalid database name %q", name)
	}
	template, err := templateName(set)
	if err != nil {
		return err
	}
	server, err := sql.Open("pgx", serverURL)
	if err != nil {
		return err
	}
	defer server.Close()
	if ok, err := databaseExists(ctx, server, name); err != nil || ok {
		return err
	}
	for attempt := 0; ; attempt++ {
		ok, err := databaseExists(ctx, server, template)
		if err != nil {
			return err
		}
		if !ok {
			if err := buildTemplate(ctx, server, serverURL, template, set); err != nil {
				return err
			}
		}
		err = whileInUse(ctx, func() error {
			_, err := server.ExecContext(ctx, `CREATE DATABASE "`+name+`" TEMPLATE "`+template+`"`)
			return err
		})
		switch {
		case err == nil:
			return markUsed(ctx, server, template)
		case IsDuplicateDatabase(err):
			return nil
		case sqlState(err) == pgUndefinedDatabase && attempt == 0:
			// Another version's build dropped the template just now.
			continue
		default:
			return fmt.Errorf("sqldb: create database %s from %s: %w", name, template, err)
		}
	}
}

// templateName names the set's template after its PostgreSQL migrations,
// so a change to any of them makes a new template.
func templateName(set Set) (string, error) {
	fsys, err := MigrationFS(Postgres, set)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	err = fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(body))
		h.Write(body)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("sqldb: read migrations %s: %w", set, err)
	}
	return templatePrefix + string(set) + "_" + hex.EncodeToString(h.Sum(nil))[:12], nil
}

// buildTemplate migrates a database under a name of its own,
// closes it to connections and renames it to template. Processes building
// at once each build their own; the first rename wins and the others drop
// theirs. Templates of other versions of the set go, unless in use.
func buildTemplate(ctx context.Context, server *sql.DB, serverURL, template string, set Set) error {
	building := template + "_" + strings.ToLower(rand.Text()[:8])
	if _, err := server.ExecContext(ctx, `CREATE DATABASE "`+building+`"`); err != nil {
		return fmt.Errorf("sqldb: create template %s: %w", building, err)
	}
	if err := markUsed(ctx, server, building); err != nil {
		return err
	}
	drop := func() {
		server.ExecContext(context.WithoutCancel(ctx), `DROP DATABASE IF EXISTS "`+building+`" WITH (FORCE)`)
	}
	if err := fillTemplate(ctx, serverURL, building, set); err != nil {
		drop()
		return err
	}
	err := whileInUse(ctx, func() error {
		_, err := server.ExecContext(ctx, `ALTER DATABASE "`+building+`" WITH ALLOW_CONNECTIONS false`)
		if err == nil {
			_, err = server.ExecContext(ctx, `ALTER DATABASE "`+building+`" RENAME TO "`+template+`"`)
		}
		return err
	})
	if err != nil {
		drop()
		if IsDuplicateDatabase(err) {
			return nil
		}
		return fmt.Errorf("sqldb: template %s: %w", template, err)
	}
	dropOtherTemplates(ctx, server, set, template)
	return nil
}

func fillTemplate(ctx context.Context, serverURL, name string, set Set) error {
	location, err := WithDatabase(serverURL, name)
	if err != nil {
		return err
	}
	db, err := OpenPostgres(ctx, location)
	if err != nil {
		return err
	}
	defer db.Close()
	return Migrate(ctx, db, set)
}

// markUsed notes on the database (as its comment, which a rename keeps)
// when this version of the program last built or copied it.
func markUsed(ctx context.Context, server *sql.DB, name string) error {
	stamp := time.Now().UTC().Format(time.RFC3339)
	if _, err := server.ExecContext(ctx, `COMMENT ON DATABASE "`+name+`" IS 'used `+stamp+`'`); err != nil {
		return fmt.Errorf("sqldb: mark %s used: %w", name, err)
	}
	return nil
}

// dropOtherTemplates drops the set's templates of other migrations, and
// builds a crashed process left, once unused for templateIdle. One in use
// (being built or copied) stays, as no FORCE is given; the next build
// tries again.
func dropOtherTemplates(ctx context.Context, server *sql.DB, set Set, keep string) {
	rows, err := server.QueryContext(ctx, `SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE starts_with(datname, $1) AND datname <> $2`, templatePrefix+string(set)+"_", keep)
	if err != nil {
		return
	}
	var names []string
	for rows.Next() {
		var name, comment string
		if rows.Scan(&name, &comment) != nil {
			break
		}
		used, err := time.Parse(time.RFC3339, strings.TrimPrefix(comment, "used "))
		if dbName.MatchString(name) && !strings.HasPrefix(name, keep+"_") && (err != nil || time.Since(used) > templateIdle) {
			names = append(names, name)
		}
	}
	rows.Close()
	for _, n := range names {
		server.ExecContext(ctx, `DROP DATABASE IF EXISTS "`+n+`"`)
	}
}

// whileInUse retries fn while PostgreSQL says a session is still on the
// database: a closed connection's server process leaves a moment later.
func whileInUse(ctx context.Context, fn func() error) error {
	for wait := 10 * time.Millisecond; ; wait *= 2 {
		err := fn()
		if sqlState(err) != pgObjectInUse || wait > 2*time.Second {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
}

func databaseExists(ctx context.Context, server *sql.DB, name string) (bool, error) {
	var ok bool
	if err := server.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&ok); err != nil {
		return false, fmt.Errorf("sqldb: look up database %s: %w", name, err)
	}
	return ok, nil
}

func sqlState(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
