package cmi5

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/sqldb"
)

// RegistrationsOf names the learner's registration of each of some topics
// they launched, by topic, in one query: the gradebook (package reports)
// counts the statements of each through the LRS.
func RegistrationsOf(ctx context.Context, q sqldb.Querier, userID int64, topicIDs []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(topicIDs) == 0 {
		return out, nil
	}
	a := sqldb.Args{userID}
	rows, err := q.QueryContext(ctx, `SELECT DISTINCT topic_id, registration FROM cmi5_sessions
		WHERE user_id = $1 AND topic_id IN (`+a.List(topicIDs)+`)`, a...)
	if err != nil {
		return nil, fmt.Errorf("cmi5: registrations of user %d: %w", userID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var topicID int64
		var reg string
		if err := rows.Scan(&topicID, &reg); err != nil {
			return nil, fmt.Errorf("cmi5: scan registration: %w", err)
		}
		out[topicID] = reg
	}
	return out, rows.Err()
}
