package learning

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Group commit of pings, on PostgreSQL. A ping is two small upserts, but
// its commit waits for PostgreSQL to flush the WAL to disk, which takes a
// millisecond or more: one commit per ping leaves the server waiting on
// the disk. So the pings that arrive while a batch is being written go
// together in the next one, a single statement that applies all of them
// and commits once, and each ping is answered only after that commit, so
// an acknowledged ping is on disk. The first pings of learners who have
// not started the course start it together too, in one transaction after
// that statement (startPings): a school's first morning is thousands of
// course starts. SQLite batches every transaction already (sqldb's group
// commit).
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
	// deadline is the learner's deadline in the course should this ping
	// start it (deadlineFor).
	deadline *time.Time
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
// when the learner's deadline in the course is ahead, starting the course
// if needed with deadline (applied reports it); otherwise it writes
// nothing.
func pingBatched(ctx context.Context, t *platform.Tenant, now time.Time, userID, courseID, topicID int64,
	deadline *time.Time) (applied bool, status int, seconds int64, err error) {
	p := &queuedPing{ctx: ctx, at: now, userID: userID, courseID: courseID, topicID: topicID, deadline: deadline,
		done: make(chan struct{})}
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
// first; it returns the pings applied.
var pingsSQL = `WITH pinged AS (
		SELECT p.* FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::timestamptz[])
			AS p(user_id, topic_id, course_id, at)
		JOIN course_progress cp ON cp.user_id = p.user_id AND cp.course_id = p.course_id
		WHERE cp.started_at IS NOT NULL AND (cp.deadline IS NULL OR cp.deadline > p.at)
	)` + applyPinged + `
	SELECT user_id, status, seconds FROM applied`

// startPingsSQL starts the course for the learners of a batch who have
// not started it, as startCourse does, and applies their pings as
// pingsSQL does. Its arrays are those of pingsSQL and the deadlines the
// starts give. A learner whose fresh deadline has already passed, or who
// started meanwhile, is left out: the path of a single ping refuses the
// ping or applies it. It returns the pings applied, with the deadline each
// start stored.
var startPingsSQL = `WITH input AS (
		SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[])
			AS p(user_id, topic_id, course_id, at, deadline)
	), started AS (
		INSERT INTO course_progress AS cp (user_id, course_id, started_at, deadline, updated_at)
		SELECT user_id, course_id, at, deadline, at FROM input WHERE deadline IS NULL OR deadline > at ORDER BY user_id
		ON CONFLICT (user_id, course_id) DO UPDATE SET started_at = excluded.started_at, deadline = excluded.deadline,
			updated_at = excluded.updated_at
		WHERE cp.started_at IS NULL
		RETURNING user_id, course_id, deadline
	), pinged AS (
		SELECT i.user_id, i.topic_id, i.course_id, i.at FROM input i
		JOIN started s ON s.user_id = i.user_id AND s.course_id = i.course_id
	)` + applyPinged + `
	SELECT a.user_id, a.status, a.seconds, s.deadline FROM applied a JOIN started s ON s.user_id = a.user_id`

// applyPinged is the part of the ping statements that applies the pings
// of the CTE pinged, as ping does, into the CTE applied.
var applyPinged = fmt.Sprintf(`, counted AS (
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
	), applied AS (
		INSERT INTO topic_progress AS tp (user_id, topic_id, course_id, status, seconds, started_at, last_ping_at,
			updated_at)
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
		RETURNING user_id, status, seconds
	)`,
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
	// The batch outlives any one caller's request.
	ctx := context.Background()
	if err := applyPings(ctx, db, batch); err != nil {
		for _, p := range batch {
			p.applied = false
		}
	} else if fresh := slices.DeleteFunc(slices.Clone(batch), func(p *queuedPing) bool { return p.applied }); len(fresh) > 0 {
		startPings(ctx, db, fresh)
	}
	for _, p := range batch {
		close(p.done)
	}
}

// pingArrays are the arrays of the ping statements' first four
// parameters.
func pingArrays(batch []*queuedPing) (users, topicIDs, courseIDs []int64, ats []time.Time) {
	users, topicIDs, courseIDs, ats = make([]int64, len(batch)), make([]int64, len(batch)), make([]int64, len(batch)),
		make([]time.Time, len(batch))
	for i, p := range batch {
		users[i], topicIDs[i], courseIDs[i], ats[i] = p.userID, p.topicID, p.courseID, p.at
	}
	return users, topicIDs, courseIDs, ats
}

// startPings starts the course for the learners of fresh, whose pings
// the batch statement did not apply, and applies their pings, in one
// transaction with their CourseStarted events (startPingsSQL). The pings
// it leaves, or all of them when it fails, take the path of a single ping.
func startPings(ctx context.Context, db *sqldb.DB, fresh []*queuedPing) {
	users, topicIDs, courseIDs, ats := pingArrays(fresh)
	deadlines := make([]*time.Time, len(fresh))
	for i, p := range fresh {
		deadlines[i] = p.deadline
	}
	type outcome struct {
		status   int
		seconds  int64
		deadline *time.Time
	}
	var started map[int64]outcome
	err := db.Tx(ctx, func(tx *sqldb.Tx) error {
		started = map[int64]outcome{}
		rows, err := tx.QueryContext(ctx, startPingsSQL, users, topicIDs, courseIDs, ats, deadlines)
		if err != nil {
			return fmt.Errorf("learning: start %d courses: %w", len(fresh), err)
		}
		for rows.Next() {
			var user int64
			var o outcome
			var deadline sql.NullTime
			if err := rows.Scan(&user, &o.status, &o.seconds, &deadline); err != nil {
				rows.Close()
				return err
			}
			o.deadline = timePtr(deadline)
			started[user] = o
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, p := range fresh {
			if o, ok := started[p.userID]; ok {
				if err := emit(ctx, tx, p.at, events.CourseStarted, p.userID, map[string]any{"course_id": p.courseID,
					"deadline": o.deadline}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return
	}
	for _, p := range fresh {
		if o, ok := started[p.userID]; ok {
			p.applied, p.status, p.seconds = true, o.status, o.seconds
		}
	}
}

// applyPings runs pingsSQL and sets each ping's status and seconds.
func applyPings(ctx context.Context, db *sqldb.DB, batch []*queuedPing) error {
	users, topicIDs, courseIDs, ats := pingArrays(batch)
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
