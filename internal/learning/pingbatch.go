package learning

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Group commit of pings, on PostgreSQL. A ping is two small upserts, but
// its commit waits for PostgreSQL to flush the WAL to disk, which takes a
// millisecond or more: one commit per ping leaves the server waiting on
// the disk. So the pings that arrive while a batch is being written go
// together in the next one, a single statement that applies all of them
// and commits once, and each ping is answered only after that commit, so
// an acknowledged ping is on disk. SQLite batches every transaction
// already (sqldb's group commit).
//
// No goroutine waits idle for a batch: a caller whose ping is queued
// either sees it done or takes the lead, writes what is queued and hands
// the lead on, as sqldb's group commit does.

// maxPingBatch bounds the pings of one statement.
const maxPingBatch = 256

// pingQueue is a tenant's pings waiting to be written.
type pingQueue struct {
	// lead is held (one value in a channel of one) by the caller writing
	// a batch.
	lead  chan struct{}
	mu    sync.Mutex
	queue []*queuedPing
}

// queuedPing is one ping waiting for its batch, and its outcome.
type queuedPing struct {
	ctx                       context.Context
	at                        time.Time
	userID, courseID, topicID int64
	// Set before done closes; applied is false when the ping was left to
	// the caller (see pingsSQL).
	applied bool
	status  int
	seconds int64
	err     error
	done    chan struct{}
}

type pingQueueKey struct{}

func pingQueueOf(t *platform.Tenant) *pingQueue {
	return t.Local(pingQueueKey{}, func() any {
		return &pingQueue{lead: make(chan struct{}, 1)}
	}).(*pingQueue)
}

// pingBatched records a ping (see ping) in the next batch of the tenant's
// queue and returns once the batch committed. It applies the ping only
// when the learner has started the course and its deadline is ahead
// (applied reports it); otherwise it writes nothing.
func pingBatched(ctx context.Context, t *platform.Tenant, now time.Time, userID, courseID, topicID int64) (applied bool,
	status int, seconds int64, err error) {
	p := &queuedPing{ctx: ctx, at: now, userID: userID, courseID: courseID, topicID: topicID, done: make(chan struct{})}
	q := pingQueueOf(t)
	q.mu.Lock()
	q.queue = append(q.queue, p)
	q.mu.Unlock()
	for {
		select {
		case <-p.done:
			return p.applied, p.status, p.seconds, p.err
		case q.lead <- struct{}{}:
			writePings(t.DB, q.take())
			<-q.lead
		}
	}
}

// take removes the next batch from the queue: at most one ping of each
// learner, as one statement may change a row only once; a learner's later
// pings stay queued, in order, for the next batch.
func (q *pingQueue) take() []*queuedPing {
	q.mu.Lock()
	defer q.mu.Unlock()
	var batch, rest []*queuedPing
	seen := map[int64]bool{}
	for _, p := range q.queue {
		if len(batch) < maxPingBatch && !seen[p.userID] {
			seen[p.userID] = true
			batch = append(batch, p)
		} else {
			rest = append(rest, p)
		}
	}
	q.queue = rest
	return batch
}

