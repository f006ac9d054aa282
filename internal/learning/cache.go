package learning

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/versioned"
)

// Programs are read far more often than courses change, and reading every
// topic of a course is most of a program's cost. So each tenant keeps the
// rendered programs of its courses (without anyone's progress) in memory,
// checked on every read against program_versions, a per-course counter
// that database triggers move whenever the course, its authors or tags, or
// one of its lessons or topics changes, whoever changes it, and whenever a
// setting changes (a setting can switch a kind off). An entry also expires
// when a lesson's window opens or closes, and after programTTL, well
// within the lifetime of the signed file links it holds.
const (
	programTTL     = 5 * time.Minute
	programEntries = 512
)

// staticProgram is the part of a program that is the same for everyone.
type staticProgram struct {
	course  courses.Course
	tree    *tree
	lessons []LearnerLesson
	// encoded holds the lessons encoded for ProgramJSON; anonymous is
	// their encoding with no one's progress.
	encoded   []lessonJSON
	anonymous []byte
	// expires is when the entry stops being served: answers built from it
	// go with it.
	expires time.Time
}

type programCacheKey struct{}

func cacheOf(t *platform.Tenant) *versioned.Cache[int64, *staticProgram] {
	return t.Local(programCacheKey{}, func() any {
		return versioned.New[int64, *staticProgram](programEntries)
	}).(*versioned.Cache[int64, *staticProgram])
}

// programVersion reads the course's change counter. It is read before the
// lessons and topics, so a change committed in between makes the entry
// stale rather than wrongly fresh.
func programVersion(ctx context.Context, q sqldb.Querier, courseID int64) (int64, error) {
	var v int64
	err := q.QueryRowContext(ctx, `SELECT version FROM program_versions WHERE course_id = $1`, courseID).Scan(&v)
	if sqldb.NotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("learning: program version: %w", err)
	}
	return v, nil
}

// static returns the course and the shared part of its program, from the
// cache when it is current. An unknown course is NotFound.
func (s *Service) static(ctx context.Context, t *platform.Tenant, q sqldb.Querier, courseID int64, now time.Time) (*staticProgram, error) {
	version, err := programVersion(ctx, q, courseID)
	if err != nil {
		return nil, err
	}
	return s.staticAt(ctx, t, q, courseID, version, now)
}

// staticAt is static with the course's change counter already read.
func (s *Service) staticAt(ctx context.Context, t *platform.Tenant, q sqldb.Querier, courseID, version int64,
	now time.Time) (*staticProgram, error) {
	cache := cacheOf(t)
	build := func() (*staticProgram, time.Time, error) {
		e, err := s.buildStatic(ctx, t, q, courseID, now)
		if err != nil {
			return nil, time.Time{}, err
		}
		return e, e.expires, nil
	}
	if _, inTx := q.(*sqldb.Tx); inTx {
		// Built from what the transaction sees, so not shared with
		// readers outside it while it is built.
		if e, ok := cache.Get(courseID, version, now); ok {
			return e, nil
		}
		e, expires, err := build()
		if err == nil {
			cache.Put(courseID, version, expires, now, e)
		}
		return e, err
	}
	return cache.Load(courseID, version, now, build)
}

// buildStatic reads the course and its program and renders the shared
// part of its answer.
func (s *Service) buildStatic(ctx context.Context, t *platform.Tenant, q sqldb.Querier, courseID int64,
	now time.Time) (*staticProgram, error) {
	c, err := courses.ByID(ctx, q, courseID)
	if err != nil {
		return nil, err
	}
	tr, err := loadTree(ctx, q, courseID, now)
	if err != nil {
		return nil, err
	}
	// Settings can switch kinds off; their changes move every course's
	// program counter, so the entry goes with them.
	off, err := s.switchedOff(ctx, t)
	if err != nil {
		return nil, err
	}
	e := &staticProgram{course: c, tree: tr}
	if e.lessons, err = s.renderLessons(t, now, tr.roots, off); err != nil {
		return nil, err
	}
	if e.encoded, err = encodeLessons(e.lessons); err != nil {
		return nil, err
	}
	e.anonymous = appendLessons(nil, e.encoded, nil)
	expires := now.Add(programTTL)
	tr.walk(func(n *lessonNode) {
		for _, edge := range []*time.Time{n.ActiveFrom, n.ActiveTo} {
			if edge != nil && edge.After(now) && edge.Before(expires) {
				expires = *edge
			}
		}
	})
	e.expires = expires
	return e, nil
}

