// Package sqldbtest gives tests a fresh PostgreSQL database of their own.
package sqldbtest

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/sqldb"
)

// Postgres creates a database named after prefix on the server at
// serverURL, opens it with the migrations of set applied, and closes and
// drops it when the test ends.
func Postgres(t *testing.T, serverURL, prefix string, set sqldb.Set) *sqldb.DB {
	t.Helper()
	ctx := context.Background()
	name := prefix + "_" + strings.ToLower(rand.Text()[:10])
	if err := sqldb.CreateMigrated(ctx, serverURL, name, set); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sqldb.DropDatabase(context.Background(), serverURL, name); err != nil {
			t.Error(err)
		}
	})
	location, err := sqldb.WithDatabase(serverURL, name)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqldb.OpenPostgres(ctx, location)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() }) // runs before the drop
	if err := sqldb.Migrate(ctx, db, set); err != nil {
		t.Fatal(err)
	}
	return db
}