// pingsSQL applies a batch of pings as ping does, learner by learner, in
// one statement and so in one transaction. Its arrays are the learners'
// ids, the topics, their courses and the times of the pings. It applies
// only the pings of learners who started the course and whose deadline
// has not passed, which saves each ping reading its course_progress row
// first; it returns the pings applied, and the others take the path of a
// single ping, which starts the course or refuses the ping.
var pingsSQL = fmt.Sprintf(`WITH pinged AS (
		SELECT p.* FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::timestamptz[])
			AS p(user_id, topic_id, course_id, at)
		JOIN course_progress cp ON cp.user_id = p.user_id AND cp.course_id = p.course_id
		WHERE cp.started_at IS NOT NULL AND (cp.deadline IS NULL OR cp.deadline > p.at)
	), counted AS (
		INSERT INTO learner_time AS l (user_id, counted_until, credit)
		SELECT user_id, at, 0 FROM pinged ORDER BY user_id
		ON CONFLICT (user_id) DO UPDATE SET
			credit = CASE
				WHEN l.counted_until >= EXCLUDED.counted_until THEN 0
				WHEN l.counted_until > EXCLUDED.counted_until - interval '%[1]d seconds' THEN
					%[2]s - %[3]s
				ELSE %[1]d END,
			counted_until = GREATEST(l.counted_until, EXCLUDED.counted_until)
		RETURNING user_id, credit
	)
	INSERT INTO topic_progress AS tp (user_id, topic_id, course_id, status, seconds, started_at, last_ping_at, updated_at)
	SELECT p.user_id, p.topic_id, p.course_id, 2, c.credit, p.at, p.at, p.at
		FROM pinged p JOIN counted c ON c.user_id = p.user_id ORDER BY p.user_id
	ON CONFLICT (user_id, topic_id) DO UPDATE SET
		seconds = tp.seconds + EXCLUDED.seconds,
		last_ping_at = CASE
			WHEN tp.last_ping_at IS NULL OR tp.last_ping_at < EXCLUDED.last_ping_at THEN EXCLUDED.last_ping_at
			ELSE tp.last_ping_at END,
		status = CASE WHEN tp.status = 1 THEN 1 ELSE 2 END,
		started_at = COALESCE(tp.started_at, EXCLUDED.started_at),
		updated_at = EXCLUDED.updated_at
	RETURNING user_id, status, seconds`,
	int64(maxPingCredit/time.Second), epochSeconds(sqldb.Postgres, "EXCLUDED.counted_until"),
	epochSeconds(sqldb.Postgres, "l.counted_until"))

// writePings writes a batch and tells each ping its outcome. When the
// statement fails (a learner or topic deleted meanwhile, say), nothing of
// it was written and each ping is left to its caller, which writes it
// on its own, so that only the failing one fails.
func writePings(db *sqldb.DB, batch []*queuedPing) {
	batch = slices.DeleteFunc(batch, func(p *queuedPing) bool {
		if p.err = p.ctx.Err(); p.err != nil {
			close(p.done)
			return true
		}
		return false
	})
	if len(batch) == 0 {
		return
	}
	// Rows are locked in the order of the learners, as every batch does.
	slices.SortFunc(batch, func(a, b *queuedPing) int { return cmp.Compare(a.userID, b.userID) })
	users, topicIDs, courseIDs, ats := make([]int64, len(batch)), make([]int64, len(batch)), make([]int64, len(batch)),
		make([]time.Time, len(batch))
	for i, p := range batch {
		users[i], topicIDs[i], courseIDs[i], ats[i] = p.userID, p.topicID, p.courseID, p.at
	}
	// The batch outlives any one caller's request.
	ctx := context.Background()
	if err := applyPings(ctx, db, batch, users, topicIDs, courseIDs, ats); err != nil {
		for _, p := range batch {
			p.applied = false
		}
	}
	for _, p := range batch {
		close(p.done)
	}
}

// applyPings runs pingsSQL and sets each ping's status and seconds.
func applyPings(ctx context.Context, db *sqldb.DB, batch []*queuedPing, users, topicIDs, courseIDs []int64,
	ats []time.Time) error {
	rows, err := db.QueryContext(ctx, pingsSQL, users, topicIDs, courseIDs, ats)
	if err != nil {
		return fmt.Errorf("learning: ping %d topics: %w", len(batch), err)
	}
	defer rows.Close()
	byUser := make(map[int64]*queuedPing, len(batch))
	for _, p := range batch {
		byUser[p.userID] = p
	}
	for rows.Next() {
		var user int64
		var status int
		var seconds int64
		if err := rows.Scan(&user, &status, &seconds); err != nil {
			return err
		}
		if p := byUser[user]; p != nil {
			p.applied, p.status, p.seconds = true, status, seconds
		}
	}
	return rows.Err()
}
