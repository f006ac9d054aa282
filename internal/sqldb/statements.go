package sqldb

import (
	"container/list"
	"context"
	"database/sql"
	"strings"
	"sync"
)

// Parsing a statement costs SQLite more than running the small queries of
// the hot routes, so every query of a DB, inside a transaction or not, runs
// as a prepared statement that the DB keeps and reuses: the query text is
// the key. database/sql prepares a kept statement again on each pooled
// connection that runs it, once, and transactions borrow it with
// Tx.StmtContext. On PostgreSQL the same statements become named server
// side statements, which spares the server its planning.

// maxStatements bounds the statements a DB keeps: queries whose text
// depends on their input (lists of ids, filters) come and go, and the
// least recently used statement is closed when a new one needs room.
const maxStatements = 256

// statements is a DB's bounded LRU cache of prepared statements.
type statements struct {
	db  *sql.DB
	max int

	mu      sync.Mutex
	byQuery map[string]*list.Element // of *kept
	lru     list.List                // most recently used first
	// pending holds the queries waiting to be prepared for transactions
	// (see prepareLater), in order; preparing says whether a goroutine is
	// preparing them, and background counts it for close to wait for.
	pending    []string
	queued     map[string]bool
	preparing  bool
	background sync.WaitGroup
}

// kept is one cached statement. stmt is nil when the query could not be
// prepared (it then runs unprepared, which reports its error or runs a
// script of several statements). users counts calls running it now: an
// evicted statement closes when the last of them returns, since database/sql
// refuses a closed statement.
type kept struct {
	query   string
	stmt    *sql.Stmt
	users   int
	evicted bool
}

func newStatements(db *sql.DB, max int) *statements {
	return &statements{db: db, max: max, byQuery: map[string]*list.Element{}, queued: map[string]bool{}}
}

// acquire returns the kept statement of query, preparing it on first use.
// The caller must release it once its call returned.
func (s *statements) acquire(ctx context.Context, query string) *kept {
	s.mu.Lock()
	if el, ok := s.byQuery[query]; ok {
		s.lru.MoveToFront(el)
		k := el.Value.(*kept)
		k.users++
		s.mu.Unlock()
		return k
	}
	s.mu.Unlock()
	// Prepare outside the lock: a slow preparation (a PostgreSQL round
	// trip) must not stall the other queries.
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil && ctx.Err() != nil {
		// A request that went away says nothing about the query.
		return &kept{query: query, users: 1, evicted: true}
	}
	k := &kept{query: query, stmt: st, users: 1}
	s.mu.Lock()
	if el, ok := s.byQuery[query]; ok {
		// Another caller prepared it meanwhile: use theirs.
		s.lru.MoveToFront(el)
		theirs := el.Value.(*kept)
		theirs.users++
		s.mu.Unlock()
		if st != nil {
			st.Close()
		}
		return theirs
	}
	s.byQuery[query] = s.lru.PushFront(k)
	var closing []*sql.Stmt
	for s.lru.Len() > s.max {
		old := s.lru.Remove(s.lru.Back()).(*kept)
		delete(s.byQuery, old.query)
		old.evicted = true
		if old.users == 0 && old.stmt != nil {
			closing = append(closing, old.stmt)
		}
	}
	s.mu.Unlock()
	for _, st := range closing {
		st.Close()
	}
	return k
}

// kept returns the kept statement of query without preparing it, or nil.
// The caller must release a statement it got.
func (s *statements) kept(query string) *kept {
	s.mu.Lock()
	defer s.mu.Unlock()
	el, ok := s.byQuery[query]
	if !ok {
		return nil
	}
	s.lru.MoveToFront(el)
	k := el.Value.(*kept)
	k.users++
	return k
}

// prepareLater prepares query on the pool in the background, once, for
// the transactions that will run it next. One goroutine prepares the
// queries one after the other: a transaction's first run meets many new
// queries at once, and preparing each on its own goroutine took as many
// connections, up to the whole pool of a tenant that had just opened.
func (s *statements) prepareLater(query string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byQuery[query]; ok || s.queued[query] {
		return
	}
	s.queued[query] = true
	s.pending = append(s.pending, query)
	if s.preparing {
		return
	}
	s.preparing = true
	s.background.Go(s.preparePending)
}

