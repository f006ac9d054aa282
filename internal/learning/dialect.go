package learning

import "github.com/lms-platform/lms/internal/sqldb"

// epochSeconds is the SQL for the whole Unix seconds of a timestamp
// column, rounded down, in the dialect.
func epochSeconds(d sqldb.Dialect, column string) string {
	if d == sqldb.Postgres {
		return "CAST(FLOOR(EXTRACT(EPOCH FROM " + column + ")) AS BIGINT)"
	}
	return "CAST(strftime('%s', " + column + ") AS INTEGER)"
}
