package sqldb_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/sqldb"
)

// schemaDifferences lists the differences between the two dialects'
// schemas that are meant, each with its reason; TestMigrationsSameSchema
// fails on any other difference and on an entry here that no longer
// occurs. An entry reads as the test reports it: "<set>: <difference>".
var schemaDifferences = map[string]string{}

// TestMigrationsSameSchema migrates a fresh database of each dialect and
// compares what the two sets of migrations built: the tables, their
// columns (a type class and nullability), primary keys, unique
// constraints, named indexes (columns, uniqueness, partial or not) and
// which tables carry triggers. TestMigrationsInStep only compares the
// migrations' file names.
func TestMigrationsSameSchema(t *testing.T) {
	url := os.Getenv("LMS_TEST_PG_URL")
	if url == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but LMS_TEST_PG_URL is not set")
		}
		t.Skip("LMS_TEST_PG_URL not set")
	}
	ctx := context.Background()
	seen := map[string]bool{}
	for _, set := range []sqldb.Set{sqldb.PlatformSet, sqldb.TenantSet} {
		lite, err := sqldb.OpenSQLite(ctx, filepath.Join(t.TempDir(), "schema.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer lite.Close()
		b := make([]byte, 5)
		rand.Read(b)
		name := "lmsschema_" + hex.EncodeToString(b)
		if err := sqldb.CreateDatabase(ctx, url, name); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sqldb.DropDatabase(ctx, url, name) })
		loc, err := sqldb.WithDatabase(url, name)
		if err != nil {
			t.Fatal(err)
		}
		pg, err := sqldb.OpenPostgres(ctx, loc)
		if err != nil {
			t.Fatal(err)
		}
		defer pg.Close()

		var schemas [2]schema
		for i, db := range []*sqldb.DB{lite, pg} {
			if err := sqldb.Migrate(ctx, db, set); err != nil {
				t.Fatal(err)
			}
			read := readSQLiteSchema
			if db.Dialect == sqldb.Postgres {
				read = readPostgresSchema
			}
			if schemas[i], err = read(ctx, db); err != nil {
				t.Fatalf("%s %s: %v", set, db.Dialect, err)
			}
		}
		if len(schemas[0]) == 0 {
			t.Fatalf("%s: no tables on SQLite", set)
		}
		for _, d := range compareSchemas(schemas[0], schemas[1]) {
			d = string(set) + ": " + d
			seen[d] = true
			if _, ok := schemaDifferences[d]; !ok {
				t.Error(d)
			}
		}
	}
	for d := range schemaDifferences {
		if !seen[d] {
			t.Errorf("schemaDifferences lists %q, which no longer occurs", d)
		}
	}
}

// schema is what the test compares of a database, by table name.
type schema map[string]*table

type table struct {
	columns    map[string]column
	primaryKey string   // its columns, "a,b"
	uniques    []string // the UNIQUE constraints' columns, sorted
	indexes    map[string]index
	triggers   bool
}

type column struct {
	class   string
	notNull bool
}

func (c column) String() string {
	if c.notNull {
		return c.class + " NOT NULL"
	}
	return c.class
}

// index is one made with CREATE INDEX (a constraint's index is in
// primaryKey or uniques instead, since its name is the dialect's own).
type index struct {
	columns string // "a,b"; an expression reads "(expr)"
	unique  bool
	partial bool
}

func (x index) String() string {
	s := "(" + x.columns + ")"
	if x.unique {
		s = "UNIQUE " + s
	}
	if x.partial {
		s += " WHERE ..."
	}
	return s
}

