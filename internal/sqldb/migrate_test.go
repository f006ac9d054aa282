package sqldb_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lms-platform/lms/internal/sqldb"
)

// TestMigrationsInStep fails when one dialect has a migration the other
// lacks: the two folders must always describe the same schema history.
func TestMigrationsInStep(t *testing.T) {
	for _, set := range []sqldb.Set{sqldb.PlatformSet, sqldb.TenantSet} {
		names := map[sqldb.Dialect][]string{}
		for _, d := range []sqldb.Dialect{sqldb.SQLite, sqldb.Postgres} {
			fsys, err := sqldb.MigrationFS(d, set)
			if err != nil {
				t.Fatal(err)
			}
			entries, err := fs.ReadDir(fsys, ".")
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				names[d] = append(names[d], e.Name())
			}
		}
		if len(names[sqldb.SQLite]) == 0 || !slices.Equal(names[sqldb.SQLite], names[sqldb.Postgres]) {
			t.Errorf("%s migrations differ: sqlite %v, postgres %v", set, names[sqldb.SQLite], names[sqldb.Postgres])
		}
	}
}

// TestMigrateBothDialects applies every migration on a real database of
// each dialect, twice (the second run must be a no-op).
func TestMigrateBothDialects(t *testing.T) {
	ctx := context.Background()
	open := map[string]func(t *testing.T) *sqldb.DB{
		"sqlite": func(t *testing.T) *sqldb.DB {
			db, err := sqldb.OpenSQLite(ctx, filepath.Join(t.TempDir(), "m.db"))
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
	}
	if url := os.Getenv("LMS_TEST_PG_URL"); url != "" {
		open["postgres"] = func(t *testing.T) *sqldb.DB {
			b := make([]byte, 5)
			rand.Read(b)
			name := "lmsmig_" + hex.EncodeToString(b)
			if err := sqldb.CreateDatabase(ctx, url, name); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sqldb.DropDatabase(ctx, url, name) })
			loc, _ := sqldb.WithDatabase(url, name)
			db, err := sqldb.OpenPostgres(ctx, loc)
			if err != nil {
				t.Fatal(err)
			}
			return db
		}
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but LMS_TEST_PG_URL is not set")
	}
	for name, o := range open {
		t.Run(name, func(t *testing.T) {
			for _, set := range []sqldb.Set{sqldb.PlatformSet, sqldb.TenantSet} {
				db := o(t)
				for i := 0; i < 2; i++ {
					if err := sqldb.Migrate(ctx, db, set); err != nil {
						t.Fatalf("%s run %d: %v", set, i, err)
					}
				}
				db.Close()
			}
		})
	}
}
