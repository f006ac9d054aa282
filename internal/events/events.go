// Package events records platform events in a transactional outbox and
// dispatches them to listeners after commit, at least once.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/sqldb"
)

// Names of the events of the platform's namespace.
const (
	AccountBlocked             = "AccountBlocked"
	AccountConfirmed           = "AccountConfirmed"
	AccountDeleted             = "AccountDeleted"
	AccountDeletionRequested   = "AccountDeletionRequested"
	AccountMustBeEnableByAdmin = "AccountMustBeEnableByAdmin"
	AccountRegistered          = "AccountRegistered"
	ForgotPassword             = "ForgotPassword"
	Impersonate                = "Impersonate"
	Login                      = "Login"
	Logout                     = "Logout"
	PasswordChanged            = "PasswordChanged"
	ResetPassword              = "ResetPassword"
	UserAddedToGroup           = "UserAddedToGroup"
	UserRemovedFromGroup       = "UserRemovedFromGroup"
	CourseAccessStarted        = "CourseAccessStarted"
	CourseAccessFinished       = "CourseAccessFinished"
	CourseAssigned             = "CourseAssigned"
	CourseUnassigned           = "CourseUnassigned"
	CourseDeadlineSoon         = "CourseDeadlineSoon"
	CoursedPublished           = "CoursedPublished"
	CourseStarted              = "CourseStarted"
	CourseFinished             = "CourseFinished"
	CourseStatusChanged        = "CourseStatusChanged"
	CourseTutorAssigned        = "CourseTutorAssigned"
	CourseTutorUnassigned      = "CourseTutorUnassigned"
	LessonFinished             = "LessonFinished"
	TopicFinished              = "TopicFinished"
	TopicScored                = "TopicScored"
)

// Names of the internal events: reactions of one capability to another's
// change, delivered through the outbox like the others so that none is
// lost when a process dies after a commit. They are not in the Catalog,
// carry no user, and are never notified.
const (
	// CourseContentChanged: lessons or topics of payload course_id were
	// added, changed or removed (learning re-opens finished courses that
	// gained an active topic).
	CourseContentChanged = "CourseContentChanged"
	// TopicsRemoved: a course or lesson delete took topics with it; the
	// payload names their content and files, which topics removes.
	TopicsRemoved = "TopicsRemoved"
	// GroupTreeChanged: a group was deleted, or moved under another
	// parent, which changes the ancestors the groups of payload user_ids
	// (the members of the group and of its subgroups, read before the
	// change) inherit course access from; courses recomputes their access.
	GroupTreeChanged = "GroupTreeChanged"
)

// Catalog lists every event of the namespace with when it is emitted, for
// GET /api/events and the notification event lists.
var Catalog = []struct {
	Name, When string
}{
	{AccountBlocked, "account blocked (is_active=false)"},
	{AccountConfirmed, "user verifies the account"},
	{AccountDeleted, "user deleted"},
	{AccountDeletionRequested, "deletion requested via /api/profile/delete/init"},
	{AccountMustBeEnableByAdmin, "registration while lms_auth.account_must_be_enabled_by_admin is enabled"},
	{AccountRegistered, "account registered"},
	{ForgotPassword, "password reset requested"},
	{Impersonate, "admin impersonation"},
	{Login, "successful login"},
	{Logout, "logout"},
	{PasswordChanged, "password changed"},
	{ResetPassword, "password reset completed"},
	{UserAddedToGroup, "member added to a group"},
	{UserRemovedFromGroup, "member removed from a group"},
	{CourseAccessStarted, "user receives access to a course"},
	{CourseAccessFinished, "user loses access to a course"},
	{CourseAssigned, "admin assigns a user to a course"},
	{CourseUnassigned, "admin unassigns a user from a course"},
	{CourseDeadlineSoon, "course deadline approaching (checked hourly)"},
	{CoursedPublished, "course published"},
	{CourseStarted, "course started"},
	{CourseFinished, "course finished"},
	{CourseStatusChanged, "course status changes"},
	{CourseTutorAssigned, "tutor assigned to a course"},
	{CourseTutorUnassigned, "tutor unassigned from a course"},
	{LessonFinished, "lesson finished"},
	{TopicFinished, "topic finished"},
	{TopicScored, "better score in a finished topic"},
}

// Event is one occurrence. UserID is the user the event is about; it
// receives the notification.
type Event struct {
	Name    string
	UserID  int64
	Payload map[string]any
}

// Stored is an event as read back from the outbox.
type Stored struct {
	ID        int64
	Name      string
	UserID    int64
	Payload   map[string]any
	CreatedAt time.Time
}

// Emit writes ev into the outbox inside tx, so the event exists exactly
// when the change does, and wakes the dispatcher once tx commits.
func Emit(ctx context.Context, tx *sqldb.Tx, now time.Time, ev Event) error {
	payload := ev.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return fmt.Errorf("events: encode %s: %w", ev.Name, err)
	}
	var user any
	if ev.UserID != 0 {
		user = ev.UserID
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (name, user_id, payload, created_at) VALUES ($1, $2, $3, $4)`,
		ev.Name, user, string(b), now); err != nil {
		return fmt.Errorf("events: record %s: %w", ev.Name, err)
	}
	tx.Signal()
	return nil
}

// Redeliver makes the pairs of the events first..last pending and due at
// now again, as after a process died between their listeners and the
// record of their delivery; tests use it to show redelivery is harmless.
func Redeliver(ctx context.Context, q sqldb.Querier, now time.Time, first, last int64) error {
	_, err := q.ExecContext(ctx, `UPDATE event_deliveries SET state = 'pending', next_attempt_at = $1,
		claim = NULL, claimed_until = NULL, updated_at = $1 WHERE event_id >= $2 AND event_id <= $3`, now, first, last)
	return err
}
