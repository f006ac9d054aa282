package cmi5

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/platform"
)

// DefaultSessionTimeout is how long a session may go without a statement
// before the LMS abandons it (cmi5 section 9.3.6 leaves the time to the
// LMS): the auth token then stops working and the abandoned statement
// records the session's end.
const DefaultSessionTimeout = 2 * time.Hour

// AbandonJob is the scheduled job that abandons timed-out sessions.
const AbandonJob = "cmi5-abandon-idle"

func (s *Service) timeout() time.Duration {
	if s.SessionTimeout > 0 {
		return s.SessionTimeout
	}
	return DefaultSessionTimeout
}

// idle tells whether an open session has timed out at now: no statement
// (or, before the first, no launch) for longer than the timeout.
func (s *Service) idle(sess session, now time.Time) bool {
	last := sess.LaunchedAt
	if sess.LastAt != nil && sess.LastAt.After(last) {
		last = *sess.LastAt
	}
	return sess.Terminated == nil && sess.Abandoned == nil && now.Sub(last) > s.timeout()
}

// abandonIdle abandons a session that timed out, under its registration's
// launch lock; it tells whether the session is (now) abandoned.
func (s *Service) abandonIdle(ctx context.Context, t *platform.Tenant, sess session, now time.Time) (bool, error) {
	release, err := s.launchLock(ctx, t, sess.Registration)
	if err != nil {
		return false, err
	}
	defer release()
	// Read again under the lock: a statement or a launch may have come.
	sess, err = sessionBy(ctx, t.DB, "id", sess.ID)
	if err != nil {
		return false, err
	}
	if sess.Abandoned != nil {
		return true, nil
	}
	if !s.idle(sess, now) {
		return false, nil
	}
	au, err := auByID(ctx, t.DB, sess.AUID)
	if err != nil {
		return false, err
	}
	return true, s.abandon(ctx, t, sess, au, now)
}

// AbandonIdle abandons every session of the tenant that timed out by now:
// the scheduled sweep behind the check each LRS call makes of its own
// session.
func (s *Service) AbandonIdle(ctx context.Context, t *platform.Tenant, now time.Time) error {
	now = now.UTC().Truncate(time.Millisecond)
	cutoff := now.Add(-s.timeout())
	rows, err := t.DB.QueryContext(ctx, `SELECT `+sessionColumns+` FROM cmi5_sessions WHERE terminated_at IS NULL
AND abandoned_at IS NULL AND COALESCE(last_at, launched_at) < $1`, cutoff)
	if err != nil {
		return fmt.Errorf("cmi5: load idle sessions: %w", err)
	}
	var list []session
	for rows.Next() {
		sess, err := scanSession(rows)
		if err != nil {
			rows.Close()
			return fmt.Errorf("cmi5: read idle session: %w", err)
		}
		list = append(list, sess)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, sess := range list {
		if _, err := s.abandonIdle(ctx, t, sess, now); err != nil {
			return err
		}
	}
	return nil
}

// Jobs are cmi5's scheduled jobs: the hourly sweep of idle sessions.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{{Name: AbandonJob, Schedule: jobs.MustCron("@hourly"), Run: s.AbandonIdle}}
}
