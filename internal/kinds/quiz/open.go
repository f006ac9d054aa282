package quiz

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/versioned"
)

// Saving answers is most of a quiz's traffic: a class answering 16
// questions makes 16 saves for each start. A save needs the attempt's
// owner, questions, time limit and review setting, which never change once
// it started; whether it is still open is a condition of the save's own
// write (saveAnswer). So each tenant keeps the open attempts it started or
// saved answers to, until their time is over or they end here, and a save
// reads nothing before it writes. An attempt ended by another replica is
// still kept here: its saves are refused by the write, which then reads
// the attempt to say why.
const openEntries = 4096

type openKey struct{}

func openAttempts(t *platform.Tenant) *versioned.Cache[int64, Attempt] {
	return t.Local(openKey{}, func() any {
		return versioned.New[int64, Attempt](openEntries)
	}).(*versioned.Cache[int64, Attempt])
}

// keepOpen keeps an open attempt until its time is over. Kept attempts are
// shared: nothing may change them.
func keepOpen(t *platform.Tenant, a Attempt, now time.Time) {
	if a.EndedAt == nil {
		openAttempts(t).Put(a.ID, 0, a.EndsAt, now, a)
	}
}

// forgetOpen drops an attempt that ended.
func forgetOpen(t *platform.Tenant, id int64, now time.Time) {
	openAttempts(t).Put(id, 0, now, now, Attempt{})
}

// learnerAttempts is attemptsOf asked of the tenant's database. On
// PostgreSQL the reads of concurrent starts share one query
// (sqldb.Coalescer): a class starts its exam at once.
func learnerAttempts(ctx context.Context, t *platform.Tenant, topicID, userID int64) ([]Attempt, error) {
	if t.DB.Dialect != sqldb.Postgres {
		return attemptsOf(ctx, t.DB, topicID, userID)
	}
	return attemptReads(t).Get(ctx, learnerTopic{topic: topicID, user: userID})
}

type attemptReadsKey struct{}

func attemptReads(t *platform.Tenant) *sqldb.Coalescer[learnerTopic, []Attempt] {
	return platform.Coalesced(t, attemptReadsKey{}, attemptsOfMany)
}
