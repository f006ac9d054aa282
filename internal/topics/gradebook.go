package topics

import (
	"context"
	"fmt"

	"github.com/lms-platform/lms/internal/sqldb"
)

// SubmissionsOf lists the files a learner submitted to some topics, by
// topic, oldest first, in one query: the project tracks of the gradebook
// (package reports).
func SubmissionsOf(ctx context.Context, q sqldb.Querier, userID int64, topicIDs []int64) (map[int64][]Submission, error) {
	out := map[int64][]Submission{}
	if len(topicIDs) == 0 {
		return out, nil
	}
	a := sqldb.Args{userID}
	rows, err := q.QueryContext(ctx, `SELECT `+submissionColumns+` FROM project_submissions
		WHERE user_id = $1 AND topic_id IN (`+a.List(topicIDs)+`) ORDER BY id`, a...)
	if err != nil {
		return nil, fmt.Errorf("topics: submissions of user %d: %w", userID, err)
	}
	defer rows.Close()
	for rows.Next() {
		s, err := scanSubmission(rows)
		if err != nil {
			return nil, fmt.Errorf("topics: scan submission: %w", err)
		}
		s.CreatedAt = s.CreatedAt.UTC()
		out[s.TopicID] = append(out[s.TopicID], s)
	}
	return out, rows.Err()
}
