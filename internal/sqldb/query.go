package sqldb

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Args builds the arguments of a query with numbered placeholders, for
// queries whose conditions depend on the input.
type Args []any

// Add appends v and returns its placeholder ("$3").
func (a *Args) Add(v any) string {
	*a = append(*a, v)
	return "$" + strconv.Itoa(len(*a))
}

// List appends each id and returns their placeholders ("$3, $4, $5").
func (a *Args) List(ids []int64) string {
	ph := make([]string, len(ids))
	for i, id := range ids {
		ph[i] = a.Add(id)
	}
	return strings.Join(ph, ", ")
}

var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Contains is a LIKE pattern matching value anywhere, with LIKE's
// wildcards in value taken literally; the query must say ESCAPE '\'.
func Contains(value string) string {
	return "%" + likeEscaper.Replace(strings.TrimSpace(value)) + "%"
}

// AnyOf returns the condition that column holds one of ids, and the one
// argument it takes at placeholder $n: however many the ids, the query's
// text stays the same, so its statement is prepared once and kept. It is
// an array on PostgreSQL and a JSON array on SQLite.
func AnyOf(d Dialect, column string, n int, ids []int64) (cond string, arg any) {
	if d == Postgres {
		return fmt.Sprintf("%s = ANY($%d)", column, n), ids
	}
	b, _ := json.Marshal(ids)
	return fmt.Sprintf("%s IN (SELECT value FROM json_each($%d))", column, n), string(b)
}

// UniqueIDs drops repeated ids, keeping the first order.
func UniqueIDs(ids []int64) []int64 {
	seen := make(map[int64]bool, len(ids))
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// SameID reports whether two ids of a nullable column, nil for NULL, are
// equal.
func SameID(a, b *int64) bool { return (a == nil && b == nil) || (a != nil && b != nil && *a == *b) }

// Where joins conditions into a WHERE clause with AND; no conditions give
// an empty string.
func Where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

// Direction is the ORDER BY direction, with its leading space.
func Direction(desc bool) string {
	if desc {
		return " DESC"
	}
	return " ASC"
}
