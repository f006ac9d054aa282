// Package sqldb opens the platform's SQL databases (SQLite or PostgreSQL),
// runs their migrations and holds the few helpers both dialects share.
//
// Queries are hand-written with $1 placeholders, which both drivers accept.
// Times are always written in UTC from Go, never from database defaults, so
// that SQLite's text timestamps compare in time order.
package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver
)

// Dialect names the SQL engine behind a DB.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// DB is a database handle that knows its dialect. Its ExecContext,
// QueryContext and QueryRowContext, and those of its transactions, reuse
// prepared statements (statements.go).
type DB struct {
	*sql.DB
	stmts   *statements
	Dialect Dialect
	// Location is the SQLite file path or the PostgreSQL URL (with password).
	Location string
	// Signal, when set, is called after a transaction that called
	// Tx.Signal commits: the tenant's event dispatcher hooks in here.
	Signal func()
	// OnChange, when set, hears the keys that writes named with Changed,
	// after their transaction commits: the tenant publishes them so that
	// every process drops what it cached from that data.
	OnChange func(keys []string)
	// writes is, on SQLite, a pool of one connection that runs every
	// transaction and every ExecContext, with its own kept statements.
	// SQLite lets one writer in at a time: here writers wait their turn in
	// Go, each woken the moment the last one ends, instead of in SQLite's
	// busy handler, which sleeps 1 to 100 ms between tries and leaves the
	// database idle meanwhile. And the one connection that writes keeps
	// its page cache, which SQLite empties on every other connection that
	// a write of another has changed the database under.
	writes     *sql.DB
	writeStmts *statements
	// commits queues the transactions for the writer, on SQLite, to run
	// them in batches (group.go).
	commits *commits
	// maxIdle is the pool's number of idle connections kept (CloseIdle
	// restores it).
	maxIdle int
}

// Querier is what *sql.DB and *sql.Tx have in common, so store functions
// can run inside or outside a transaction.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// IsPostgresURL reports whether location names a PostgreSQL server.
func IsPostgresURL(location string) bool {
	return strings.HasPrefix(location, "postgres://") || strings.HasPrefix(location, "postgresql://")
}

// Open opens a PostgreSQL URL or an SQLite file path (created if missing).
func Open(ctx context.Context, location string) (*DB, error) {
	if IsPostgresURL(location) {
		return OpenPostgres(ctx, location)
	}
	return OpenSQLite(ctx, location)
}

// SQLiteIdleConn is how long an SQLite connection may stay idle before
// its pool closes it.
const SQLiteIdleConn = 30 * time.Second

// PostgresIdleConn is how long a PostgreSQL connection may stay idle
// before its pool closes it.
const PostgresIdleConn = time.Minute

// postgresConns bounds a PostgreSQL tenant's connections, open and idle:
// four for each processor this server may use, at most 16. Each is a
// server process that starts cold, pages in its memory and plans every
// statement for itself, and the hot reads of concurrent requests share
// queries (coalesce.go), so more connections than a server can keep busy
// cost more than they give: on 2 cores, 8 rather than 16 cut the processor
// time PostgreSQL spent on a class's quiz start by about a third.
func postgresConns() int { return min(16, 4*runtime.GOMAXPROCS(0)) }

// OpenSQLite opens (creating) an SQLite database file in WAL mode.
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("sqldb: create directory for %s: %w", path, err)
	}
	// _txlock=immediate takes the write lock at BEGIN, so two writers queue
	// on busy_timeout instead of failing with SQLITE_BUSY on upgrade.
	dsn := "file:" + path + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(10000)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_time_format=sqlite&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqldb: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	// Each connection holds its own page cache, parsed schema and prepared
	// statements, about half a megabyte: a tenant nobody asks for a while
	// gives them back, and so does one that many others pushed out of the
	// warm tenants (platform.Tenants).
	db.SetConnMaxIdleTime(SQLiteIdleConn)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqldb: ping %s: %w", path, err)
	}
	// The writer runs batches of transactions in savepoints (group.go):
	// SQLite keeps the pages each savepoint changes in a sub-journal,
	// which in memory costs a copy instead of a write to a temporary file.
	writes, err := sql.Open("sqlite", dsn+"&_pragma=temp_store(MEMORY)")
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("sqldb: open %s: %w", path, err)
	}
	writes.SetMaxOpenConns(1)
	writes.SetMaxIdleConns(1)
	writes.SetConnMaxIdleTime(SQLiteIdleConn)
	out := newDB(db, SQLite, path, 8)
	out.writes, out.writeStmts, out.commits = writes, newStatements(writes, maxStatements), newCommits()
	return out, nil
}

// OpenPostgres opens a PostgreSQL database by URL.
func OpenPostgres(ctx context.Context, location string) (*DB, error) {
	db, err := sql.Open("pgx", location)
	if err != nil {
		return nil, fmt.Errorf("sqldb: open postgres: %w", err)
	}
	// Every connection is a server process that takes milliseconds to
	// start: a busy tenant keeps all of its connections between requests,
	// where a pool keeping fewer idle than it opens would close and open
	// them again under load; a quiet one gives them back after a while.
	conns := postgresConns()
	db.SetMaxOpenConns(conns)
	db.SetConnMaxIdleTime(PostgresIdleConn)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqldb: ping postgres %s: %w", Redact(location), err)
	}
	return newDB(db, Postgres, location, conns), nil
}

