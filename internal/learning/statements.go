package learning

import (
	"context"
	"database/sql"
	"sync"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The learner routes that run most (program, ping) run a few fixed
// queries, their own and those of packages courses and topics, which all
// take a sqldb.Querier. Parsing a statement costs SQLite more than running
// these, so those routes pass a Querier that prepares each distinct query
// once per tenant and reuses it (database/sql prepares it again on each
// pooled connection as needed).

// maxStatements bounds the statements kept per tenant; queries beyond it
// run unprepared.
const maxStatements = 64

type statements struct {
	db *sqldb.DB
	mu sync.Mutex
	// byQuery holds a prepared statement, or nil when preparing failed.
	byQuery map[string]*sql.Stmt
}

type statementsKey struct{}

// prepared returns the tenant's statement-caching Querier.
func prepared(t *platform.Tenant) *statements {
	return t.Local(statementsKey{}, func() any {
		return &statements{db: t.DB, byQuery: map[string]*sql.Stmt{}}
	}).(*statements)
}

func (s *statements) stmt(ctx context.Context, query string) *sql.Stmt {
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

func (s *statements) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := s.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return s.db.ExecContext(ctx, query, args...)
}

func (s *statements) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, query, args...)
}

func (s *statements) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, query, args...)
}