// withProgress copies the shared lessons with the learner's progress in
// each topic; the cached lessons are never changed.
func withProgress(lessons []LearnerLesson, progress map[int64]topicProgress) []LearnerLesson {
	out := make([]LearnerLesson, len(lessons))
	for i, l := range lessons {
		out[i] = l
		out[i].Topics = make([]LearnerTopic, len(l.Topics))
		states := make([]TopicState, len(l.Topics))
		for j, topic := range l.Topics {
			tp := progress[topic.ID]
			states[j] = TopicState{Status: tp.Status, Seconds: tp.Seconds}
			out[i].Topics[j] = topic
			out[i].Topics[j].Progress = &states[j]
		}
		out[i].Lessons = withProgress(l.Lessons, progress)
	}
	return out
}

// A signed-in learner reads the same program again and again (every page
// of the player), and splicing their progress into 200 encoded topics, with
// the queries of their rows and of the access rule, is most of what is left
// of a read. So each tenant also keeps its learners' last answers whole,
// with the access rule's answer for them, checked on every read in one
// query against three counters that database triggers move: the course's
// program counter (the answer must come from the current shared entry),
// its access counter (program_versions.access: the course's assignments,
// and any membership or group-tree change) and progress_versions, one per
// learner and course, which moves whenever one of the learner's progress
// rows in the course changes. The parts of the access rule that need no
// query (roles, the course's status) are asked again on every read; the
// assignment is kept until its counter moves or the first of the learner's
// assignments ends. Entries are bounded in number: a large course's answer
// is about 75 KB.
const answerEntries = 256

type answerKey struct{ user, course int64 }

// learnerAnswer is a learner's encoded program, the shared entry and
// access counter it was built at, and the learner's assignment to the
// course as the access rule found it (when it asked).
type learnerAnswer struct {
	static *staticProgram
	body   *httpx.Body
	access int64
	// asked tells whether the rule asked for the assignment; assigned is
	// its answer, which holds until until.
	asked, assigned bool
	until           time.Time
}

type answerCacheKey struct{}

func answersOf(t *platform.Tenant) *versioned.Cache[answerKey, learnerAnswer] {
	return t.Local(answerCacheKey{}, func() any {
		return versioned.New[answerKey, learnerAnswer](answerEntries)
	}).(*versioned.Cache[answerKey, learnerAnswer])
}

// counters are what a learner's kept answer is checked against.
type counters struct{ program, access, progress int64 }

// learnerCounters reads the course's program and access counters and the
// learner's progress counter in it (0 before any change). They are read
// before anything built from them. Asked of the tenant's database on PostgreSQL,
// the reads of concurrent requests go in one query (sqldb.Coalescer):
// there a query's round trip and fixed cost are most of a kept read.
func learnerCounters(ctx context.Context, t *platform.Tenant, q sqldb.Querier, userID, courseID int64) (counters, error) {
	key := answerKey{user: userID, course: courseID}
	if db, ok := q.(*sqldb.DB); ok && db == t.DB && db.Dialect == sqldb.Postgres {
		return countersOf(t).Get(ctx, key)
	}
	var c counters
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(p.version), 0), COALESCE(MAX(p.access), 0),
		COALESCE((SELECT version FROM progress_versions WHERE user_id = $1 AND course_id = $2), 0)
		FROM program_versions p WHERE p.course_id = $2`, userID, courseID).Scan(&c.program, &c.access, &c.progress)
	if err != nil {
		return counters{}, fmt.Errorf("learning: learner counters: %w", err)
	}
	return c, nil
}

type countersKey struct{}

func countersOf(t *platform.Tenant) *sqldb.Coalescer[answerKey, counters] {
	return platform.Coalesced(t, countersKey{}, manyCounters)
}

// manyCounters is learnerCounters for several learners and courses in one
// PostgreSQL query.
func manyCounters(ctx context.Context, db *sqldb.DB, keys []answerKey) (map[answerKey]counters, error) {
	users := make([]int64, len(keys))
	courseIDs := make([]int64, len(keys))
	for i, k := range keys {
		users[i], courseIDs[i] = k.user, k.course
	}
	rows, err := db.QueryContext(ctx, `SELECT k.user_id, k.course_id,
		COALESCE(p.version, 0), COALESCE(p.access, 0), COALESCE(v.version, 0)
		FROM unnest($1::bigint[], $2::bigint[]) AS k(user_id, course_id)
		LEFT JOIN program_versions p ON p.course_id = k.course_id
		LEFT JOIN progress_versions v ON v.user_id = k.user_id AND v.course_id = k.course_id`, users, courseIDs)
	if err != nil {
		return nil, fmt.Errorf("learning: learner counters: %w", err)
	}
	defer rows.Close()
	out := make(map[answerKey]counters, len(keys))
	for rows.Next() {
		var k answerKey
		var c counters
		if err := rows.Scan(&k.user, &k.course, &c.program, &c.access, &c.progress); err != nil {
			return nil, fmt.Errorf("learning: learner counters: %w", err)
		}
		out[k] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("learning: learner counters: %w", err)
	}
	return out, nil
}
