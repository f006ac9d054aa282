package learning

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// PingTogether writes pings, each of a learner, course and topic, at one
// time in one batch, as concurrent pings on PostgreSQL are, and returns
// each one's error.
func PingTogether(db *sqldb.DB, at time.Time, pings [][3]int64) []error {
	var batch []*queuedPing
	for _, p := range pings {
		batch = append(batch, &queuedPing{ctx: context.Background(), at: at, userID: p[0], courseID: p[1], topicID: p[2],
			done: make(chan struct{})})
	}
	writePings(db, batch)
	errs := make([]error, len(batch))
	for i, p := range batch {
		<-p.done
		errs[i] = p.err
	}
	return errs
}
