package topics

import (
	"context"
	"encoding/json"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The background processing of a topic's content (media's video
// transcoding) reads and rewrites the stored value through these, so the
// topics table keeps one owner.

// EditableContent returns the class and stored content of a topic p may
// edit: those who may author the topic may follow its processing.
func (s *Service) EditableContent(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (string, json.RawMessage, error) {
	topic, _, err := s.editable(ctx, t, p, id)
	return topic.TopicableType, topic.Content, err
}

// Content returns the class and stored content of topic id.
func (s *Service) Content(ctx context.Context, t *platform.Tenant, id int64) (string, json.RawMessage, error) {
	topic, err := ByID(ctx, t.DB, id)
	return topic.TopicableType, topic.Content, err
}

// UpdateContent replaces the stored content of topic id with what fn
// makes of it, in one transaction; fn returning the value unchanged (or
// nil) writes nothing. The course's content changed, so caches of its
// program are dropped.
func (s *Service) UpdateContent(ctx context.Context, t *platform.Tenant, id int64, fn func(class string, value json.RawMessage) (json.RawMessage, error)) error {
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		topic, err := ByID(ctx, tx, id)
		if err != nil {
			return err
		}
		next, err := fn(topic.TopicableType, topic.Content)
		if err != nil || next == nil || sameJSON(next, topic.Content) {
			return err
		}
		topic.Content = next
		topic.UpdatedAt = s.now()
		if err := updateTopic(ctx, tx, topic); err != nil {
			return err
		}
		return courses.ContentChanged(ctx, tx, topic.UpdatedAt, topic.CourseID)
	})
}

// enqueue asks the topic's kind for the background work of a value just
// stored, inside the transaction that stores it.
func enqueue(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, kind content.Kind, topicID int64, value json.RawMessage) error {
	p, ok := kind.(content.Processed)
	if !ok || value == nil {
		return nil
	}
	return p.Enqueue(ctx, tx, content.Env{Tenant: t, TopicID: topicID}, value)
}