// typeClass puts a column's declared type (SQLite) or data_type
// (PostgreSQL) in a class both dialects share; an unknown type is its own
// class, so that a new type shows up as a difference until it is named
// here.
func typeClass(declared string) string {
	switch strings.ToLower(declared) {
	case "integer", "int", "bigint", "smallint":
		return "integer"
	case "real", "double precision", "numeric":
		return "real"
	// SQLite keeps JSON as TEXT, PostgreSQL as JSONB.
	case "text", "character varying", "jsonb":
		return "text"
	case "blob", "bytea":
		return "blob"
	case "boolean":
		return "boolean"
	case "datetime", "timestamp with time zone":
		return "time"
	}
	return "unknown type " + declared
}

// scanStrings reads a query's single text column.
func scanStrings(ctx context.Context, db *sqldb.DB, query string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func readSQLiteSchema(ctx context.Context, db *sqldb.DB) (schema, error) {
	names, err := scanStrings(ctx, db, `SELECT name FROM sqlite_master
		WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name <> 'goose_db_version'`)
	if err != nil {
		return nil, err
	}
	out := schema{}
	for _, name := range names {
		tb := &table{columns: map[string]column{}, indexes: map[string]index{}}
		out[name] = tb
		rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info($1)`, name)
		if err != nil {
			return nil, err
		}
		pk := map[int]string{}
		for rows.Next() {
			var col, typ string
			var notNull bool
			var pos int
			if err := rows.Scan(&col, &typ, &notNull, &pos); err != nil {
				rows.Close()
				return nil, err
			}
			// A primary key's columns are never NULL on PostgreSQL; on
			// SQLite they may be unless declared NOT NULL, which the
			// migrations leave out.
			tb.columns[col] = column{class: typeClass(typ), notNull: notNull || pos > 0}
			if pos > 0 {
				pk[pos] = col
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for i := 1; i <= len(pk); i++ {
			tb.primaryKey += "," + pk[i]
		}
		tb.primaryKey = strings.TrimPrefix(tb.primaryKey, ",")

		type listed struct {
			name, origin    string
			unique, partial bool
		}
		var list []listed
		rows, err = db.QueryContext(ctx, `SELECT name, "unique", origin, partial FROM pragma_index_list($1)`, name)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var l listed
			if err := rows.Scan(&l.name, &l.unique, &l.origin, &l.partial); err != nil {
				rows.Close()
				return nil, err
			}
			list = append(list, l)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for _, l := range list {
			cols, err := scanStrings(ctx, db, `SELECT coalesce(name, '(expr)') FROM pragma_index_info($1) ORDER BY seqno`, l.name)
			if err != nil {
				return nil, err
			}
			switch l.origin {
			case "pk": // in primaryKey already
			case "u":
				tb.uniques = append(tb.uniques, strings.Join(cols, ","))
			default:
				tb.indexes[l.name] = index{columns: strings.Join(cols, ","), unique: l.unique, partial: l.partial}
			}
		}
		sort.Strings(tb.uniques)
	}
	triggered, err := scanStrings(ctx, db, `SELECT DISTINCT tbl_name FROM sqlite_master WHERE type = 'trigger'`)
	if err != nil {
		return nil, err
	}
	for _, name := range triggered {
		if tb := out[name]; tb != nil {
			tb.triggers = true
		}
	}
	return out, nil
}

func readPostgresSchema(ctx context.Context, db *sqldb.DB) (schema, error) {
	names, err := scanStrings(ctx, db, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version'`)
	if err != nil {
		return nil, err
	}
	out := schema{}
	for _, name := range names {
		out[name] = &table{columns: map[string]column{}, indexes: map[string]index{}}
	}
	rows, err := db.QueryContext(ctx, `SELECT table_name, column_name, data_type, is_nullable = 'NO'
		FROM information_schema.columns WHERE table_schema = 'public'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, col, typ string
		var notNull bool
		if err := rows.Scan(&tbl, &col, &typ, &notNull); err != nil {
			rows.Close()
			return nil, err
		}
		if tb := out[tbl]; tb != nil {
			tb.columns[col] = column{class: typeClass(typ), notNull: notNull}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// Every index of the public tables with its key columns in order; an
	// expression (attnum 0) has no attribute.
	rows, err = db.QueryContext(ctx, `SELECT t.relname, x.relname, i.indisunique, i.indisprimary,
			i.indpred IS NOT NULL,
			EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid AND k.contype = 'u'),
			(SELECT string_agg(coalesce(a.attname, '(expr)'), ',' ORDER BY c.n)
				FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS c(attnum, n)
				LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = c.attnum
				WHERE c.n <= i.indnkeyatts)
		FROM pg_index i
		JOIN pg_class t ON t.oid = i.indrelid
		JOIN pg_class x ON x.oid = i.indexrelid
		JOIN pg_namespace s ON s.oid = t.relnamespace
		WHERE s.nspname = 'public'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, name, cols string
		var unique, primary, partial, constraint bool
		if err := rows.Scan(&tbl, &name, &unique, &primary, &partial, &constraint, &cols); err != nil {
			rows.Close()
			return nil, err
		}
		tb := out[tbl]
		switch {
		case tb == nil:
		case primary:
			tb.primaryKey = cols
		case constraint:
			tb.uniques = append(tb.uniques, cols)
		default:
			tb.indexes[name] = index{columns: cols, unique: unique, partial: partial}
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, tb := range out {
		sort.Strings(tb.uniques)
	}
	triggered, err := scanStrings(ctx, db, `SELECT DISTINCT event_object_table FROM information_schema.triggers
		WHERE trigger_schema = 'public'`)
	if err != nil {
		return nil, err
	}
	for _, name := range triggered {
		if tb := out[name]; tb != nil {
			tb.triggers = true
		}
	}
	return out, nil
}

// compareSchemas describes each difference between the SQLite schema and
// the PostgreSQL one, in a stable order.
func compareSchemas(lite, pg schema) []string {
	var out []string
	for _, name := range unionKeys(lite, pg) {
		l, p := lite[name], pg[name]
		switch {
		case p == nil:
			out = append(out, fmt.Sprintf("table %s only on SQLite", name))
			continue
		case l == nil:
			out = append(out, fmt.Sprintf("table %s only on PostgreSQL", name))
			continue
		}
		for _, col := range unionKeys(l.columns, p.columns) {
			lc, lok := l.columns[col]
			pc, pok := p.columns[col]
			switch {
			case !pok:
				out = append(out, fmt.Sprintf("column %s.%s only on SQLite", name, col))
			case !lok:
				out = append(out, fmt.Sprintf("column %s.%s only on PostgreSQL", name, col))
			case lc != pc:
				out = append(out, fmt.Sprintf("column %s.%s is %s on SQLite, %s on PostgreSQL", name, col, lc, pc))
			}
		}
		if l.primaryKey != p.primaryKey {
			out = append(out, fmt.Sprintf("table %s has primary key (%s) on SQLite, (%s) on PostgreSQL", name, l.primaryKey, p.primaryKey))
		}
		if !slices.Equal(l.uniques, p.uniques) {
			out = append(out, fmt.Sprintf("table %s has unique constraints %q on SQLite, %q on PostgreSQL", name, l.uniques, p.uniques))
		}
		for _, idx := range unionKeys(l.indexes, p.indexes) {
			li, lok := l.indexes[idx]
			pi, pok := p.indexes[idx]
			switch {
			case !pok:
				out = append(out, fmt.Sprintf("index %s on %s only on SQLite", idx, name))
			case !lok:
				out = append(out, fmt.Sprintf("index %s on %s only on PostgreSQL", idx, name))
			case li != pi:
				out = append(out, fmt.Sprintf("index %s on %s is %s on SQLite, %s on PostgreSQL", idx, name, li, pi))
			}
		}
		if l.triggers != p.triggers {
			out = append(out, fmt.Sprintf("table %s has triggers on one dialect only (SQLite %t)", name, l.triggers))
		}
	}
	return out
}

func unionKeys[V any](a, b map[string]V) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}
