// Package content is the registry of topic content kinds. Each kind lives
// in its own package (content/richtext, content/file, ...) and implements
// Kind; topics stores a topic's value as JSON shaped by its kind and calls
// the kind for everything that involves the value or its files, so a new
// kind is a new package registered at start, with no change to topics.
package content

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Kind is one kind of topic content.
type Kind interface {
	// Class is the topicable class name clients send and
	// GET /api/admin/topics/types lists.
	Class() string
	// Name is the kind derived from the class: richtext, video, audio,
	// image, pdf, oembed, h5p, scorm, liascript, lti, cmi5, quiz, project,
	// layout.
	Name() string
	// Build validates the input of a create (old is nil) or an update and
	// returns the value to store. Uploaded files are written to the
	// tenant's blob store under env.FilePrefix. When the returned value
	// differs from old the caller removes old's files through Remove, so a
	// new value must not reuse old's files; to keep them (an update that
	// sends nothing for the content) return old itself.
	Build(ctx context.Context, env Env, old json.RawMessage, in Input) (json.RawMessage, error)
	// Copy returns the value for a cloned topic, copying its files under
	// env.FilePrefix of the clone.
	Copy(ctx context.Context, env Env, value json.RawMessage) (json.RawMessage, error)
	// Remove deletes the value's files when its topic is deleted or its
	// value replaced.
	Remove(ctx context.Context, env Env, value json.RawMessage) error
	// View is what clients see of the value in topics and programs, with
	// links to files signed through env.FileURL.
	View(env Env, value json.RawMessage) (any, error)
}

// LearnerViewer is a kind whose learners see less than its authors: View
// is for authors, LearnerView for the learner's program (a layout's
// practice without its answers).
type LearnerViewer interface {
	LearnerView(env Env, value json.RawMessage) (any, error)
}

// SelfCompleting is a kind whose topics can complete through their own
// activity only (a checked practice, a passed quiz): a learner's progress
// write may not mark such a topic complete, or the activity could be
// skipped.
type SelfCompleting interface {
	CompletesItself(value json.RawMessage) bool
}

// Switchable is a kind a tenant can switch off with a setting. Its topics
// are kept while it is off, but their views (Env.Off) offer no way to play
// them.
type Switchable interface {
	Enabled(ctx context.Context, t *platform.Tenant) (bool, error)
}

// SwitchedOff reports whether tenant t has switched kind k off.
func SwitchedOff(ctx context.Context, t *platform.Tenant, k Kind) (bool, error) {
	s, ok := k.(Switchable)
	if !ok {
		return false, nil
	}
	on, err := s.Enabled(ctx, t)
	return err == nil && !on, err
}

// Described is a kind that documents its own fields of a topic create or
// update in the API description.
type Described interface {
	Fields() map[string]*huma.Schema
}

// Env is what a kind may use for one topic.
type Env struct {
	Tenant  *platform.Tenant
	TopicID int64
	Now     time.Time
	// FilePrefix is a fresh blob key prefix for the files this call
	// writes ("content/3f9a0c.../"), unused by any other value, so a new
	// value never overwrites files an old one (or another topic) still
	// serves. Values keep their files' whole keys; Remove and Copy find a
	// value's files through the value, not through the prefix.
	FilePrefix string
	// FileURL returns a signed link serving the stored file at key.
	FileURL func(key string) string
	// Off is true while the tenant has switched the kind off
	// (Switchable): View then offers no way to play the topic.
	Off bool
}

// Input is what a create or update sent, beyond the common topic fields.
type Input struct {
	// Value is the generic create's value: any JSON, or nil.
	Value json.RawMessage
	// Fields are the type-specific text fields (markdown, html, url,
	// videoSiteUrl, ...), from JSON or form data. A JSON value that is not
	// a string (an array of questions, a number) appears as its JSON text.
	Fields map[string]string
	// Files are the uploaded files by form field name.
	Files map[string]File
}

// File is one uploaded file.
type File struct {
	Name        string
	Size        int64
	ContentType string
	Open        func() (io.ReadCloser, error)
}

// Registry knows the kinds by class name.
type Registry struct {
	kinds []Kind
}

// NewRegistry registers kinds; see Register for what is a programming
// error.
func NewRegistry(kinds ...Kind) *Registry {
	r := &Registry{}
	for _, k := range kinds {
		r.Register(k)
	}
	return r
}

// Register adds a kind. The server registers every kind once topics and
// learning, which hold the registry, are built, and before it serves.
// Two kinds with one class, or describing one field (Described), are a
// programming error: the topic form's description would keep only one of
// them, so a field several kinds take is described by package topics.
func (r *Registry) Register(k Kind) {
	for _, have := range r.kinds {
		if have.Class() == k.Class() {
			panic("content: class registered twice: " + k.Class())
		}
		if field, ok := sharedField(have, k); ok {
			panic("content: field " + field + " described by two kinds: " + have.Class() + " and " + k.Class())
		}
	}
	r.kinds = append(r.kinds, k)
}

// sharedField names a field both kinds describe.
func sharedField(a, b Kind) (string, bool) {
	da, okA := a.(Described)
	db, okB := b.(Described)
	if !okA || !okB {
		return "", false
	}
	fb := db.Fields()
	for name := range da.Fields() {
		if _, ok := fb[name]; ok {
			return name, true
		}
	}
	return "", false
}

// ByClass finds the kind of a class name.
func (r *Registry) ByClass(class string) (Kind, bool) {
	for _, k := range r.kinds {
		if k.Class() == class {
			return k, true
		}
	}
	return nil, false
}

// Kinds lists the registered kinds in registration order.
func (r *Registry) Kinds() []Kind { return slices.Clone(r.kinds) }

// Off returns the classes of the kinds tenant t has switched off.
func (r *Registry) Off(ctx context.Context, t *platform.Tenant) (map[string]bool, error) {
	off := map[string]bool{}
	for _, k := range r.kinds {
		switched, err := SwitchedOff(ctx, t, k)
		if err != nil {
			return nil, err
		}
		if switched {
			off[k.Class()] = true
		}
	}
	return off, nil
}

// KindName is the kind a class stands for, "unknown" when no kind is
// registered for it.
func (r *Registry) KindName(class string) string {
	if k, ok := r.ByClass(class); ok {
		return k.Name()
	}
	return "unknown"
}

// Processed is a kind some of whose values get background work after they
// are stored (a video's transcoding). Enqueue is called inside the
// transaction that stores a value new to the topic (env.TopicID is set),
// so the work is queued exactly when the value is stored.
type Processed interface {
	Enqueue(ctx context.Context, tx *sqldb.Tx, env Env, value json.RawMessage) error
}
