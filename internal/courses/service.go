package courses

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Service carries the course, lesson, access and tutor operations and the
// public catalogue. Every operation takes the caller and checks the policy
// first.
type Service struct {
	Clock clock.Clock
	// CloneTopics copies the topics of one lesson to another inside the
	// clone's transaction (package topics provides it; topics imports
	// courses, so it is wired by the server). Nil: clones have no topics.
	CloneTopics func(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, fromLessonID, toLessonID int64) error
	// Topics lists every topic of a course for the admin program, active
	// or not (package topics, wired by the server for the same reason).
	// Nil: programs show lessons without topics.
	Topics func(ctx context.Context, q sqldb.Querier, courseID int64) ([]AdminTopic, error)
	// FileURL, when set, turns a stored file key into a link clients can
	// fetch; course images then carry image_url.
	FileURL func(t *platform.Tenant, key string) string
	// TopicFiles, when set, collects inside a delete's transaction the
	// stored files of the topics the delete takes with it (those of the
	// course when lessonID is 0, else of the lesson and its nested
	// lessons) and returns what removes them once the delete commits.
	// Nil: the files stay behind.
	TopicFiles func(ctx context.Context, q sqldb.Querier, courseID, lessonID int64) (remove func(context.Context, *platform.Tenant), err error)
	// ContentChanged, when set, runs after a change to the lessons of a
	// course commits (package learning re-opens finished courses that
	// gained an active topic). Its failure is logged: the change stands.
	ContentChanged func(ctx context.Context, t *platform.Tenant, courseID int64) error
	// Scanner, when set, checks uploaded images for malware.
	Scanner scan.Scanner
}

// changed tells ContentChanged that a course's lessons changed.
func (s *Service) changed(ctx context.Context, t *platform.Tenant, courseID int64) {
	if s.ContentChanged == nil {
		return
	}
	if err := s.ContentChanged(context.WithoutCancel(ctx), t, courseID); err != nil {
		slog.Default().Error("courses: course content changed", "tenant", t.ID, "course", courseID, "error", err)
	}
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

// topicFiles runs TopicFiles when it is set.
func (s *Service) topicFiles(ctx context.Context, q sqldb.Querier, courseID, lessonID int64) (func(context.Context, *platform.Tenant), error) {
	if s.TopicFiles == nil {
		return func(context.Context, *platform.Tenant) {}, nil
	}
	return s.TopicFiles(ctx, q, courseID, lessonID)
}
