package courses

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Service carries the course, lesson, access and tutor operations and the
// public catalogue. Every operation takes the caller and checks the policy
// first.
type Service struct {
	Clock clock.Clock
	// Topics are the topics of the courses' lessons (package topics,
	// which imports this one). Nil: programs show lessons without
	// topics, clones have none and deletes leave their files behind.
	Topics TopicStore
	// FileURL, when set, turns a stored file key into a link clients can
	// fetch; course images then carry image_url.
	FileURL func(t *platform.Tenant, key string) string
	// Scanner, when set, checks uploaded images for malware.
	Scanner scan.Scanner
}

// TopicStore is what courses asks of the topics of its lessons.
type TopicStore interface {
	// AdminTopics lists every topic of a course for the admin program,
	// active or not.
	AdminTopics(ctx context.Context, q sqldb.Querier, courseID int64) ([]AdminTopic, error)
	// CloneLessonTopics copies the topics of one lesson to another inside
	// the clone's transaction.
	CloneLessonTopics(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, fromLessonID, toLessonID int64) error
	// RemoveTopicFiles records inside a delete's transaction that the
	// stored files of the topics the delete takes with it (those of the
	// course when lessonID is 0, else of the lesson and its nested
	// lessons) are to be removed once it commits.
	RemoveTopicFiles(ctx context.Context, tx *sqldb.Tx, courseID, lessonID int64) error
}

// ContentChanged records, inside the transaction of a change to the
// lessons or topics of courses, CourseContentChanged for each course, for
// the capabilities that react to a program's change.
func ContentChanged(ctx context.Context, tx *sqldb.Tx, now time.Time, courseIDs ...int64) error {
	for _, id := range sqldb.UniqueIDs(courseIDs) {
		if err := events.Emit(ctx, tx, now, events.Event{Name: events.CourseContentChanged,
			Payload: map[string]any{"course_id": id}}); err != nil {
			return err
		}
	}
	return nil
}

// AdminTopic is a topic as the admin program shows it: every field, with
// the content value as stored.
type AdminTopic struct {
	ID            int64           `json:"id"`
	LessonID      int64           `json:"lesson_id"`
	Title         string          `json:"title"`
	Summary       string          `json:"summary"`
	Position      int             `json:"order"`
	Active        bool            `json:"active"`
	Preview       bool            `json:"preview"`
	CanSkip       bool            `json:"can_skip"`
	Duration      string          `json:"duration"`
	TopicableType string          `json:"topicable_type"`
	Content       json.RawMessage `json:"content"`
}

func (s *Service) now() time.Time { return s.Clock.Now().UTC() }

var errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")

// allow is nil when ok, else the 403 every refusal answers.
func allow(ok bool) error {
	if ok {
		return nil
	}
	return errUnauthorized
}

// isAdmin reports whether p edits every course, not only its own.
func isAdmin(p *access.Principal) bool { return p.Has(access.CourseUpdate) }

// problems collects validation messages keyed by input field, so that one
// answer lists every mistake of a request.
type problems map[string][]string

func (p problems) add(field, message string) { p[field] = append(p[field], message) }

// err is the 422 for the collected messages, or nil when there are none.
func (p problems) err() error {
	if len(p) == 0 {
		return nil
	}
	return apperr.Validation(p)
}

// Optional is a field a partial update may set, set to null or leave out.
type Optional[T any] struct {
	Set   bool
	Value *T
}

func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Value = nil
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	o.Value = &v
	return nil
}

// or returns the value when set, else current.
func (o Optional[T]) or(current *T) *T {
	if o.Set {
		return o.Value
	}
	return current
}

// removeTopicFiles asks Topics to remove, once the delete in tx commits,
// the files of the topics it takes with it.
func (s *Service) removeTopicFiles(ctx context.Context, tx *sqldb.Tx, courseID, lessonID int64) error {
	if s.Topics == nil {
		return nil
	}
	return s.Topics.RemoveTopicFiles(ctx, tx, courseID, lessonID)
}
