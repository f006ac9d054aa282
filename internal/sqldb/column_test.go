package sqldb_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lms-platform/lms/internal/sqldb"
)

func TestColumn(t *testing.T) {
	ctx := context.Background()
	db, err := sqldb.OpenSQLite(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (n INTEGER, s TEXT); INSERT INTO t VALUES (2, 'b'), (1, 'a'), (3, NULL)`); err != nil {
		t.Fatal(err)
	}
	ns, err := sqldb.Column[int64](db.QueryContext(ctx, `SELECT n FROM t ORDER BY n`))
	if err != nil || !slices.Equal(ns, []int64{1, 2, 3}) {
		t.Errorf("ints %v %v", ns, err)
	}
	none, err := sqldb.Column[string](db.QueryContext(ctx, `SELECT s FROM t WHERE n > 9`))
	if err != nil || none == nil || len(none) != 0 {
		t.Errorf("no rows: %#v %v", none, err)
	}
	// A NULL does not fit a string: the scan error is returned.
	if _, err := sqldb.Column[string](db.QueryContext(ctx, `SELECT s FROM t ORDER BY n`)); err == nil {
		t.Error("NULL scanned into a string")
	}
	bad := errors.New("query failed")
	if _, err := sqldb.Column[int64](nil, bad); !errors.Is(err, bad) {
		t.Errorf("query error: %v", err)
	}
}