func newDB(db *sql.DB, dialect Dialect, location string, maxIdle int) *DB {
	db.SetMaxIdleConns(maxIdle)
	return &DB{DB: db, stmts: newStatements(db, maxStatements), Dialect: dialect, Location: location, maxIdle: maxIdle}
}

// CloseIdle closes the pool's idle connections now, with the statements
// prepared on them; connections in use go back to the pool as usual, and
// the next query opens a new one when none is left.
func (db *DB) CloseIdle() {
	db.DB.SetMaxIdleConns(0)
	db.DB.SetMaxIdleConns(db.maxIdle)
	if db.writes != nil {
		db.writes.SetMaxIdleConns(0)
		db.writes.SetMaxIdleConns(1)
	}
}

// Close closes the kept statements and the database.
func (db *DB) Close() error {
	db.stmts.close()
	if db.writes != nil {
		db.writeStmts.close()
		db.writes.Close()
	}
	return db.DB.Close()
}

// writePool is the pool and kept statements that ExecContext runs on.
func (db *DB) writePool() (*sql.DB, *statements) {
	if db.writes != nil {
		return db.writes, db.writeStmts
	}
	return db.DB, db.stmts
}

// Tx is a transaction that can run code after it commits.
type Tx struct {
	*sql.Tx
	db          *DB
	stmts       *statements
	Dialect     Dialect
	afterCommit []func()
	signal      func()
	signalled   bool
	// batched is set on a transaction that runs in a batch (group.go).
	batched bool
}

// AfterCommit runs fn once the transaction has committed (never on
// rollback), for work that must only see durable changes, such as waking the
// event dispatcher.
func (tx *Tx) AfterCommit(fn func()) { tx.afterCommit = append(tx.afterCommit, fn) }

// Signal asks for the database's Signal hook to run after commit.
func (tx *Tx) Signal() {
	if tx.signal != nil && !tx.signalled {
		tx.signalled = true
		tx.AfterCommit(tx.signal)
	}
}

// Tx runs fn in a transaction, committing when it returns nil.
func (db *DB) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	var tx *Tx
	var err error
	if db.commits != nil {
		tx, err = db.grouped(ctx, fn)
	} else {
		tx, err = db.run(ctx, fn)
	}
	if err != nil {
		return err
	}
	for _, f := range tx.afterCommit {
		f()
	}
	return nil
}

// Write runs fn, which makes one write statement, at the least cost of
// committing it: in SQLite's next group commit (group.go), where a rush of
// writers queues in Go, and on PostgreSQL as the statement alone, which
// commits by itself without the round trips of BEGIN and COMMIT. fn must
// make a single statement: on PostgreSQL nothing makes two atomic.
func (db *DB) Write(ctx context.Context, fn func(q Querier) error) error {
	if db.commits == nil {
		return fn(db)
	}
	return db.Tx(ctx, func(tx *Tx) error { return fn(tx) })
}

// run begins, runs fn and commits (on PostgreSQL, where transactions run
// side by side); code after the commit runs once the transaction's
// connection is free again, as it may start a transaction.
func (db *DB) run(ctx context.Context, fn func(tx *Tx) error) (*Tx, error) {
	stx, err := db.DB.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("sqldb: begin: %w", err)
	}
	tx := &Tx{Tx: stx, db: db, stmts: db.stmts, Dialect: db.Dialect, signal: db.Signal}
	defer func() {
		if p := recover(); p != nil {
			stx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		stx.Rollback()
		return nil, err
	}
	if err := stx.Commit(); err != nil {
		return nil, fmt.Errorf("sqldb: commit: %w", err)
	}
	return tx, nil
}

// Changed names data that a write through q changed, for the caches built
// from it (see DB.OnChange): at once outside a transaction, after the
// commit inside one, never when it rolls back.
func Changed(q Querier, keys ...string) {
	switch q := q.(type) {
	case *Tx:
		if hook := q.db.OnChange; hook != nil {
			q.AfterCommit(func() { hook(keys) })
		}
	case *DB:
		if q.OnChange != nil {
			q.OnChange(keys)
		}
	}
}

// IsUniqueViolation reports whether err is a unique-constraint failure.
func IsUniqueViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "UNIQUE constraint failed") || // SQLite
		strings.Contains(msg, "SQLSTATE 23505") // PostgreSQL
}

// IsForeignKeyViolation reports whether err is a foreign-key failure: a
// row refers to one that does not exist.
func IsForeignKeyViolation(err error) bool {
	if err == nil {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "FOREIGN KEY constraint failed") || // SQLite
		strings.Contains(msg, "SQLSTATE 23503") // PostgreSQL
}

// NotFound reports whether err is sql.ErrNoRows.
func NotFound(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// Redact hides the password of a database URL, for logs and errors.
func Redact(location string) string {
	u, err := url.Parse(location)
	if err != nil || u.User == nil {
		return location
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}
