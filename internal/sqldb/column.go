package sqldb

import "database/sql"

// Column reads the single column of every row a query returned into a
// slice (empty, not nil, when there are none) and closes the rows. It
// takes the query's results directly:
//
//	tags, err := sqldb.Column[string](q.QueryContext(ctx, `SELECT tag FROM ...`))
func Column[T any](rows *sql.Rows, err error) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		var v T
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
