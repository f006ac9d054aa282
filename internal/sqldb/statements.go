package sqldb

import (
	"context"
	"database/sql"
	"sync"
)

// Parsing a statement costs SQLite more than running the small queries of
// the hottest routes (a learner's program and pings, the H5P player), so
// those routes use a Querier that prepares each distinct query once per
// tenant database and reuses it (database/sql prepares it again on each
// pooled connection as needed).

// maxStatements bounds the statements kept per tenant; queries beyond it
// run unprepared.
const maxStatements = 64

// Statements is a Querier that prepares each distinct query once.
type Statements struct {
	db *DB
	mu sync.Mutex
	// byQuery holds a prepared statement, or nil when preparing failed.
	byQuery map[string]*sql.Stmt
}

// NewStatements wraps db in a Querier that prepares each distinct query
// once and reuses it.
func NewStatements(db *DB) *Statements {
	return &Statements{db: db, byQuery: map[string]*sql.Stmt{}}
}

func (s *Statements) stmt(ctx context.Context, query string) *sql.Stmt {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.byQuery[query]; ok {
		return st
	}
	if len(s.byQuery) >= maxStatements {
		return nil
	}
	st, err := s.db.PrepareContext(ctx, query)
	if err != nil {
		// Leave the query to run unprepared, which reports the error; a
		// request that went away says nothing about the query.
		if ctx.Err() == nil {
			s.byQuery[query] = nil
		}
		return nil
	}
	s.byQuery[query] = st
	return st
}

func (s *Statements) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := s.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

func (s *Statements) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, query, args...)
}

func (s *Statements) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, query, args...)
}
