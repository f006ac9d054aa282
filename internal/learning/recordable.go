package learning

import (
	"context"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
	"github.com/lms-platform/lms/internal/versioned"
)

// A learner on a topic pings every few seconds, and each ping (and each
// quiz start) first asks whether they may record progress there: which
// course holds the topic, the course's program, and the learner's
// assignment. Asked of the database each time, that was three queries
// before the write, most of a ping's cost on PostgreSQL. So each tenant
// keeps, beside its programs, the course of each topic recently pinged and
// its learners' assignments, and a check is one query of the course's two
// counters (program_versions: version and access).
//
// A topic's course is only a hint: a topic can move to another course,
// which moves both courses' program counters, so the hint is taken only
// when the current program of that course holds the topic, and read again
// otherwise. A learner's assignment is kept against the course's access
// counter, as their program answers are (see answerEntries), and until the
// first of their assignments ends.
const (
	topicCourseEntries = 8192
	assignmentEntries  = 8192
)

type topicCourseKey struct{}

func topicCoursesOf(t *platform.Tenant) *versioned.Cache[int64, int64] {
	return t.Local(topicCourseKey{}, func() any {
		return versioned.New[int64, int64](topicCourseEntries)
	}).(*versioned.Cache[int64, int64])
}

// assignment is whether a learner is assigned to a course, until when at
// the latest.
type assignment struct {
	assigned bool
	until    time.Time
}

type assignmentCacheKey struct{}

func assignmentsOf(t *platform.Tenant) *versioned.Cache[answerKey, assignment] {
	return t.Local(assignmentCacheKey{}, func() any {
		return versioned.New[answerKey, assignment](assignmentEntries)
	}).(*versioned.Cache[answerKey, assignment])
}

// courseCounters reads the course's program and access counters (0
// before any change), before anything built from them: learnerCounters of
// user 0, which is no one, so that concurrent reads share its queries.
func courseCounters(ctx context.Context, t *platform.Tenant, q sqldb.Querier, courseID int64) (program, access int64, err error) {
	c, err := learnerCounters(ctx, t, q, 0, courseID)
	return c.program, c.access, err
}

// learnerTopic returns the course of a topic that learners see (an active
// topic in an active lesson), read through the program cache, after
// checking that p may record progress in it and that its lesson is open.
// Asked of the tenant's database, it reads the topic's course and the
// learner's assignment from the tenant's memos; inside a transaction
// (q is a *sqldb.Tx), everything comes from the transaction.
func (s *Service) learnerTopic(ctx context.Context, t *platform.Tenant, q sqldb.Querier, now time.Time,
	p *access.Principal, topicID int64) (courses.Course, *topics.Topic, error) {
	db, ok := q.(*sqldb.DB)
	memo := ok && db == t.DB
	hints := topicCoursesOf(t)
	courseID, hinted := int64(0), false
	if memo {
		courseID, hinted = hints.Get(topicID, 0, now)
	}
	for {
		if !hinted {
			id, err := topics.CourseOf(ctx, q, topicID)
			if apperr.Is(err, apperr.NotFound) {
				return courses.Course{}, nil, errTopicMissing
			}
			if err != nil {
				return courses.Course{}, nil, err
			}
			courseID = id
		}
		program, accessCount, err := courseCounters(ctx, t, q, courseID)
		if err != nil {
			return courses.Course{}, nil, err
		}
		static, err := s.staticAt(ctx, t, q, courseID, program, now)
		if err != nil {
			return courses.Course{}, nil, err
		}
		topic, ok := static.tree.topics[topicID]
		if !ok && hinted {
			// The topic left the hinted course (or went): ask where it is.
			hinted = false
			continue
		}
		if !ok {
			return courses.Course{}, nil, errTopicMissing
		}
		if memo && !hinted {
			hints.Put(topicID, 0, now.Add(programTTL), now, courseID)
		}
		assigned := func() (bool, error) {
			if !memo {
				return courses.Assigned(ctx, q, now, p.UserID, courseID)
			}
			return s.assignedAt(ctx, t, now, p.UserID, courseID, accessCount)
		}
		if err := writableBy(p, static.course, now, assigned); err != nil {
			return courses.Course{}, nil, err
		}
		if !static.tree.open(topic) {
			return courses.Course{}, nil, errClosed
		}
		return static.course, topic, nil
	}
}

// assignedAt answers whether the user is assigned to the course, from the
// tenant's memo when it was kept at the course's current access counter.
func (s *Service) assignedAt(ctx context.Context, t *platform.Tenant, now time.Time, userID, courseID,
	accessCount int64) (bool, error) {
	key := answerKey{user: userID, course: courseID}
	memo := assignmentsOf(t)
	if a, ok := memo.Get(key, accessCount, now); ok {
		return a.assigned, nil
	}
	ok, until, err := courses.AssignedUntil(ctx, t, now, userID, courseID)
	if err != nil {
		return false, err
	}
	memo.Put(key, accessCount, until, now, assignment{assigned: ok, until: until})
	return ok, nil
}
