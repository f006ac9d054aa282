package sqldb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCreateMigrated copies databases of both sets from their templates:
// copies made at once all succeed and hold every migration, a copy takes
// connections though its template does not, and an existing database is
// left as it is.
func TestCreateMigrated(t *testing.T) {
	serverURL, server := postgresServer(t)
	ctx := context.Background()
	for _, set := range []Set{PlatformSet, TenantSet} {
		t.Run(string(set), func(t *testing.T) {
			prefix := "lmstmpl_" + rand6()
			t.Cleanup(func() { DropDatabasesLike(context.Background(), serverURL, prefix) })
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Go(func() { errs[i] = CreateMigrated(ctx, serverURL, fmt.Sprintf("%s_%d", prefix, i), set) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("copy %d: %v", i, err)
				}
			}
			want := newestMigration(t, set)
			for i := range errs {
				name := fmt.Sprintf("%s_%d", prefix, i)
				if got := migratedTo(t, serverURL, name); got != want {
					t.Errorf("%s is at migration %d, want %d", name, got, want)
				}
			}
			template, err := templateName(set)
			if err != nil {
				t.Fatal(err)
			}
			var allow bool
			if err := server.QueryRowContext(ctx, `SELECT datallowconn FROM pg_database WHERE datname = $1`, template).Scan(&allow); err != nil {
				t.Fatal(err)
			}
			if allow {
				t.Errorf("template %s takes connections", template)
			}

			// An existing database keeps its rows.
			name := prefix + "_0"
			loc, _ := WithDatabase(serverURL, name)
			db, err := OpenPostgres(ctx, loc)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `CREATE TABLE kept (n int)`); err != nil {
				t.Fatal(err)
			}
			db.Close()
			if err := CreateMigrated(ctx, serverURL, name, set); err != nil {
				t.Fatal(err)
			}
			if got := tables(t, serverURL, name, "kept"); got != 1 {
				t.Errorf("the existing database was replaced (%d tables named kept)", got)
			}
		})
	}
	if err := CreateMigrated(ctx, serverURL, "Bad Name", TenantSet); err == nil {
		t.Error("a database name outside [a-z0-9_] was taken")
	}
}

// TestOtherTemplatesDropped: a template of other migrations goes when a
// new one is built, once unused for an hour (unmarked ones count as
// unused); one used lately, as by another version still running, stays,
// and so does one being built by this version.
func TestOtherTemplatesDropped(t *testing.T) {
	serverURL, server := postgresServer(t)
	ctx := context.Background()
	// A set of its own, so that no other test's templates are touched.
	set := Set("zz" + rand6())
	keep := templatePrefix + string(set) + "_current"
	old := templatePrefix + string(set) + "_previous"
	idle := templatePrefix + string(set) + "_idle"
	recent := templatePrefix + string(set) + "_recent"
	inFlight := keep + "_building"
	for _, n := range []string{keep, old, idle, recent, inFlight} {
		if _, err := server.ExecContext(ctx, `CREATE DATABASE "`+n+`"`); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { DropDatabasesLike(context.Background(), serverURL, templatePrefix+string(set)) })
	stale := time.Now().Add(-templateIdle - time.Minute).UTC().Format(time.RFC3339)
	if _, err := server.ExecContext(ctx, `COMMENT ON DATABASE "`+idle+`" IS 'used `+stale+`'`); err != nil {
		t.Fatal(err)
	}
	if err := markUsed(ctx, server, recent); err != nil {
		t.Fatal(err)
	}
	dropOtherTemplates(ctx, server, set, keep)
	for n, want := range map[string]bool{keep: true, inFlight: true, recent: true, old: false, idle: false} {
		if got, err := databaseExists(ctx, server, n); err != nil || got != want {
			t.Errorf("%s exists: %v (%v), want %v", n, got, err, want)
		}
	}
}

// postgresServer is the test PostgreSQL server's URL and a handle on it.
func postgresServer(t *testing.T) (string, *sql.DB) {
	serverURL := os.Getenv("LMS_TEST_PG_URL")
	if serverURL == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but LMS_TEST_PG_URL is not set")
		}
		t.Skip("LMS_TEST_PG_URL not set")
	}
	server, err := sql.Open("pgx", serverURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	return serverURL, server
}

func rand6() string {
	return strings.ToLower(rand.Text()[:6])
}

func newestMigration(t *testing.T, set Set) int64 {
	fsys, err := MigrationFS(Postgres, set)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	fmt.Sscanf(entries[len(entries)-1].Name(), "%d", &n)
	return n
}

func migratedTo(t *testing.T, serverURL, name string) int64 {
	loc, _ := WithDatabase(serverURL, name)
	db, err := sql.Open("pgx", loc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v int64
	if err := db.QueryRow(`SELECT max(version_id) FROM goose_db_version WHERE is_applied`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func tables(t *testing.T, serverURL, name, table string) int {
	loc, _ := WithDatabase(serverURL, name)
	db, err := sql.Open("pgx", loc)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM information_schema.tables WHERE table_name = $1`, table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
