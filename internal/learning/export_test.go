package learning

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// PingTogether writes pings, each of a learner, course and topic, at one
// time in one batch, as concurrent pings on PostgreSQL are, and reports
// which ones it applied; deadline is the deadline of the courses they
// start.
func PingTogether(db *sqldb.DB, at time.Time, deadline *time.Time, pings [][3]int64) []bool {
	var batch []*queuedPing
	for _, p := range pings {
		batch = append(batch, &queuedPing{ctx: context.Background(), at: at, userID: p[0], courseID: p[1], topicID: p[2],
			deadline: deadline, done: make(chan struct{})})
	}
	writePings(db, batch)
	applied := make([]bool, len(batch))
	for i, p := range batch {
		<-p.done
		applied[i] = p.applied
	}
	return applied
}
