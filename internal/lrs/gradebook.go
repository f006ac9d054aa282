package lrs

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// RegistrationSummary counts the statements stored in one registration.
type RegistrationSummary struct {
	Statements int
	// LastVerb is the verb id of the latest statement.
	LastVerb string
	LastAt   time.Time
}

// Registrations counts the statements of some registrations, voided ones
// left out, by registration, in one query: the cmi5 tracks of the
// gradebook (package reports).
func Registrations(ctx context.Context, q sqldb.Querier, regs []string) (map[string]RegistrationSummary, error) {
	out := map[string]RegistrationSummary{}
	if len(regs) == 0 {
		return out, nil
	}
	var a sqldb.Args
	ph := make([]string, len(regs))
	for i, r := range regs {
		ph[i] = a.Add(r)
	}
	rows, err := q.QueryContext(ctx, `SELECT registration, verb, stored FROM lrs_statements
		WHERE registration IN (`+strings.Join(ph, ", ")+`) AND voided = `+a.Add(false)+` ORDER BY seq`, a...)
	if err != nil {
		return nil, fmt.Errorf("lrs: statements of registrations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var reg, verb string
		var at time.Time
		if err := rows.Scan(&reg, &verb, &at); err != nil {
			return nil, fmt.Errorf("lrs: scan statement: %w", err)
		}
		s := out[reg]
		s.Statements++
		s.LastVerb, s.LastAt = verb, at.UTC()
		out[reg] = s
	}
	return out, rows.Err()
}

// Stored is one statement as stored: its JSON and when the LRS stored it.
type Stored struct {
	Body   []byte
	Stored time.Time
}

// RegistrationStatements lists the latest statements of a registration,
// voided ones left out, at most limit, oldest first, in one query: the
// cmi5 track of one learner's topic in the gradebook (package reports).
func RegistrationStatements(ctx context.Context, q sqldb.Querier, reg string, limit int) ([]Stored, error) {
	rows, err := q.QueryContext(ctx, `SELECT body, stored FROM lrs_statements WHERE registration = $1 AND voided = $2
		ORDER BY seq DESC LIMIT $3`, reg, false, limit)
	if err != nil {
		return nil, fmt.Errorf("lrs: statements of a registration: %w", err)
	}
	defer rows.Close()
	var out []Stored
	for rows.Next() {
		var s Stored
		var body string
		if err := rows.Scan(&body, &s.Stored); err != nil {
			return nil, fmt.Errorf("lrs: scan statement: %w", err)
		}
		s.Body, s.Stored = []byte(body), s.Stored.UTC()
		out = append(out, s)
	}
	slices.Reverse(out)
	return out, rows.Err()
}