// preparePending prepares the pending queries until none is left.
func (s *statements) preparePending() {
	for {
		s.mu.Lock()
		if len(s.pending) == 0 {
			s.preparing = false
			s.mu.Unlock()
			return
		}
		query := s.pending[0]
		s.pending = s.pending[1:]
		s.mu.Unlock()
		s.release(s.acquire(context.Background(), query))
		s.mu.Lock()
		delete(s.queued, query)
		s.mu.Unlock()
	}
}

func (s *statements) release(k *kept) {
	s.mu.Lock()
	k.users--
	last := k.evicted && k.users == 0
	s.mu.Unlock()
	if last && k.stmt != nil {
		k.stmt.Close()
	}
}

// len is the number of statements kept.
func (s *statements) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lru.Len()
}

// close closes every kept statement, when the DB closes.
func (s *statements) close() {
	s.background.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for el := s.lru.Front(); el != nil; el = el.Next() {
		if k := el.Value.(*kept); k.stmt != nil {
			k.stmt.Close()
		}
	}
	s.lru.Init()
	s.byQuery = map[string]*list.Element{}
}

// ExecContext runs query as the DB's kept statement, on the writer's
// connection on SQLite (ExecContext is for writes).
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	pool, stmts := db.writePool()
	k := stmts.acquire(ctx, query)
	defer stmts.release(k)
	if k.stmt == nil {
		return pool.ExecContext(ctx, query, args...)
	}
	return k.stmt.ExecContext(ctx, args...)
}

// QueryContext runs query as the DB's kept statement (a write returning
// rows on the writer's connection, as ExecContext).
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	pool, stmts := db.poolFor(query)
	k := stmts.acquire(ctx, query)
	defer stmts.release(k)
	if k.stmt == nil {
		return pool.QueryContext(ctx, query, args...)
	}
	return k.stmt.QueryContext(ctx, args...)
}

// QueryRowContext runs query as the DB's kept statement (a write
// returning a row on the writer's connection, as ExecContext).
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	pool, stmts := db.poolFor(query)
	k := stmts.acquire(ctx, query)
	defer stmts.release(k)
	if k.stmt == nil {
		return pool.QueryRowContext(ctx, query, args...)
	}
	return k.stmt.QueryRowContext(ctx, args...)
}

// poolFor is the pool and kept statements of a query: the writer's for
// one that starts as a write (INSERT, UPDATE, DELETE … RETURNING), the
// readers' otherwise.
func (db *DB) poolFor(query string) (*sql.DB, *statements) {
	if db.writes != nil && isWrite(query) {
		return db.writes, db.writeStmts
	}
	return db.DB, db.stmts
}

func isWrite(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n")
	for _, verb := range []string{"INSERT", "UPDATE", "DELETE", "REPLACE"} {
		if len(q) >= len(verb) && strings.EqualFold(q[:len(verb)], verb) {
			return true
		}
	}
	return false
}

// stmt returns the transaction's copy of the kept statement of query, or
// nil when the query runs unprepared. The copy belongs to the transaction
// and closes with it; the statement prepared on the transaction's
// connection stays with the kept one for the next use.
//
// A statement not kept yet is not prepared here: preparing takes a
// connection from the pool, which a transaction holding one must never wait
// for, since every connection may be held by transactions doing the same.
// The query then runs unprepared in the transaction, and is prepared on
// the pool in the background for the next one.
func (tx *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	k := tx.stmts.kept(query)
	if k == nil {
		tx.stmts.prepareLater(query)
		return nil
	}
	defer tx.stmts.release(k)
	if k.stmt == nil {
		return nil
	}
	return tx.Tx.StmtContext(ctx, k.stmt)
}

// statementContext is the context a statement of the transaction runs
// with. In a batch it is never cancelled: SQLite answers a cancelled
// statement by interrupting the connection, which rolls back the whole
// transaction, the other members' work with it. The member whose caller
// went away is rolled back to its savepoint once it returns instead.
func (tx *Tx) statementContext(ctx context.Context) context.Context {
	if tx.batched {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// ExecContext runs query as the DB's kept statement, in the transaction.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	ctx = tx.statementContext(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return tx.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query as the DB's kept statement, in the transaction.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	ctx = tx.statementContext(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return tx.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query as the DB's kept statement, in the
// transaction.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	ctx = tx.statementContext(ctx)
	if st := tx.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return tx.Tx.QueryRowContext(ctx, query, args...)
}
