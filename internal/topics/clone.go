package topics

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// copied is a topic made ready for insertion by a clone: its content and
// attachment files are already copied to keys of their own, so the clone
// and the original never share a file and deleting one leaves the other
// whole.
type copied struct {
	topic     Topic
	kind      content.Kind
	resources []Resource
	t         *platform.Tenant
}

// copyTopic copies the files of src. A class no kind is registered for is
// copied as stored: without a kind its files cannot be found, but neither
// can they be removed, so sharing them is safe.
func copyTopic(ctx context.Context, t *platform.Tenant, q sqldb.Querier, kinds *content.Registry, src Topic, now time.Time) (c copied, err error) {
	c = copied{topic: src, t: t}
	c.topic.ID, c.topic.CreatedAt, c.topic.UpdatedAt = 0, now, now
	defer func() {
		if err != nil {
			c.undo(ctx)
		}
	}()
	if k, ok := kinds.ByClass(src.TopicableType); ok {
		env := content.Env{Tenant: t, Now: now, FilePrefix: content.NewPrefix("content")}
		if c.topic.Content, err = k.Copy(ctx, env, src.Content); err != nil {
			return c, fmt.Errorf("topics: copy content of topic %d: %w", src.ID, err)
		}
		c.kind = k
	}
	list, err := resourcesOf(ctx, q, src.ID)
	if err != nil {
		return c, err
	}
	for _, r := range list {
		key := content.NewPrefix("resources") + path.Base(r.Path)
		if err := copyBlob(ctx, t, r.Path, key); err != nil {
			return c, err
		}
		r.Path, r.CreatedAt = key, now
		c.resources = append(c.resources, r)
	}
	return c, nil
}

func copyBlob(ctx context.Context, t *platform.Tenant, from, to string) error {
	rc, info, err := t.Blob.Get(ctx, from)
	if err != nil {
		return fmt.Errorf("topics: copy %s: %w", from, err)
	}
	defer rc.Close()
	if err := t.Blob.Put(ctx, to, rc, info.Size, info.ContentType); err != nil {
		return fmt.Errorf("topics: copy to %s: %w", to, err)
	}
	return nil
}

// insert adds the copy to a lesson at a position, with its attachments.
func (c *copied) insert(ctx context.Context, q *sqldb.Tx, lessonID, courseID int64, position int) (int64, error) {
	c.topic.LessonID, c.topic.CourseID, c.topic.Position = lessonID, courseID, position
	id, err := insertTopic(ctx, q, c.topic)
	if err != nil {
		return 0, err
	}
	c.topic.ID = id
	// A copied video is queued again (content/file's Copy).
	if c.kind != nil {
		if err := enqueue(ctx, q, c.t, c.kind, id, c.topic.Content); err != nil {
			return 0, err
		}
	}
	for _, r := range c.resources {
		r.TopicID = id
		if _, err := insertResource(ctx, q, r); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// undo deletes the copied files of a clone that was not stored.
func (c *copied) undo(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if c.kind != nil && c.topic.Content != nil {
		env := content.Env{Tenant: c.t, FilePrefix: content.NewPrefix("content")}
		if err := c.kind.Remove(ctx, env, c.topic.Content); err != nil {
			httpx.Log(ctx).Warn("topics: undo clone", "tenant", c.t.ID, "error", err)
		}
	}
	for _, r := range c.resources {
		if err := c.t.Blob.Delete(ctx, r.Path); err != nil {
			httpx.Log(ctx).Warn("topics: undo clone", "tenant", c.t.ID, "key", r.Path, "error", err)
		}
	}
}

// Clone copies a topic with its content and attachments after the last
// topic of its lesson, or of lessonID when given (a lesson of a course p
// may edit).
func (s *Service) Clone(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, lessonID *int64) (View, error) {
	topic, _, err := s.editable(ctx, t, p, id)
	if err != nil {
		return View{}, err
	}
	to, courseID := topic.LessonID, topic.CourseID
	if lessonID != nil && *lessonID != topic.LessonID {
		lesson, err := editableLesson(ctx, t.DB, p, *lessonID)
		if err != nil {
			return View{}, err
		}
		to, courseID = lesson.ID, lesson.CourseID
	}
	c, err := copyTopic(ctx, t, t.DB, s.Kinds, topic, s.now())
	if err != nil {
		return View{}, err
	}
	var newID int64
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		pos, err := nextPosition(ctx, tx, to)
		if err != nil {
			return err
		}
		if newID, err = c.insert(ctx, tx, to, courseID, pos); err != nil {
			return err
		}
		return courses.ContentChanged(ctx, tx, s.now(), courseID)
	})
	if err != nil {
		c.undo(ctx)
		return View{}, err
	}
	return s.viewByID(ctx, t, newID, true)
}

// CloneLessonTopics copies every topic of lesson fromLessonID, content and
// attachments included, into lesson toLessonID at the same positions,
// inside the caller's transaction (package courses clones lessons with
// it). The copies are stamped with the target lesson's updated_at, which
// the caller's clone has just set from its clock. Files are copied as the
// transaction runs; if it fails here, the copies made so far are deleted.
func CloneLessonTopics(ctx context.Context, tx *sqldb.Tx, t *platform.Tenant, kinds *content.Registry, fromLessonID, toLessonID int64) (err error) {
	lesson, err := courses.LessonByID(ctx, tx, toLessonID)
	if err != nil {
		return err
	}
	list, err := forLesson(ctx, tx, fromLessonID)
	if err != nil {
		return err
	}
	var done []*copied
	defer func() {
		if err != nil {
			for _, c := range done {
				c.undo(ctx)
			}
		}
	}()
	for _, src := range list {
		c, err := copyTopic(ctx, t, tx, kinds, src, lesson.UpdatedAt)
		if err != nil {
			return err
		}
		done = append(done, &c)
		if _, err := c.insert(ctx, tx, lesson.ID, lesson.CourseID, src.Position); err != nil {
			return err
		}
	}
	return nil
}
