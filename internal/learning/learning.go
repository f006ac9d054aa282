// Package learning is the learner's side of courses: the program of a
// course with its content, topic previews, progress (statuses, time on
// topics, H5P statements), deadlines, the events of starting and finishing,
// and the scheduled jobs that remind of deadlines, report ended access and
// open courses.
//
// Courses, lessons and topics are authored in packages courses and topics;
// this package reads them and owns the progress tables.
package learning

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/settings"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Service serves programs and records progress.
type Service struct {
	Clock clock.Clock
	// Kinds renders topic content; a topic whose class it lacks shows no
	// content.
	Kinds *content.Registry
	// FileURL signs a link to a file of the tenant's blob store.
	FileURL  func(t *platform.Tenant, key string) string
	Settings *settings.Service
	// H5PContentID reads the H5P content id of a topic's value of class;
	// false for topics that are not H5P. Nil: no statement completes a
	// topic.
	H5PContentID func(class string, value json.RawMessage) (string, bool)
	// H5PPlayed reads the H5P contents a topic's value of class plays:
	// an H5P topic's own, a layout's frames. Nil: only H5P topics get
	// play grants.
	H5PPlayed func(class string, value json.RawMessage) []string
}

// Topic statuses of topic_progress.status.
const (
	Incomplete = 0
	Complete   = 1
	InProgress = 2
)

// Messages the learner routes answer with.
const (
	msgNoAccess  = "You do not have access to this course."
	msgNotActive = "The course is not active yet."
	msgDeadline  = "The deadline for this course was missed."
	msgClosed    = "This lesson is not open."
)

var (
	errNoAccess     = apperr.New(apperr.Forbidden, msgNoAccess)
	errNotActive    = apperr.New(apperr.Forbidden, msgNotActive)
	errDeadline     = apperr.New(apperr.Forbidden, msgDeadline)
	errClosed       = apperr.New(apperr.Forbidden, msgClosed)
	errTopicMissing = apperr.New(apperr.NotFound, "Topic not found.")
)

// now is the time of the request, to the microsecond: PostgreSQL keeps no
// more, and a time written must read back equal for the seconds of pings
// to add up exactly.
func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Microsecond) }

// canEdit reports whether p authors or administers the course; editors
// see programs of courses that are not active yet.
func canEdit(p *access.Principal, c courses.Course) bool {
	return p != nil && (courses.CanEdit(p, c) || courses.CanRead(p, c))
}

// notYetActive reports a course that has not opened to learners: waiting
// for activation or before its window.
func notYetActive(c courses.Course, now time.Time) bool {
	return c.Status == courses.PublishedUnactivated || !c.Started(now)
}

// readable checks that p may read the program of c at now.
func readable(ctx context.Context, t *platform.Tenant, q sqldb.Querier, now time.Time, p *access.Principal,
	c courses.Course) error {
	ok, err := courses.CanLearn(ctx, t, q, now, p, c)
	return readableIf(ok, err, p, c, now)
}

// readableBy is readable with the caller's assignment to c told by
// assigned, which the access rule asks only when it needs it.
func readableBy(p *access.Principal, c courses.Course, now time.Time, assigned func() (bool, error)) error {
	ok, err := courses.LearnRule(p, c, assigned)
	return readableIf(ok, err, p, c, now)
}

// readableIf completes readable once the access rule answered ok.
func readableIf(ok bool, err error, p *access.Principal, c courses.Course, now time.Time) error {
	if err != nil {
		return err
	}
	if !ok {
		return errNoAccess
	}
	if notYetActive(c, now) && !canEdit(p, c) {
		return errNotActive
	}
	return nil
}

// writable checks that p may record progress in c at now: it must be able
// to read the program, and the course must be open (editors may try out
// courses that are not). A course whose window has closed has passed every
// learner's deadline.
func writable(ctx context.Context, t *platform.Tenant, q sqldb.Querier, now time.Time, p *access.Principal,
	c courses.Course) error {
	return writableIf(readable(ctx, t, q, now, p, c), p, c, now)
}

// writableBy is writable with the caller's assignment to c told by
// assigned (see readableBy).
func writableBy(p *access.Principal, c courses.Course, now time.Time, assigned func() (bool, error)) error {
	return writableIf(readableBy(p, c, now, assigned), p, c, now)
}

// writableIf completes writable once the read check answered readErr.
func writableIf(readErr error, p *access.Principal, c courses.Course, now time.Time) error {
	if readErr != nil {
		return readErr
	}
	if canEdit(p, c) {
		return nil
	}
	if c.Status != courses.Published {
		return errNoAccess
	}
	if c.Ended(now) {
		return errDeadline
	}
	return nil
}

// deadlineFor is the deadline of a learner starting c at start: the
// earlier of start + hours_to_complete and the end of the course's window;
// nil when neither is set.
func deadlineFor(c courses.Course, start time.Time) *time.Time {
	var d *time.Time
	if c.HoursToComplete != nil && *c.HoursToComplete > 0 {
		v := start.Add(time.Duration(*c.HoursToComplete) * time.Hour)
		d = &v
	}
	if c.ActiveTo != nil && (d == nil || c.ActiveTo.Before(*d)) {
		v := c.ActiveTo.UTC()
		d = &v
	}
	return d
}
