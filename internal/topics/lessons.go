package topics

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Service is the courses.TopicStore: what courses asks of the topics of
// its lessons, for the admin program, lesson clones and deletes.
var _ courses.TopicStore = (*Service)(nil)

// AdminTopics lists every topic of a course as the admin program shows it.
func (s *Service) AdminTopics(ctx context.Context, q sqldb.Querier, courseID int64) ([]courses.AdminTopic, error) {
	list, err := ForCourse(ctx, q, courseID)
	if err != nil {
		return nil, err
	}
	out := make([]courses.AdminTopic, len(list))
	for i, t := range list {
		out[i] = courses.AdminTopic{ID: t.ID, LessonID: t.LessonID, Title: t.Title, Summary: t.Summary,
			Position: t.Position, Active: t.Active, Preview: t.Preview, CanSkip: t.CanSkip, Duration: t.Duration,
			TopicableType: t.TopicableType, Content: t.Content}
	}
	return out, nil
}

// CloneLessonTopics copies a lesson's topics when courses clones the
// lesson, inside the clone's transaction.
func (s *Service) CloneLessonTopics(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, fromLessonID, toLessonID int64) error {
	return CloneLessonTopics(ctx, tx, t, s.Kinds, fromLessonID, toLessonID)
}

// RemoveTopicFiles records in tx, as TopicsRemoved, the content and files
// of the topics a course or lesson delete takes with it; Listener removes
// them once the delete commits, or a later process does if this one dies
// first.
func (s *Service) RemoveTopicFiles(ctx context.Context, tx *sqldb.Tx, courseID, lessonID int64) error {
	var rest *Remnants
	var err error
	if lessonID != 0 {
		rest, err = s.lessonRemnants(ctx, tx, lessonID)
	} else {
		rest, err = s.courseRemnants(ctx, tx, courseID)
	}
	if err != nil || (len(rest.topics) == 0 && len(rest.keys) == 0) {
		return err
	}
	gone := make([]removedTopic, len(rest.topics))
	for i, tp := range rest.topics {
		gone[i] = removedTopic{ID: tp.ID, Class: tp.TopicableType, Content: tp.Content}
	}
	return events.Emit(ctx, tx, s.now(), events.Event{Name: events.TopicsRemoved,
		Payload: map[string]any{"topics": gone, "keys": rest.keys}})
}

// removedTopic is what removing a deleted topic's files needs of it.
type removedTopic struct {
	ID      int64           `json:"id"`
	Class   string          `json:"class"`
	Content json.RawMessage `json:"content"`
}

// ListenerEvents are the events Service.Listener reacts to.
var ListenerEvents = []string{events.TopicsRemoved}

// Listener removes the files of the topics of TopicsRemoved. Removing
// files already gone is no error, so redelivery is harmless.
func (s *Service) Listener(ctx context.Context, t *platform.Tenant, ev events.Stored) error {
	if ev.Name != events.TopicsRemoved {
		return nil
	}
	raw, err := json.Marshal(ev.Payload)
	if err != nil {
		return err
	}
	var p struct {
		Topics []removedTopic `json:"topics"`
		Keys   []string       `json:"keys"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return fmt.Errorf("topics: decode %s %d: %w", ev.Name, ev.ID, err)
	}
	rest := &Remnants{s: s, keys: p.Keys}
	for _, tp := range p.Topics {
		rest.topics = append(rest.topics, Topic{ID: tp.ID, TopicableType: tp.Class, Content: tp.Content})
	}
	rest.Remove(ctx, t)
	return nil
}
