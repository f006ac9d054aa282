package topics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/scan"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Service authors topics, their attachments and project submissions.
type Service struct {
	Clock clock.Clock
	Kinds *content.Registry
	Files *files.Signer
	// Progress completes a project topic when a learner submits it
	// (package learning, which imports this one). Nil: submissions
	// complete nothing.
	Progress Completer
	// Scanner, when set, checks every uploaded file for malware.
	Scanner scan.Scanner
}

// Completer completes a topic for a learner. Its refusal (after the
// learner's deadline, outside the lesson's window) refuses the
// submission, so it is called, not told after the fact.
type Completer interface {
	CompleteTopic(ctx context.Context, t *platform.Tenant, userID, topicID int64) error
}

var (
	errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")
	errTopicMissing = apperr.New(apperr.NotFound, "Topic not found.")
)

// The caps of what a create or update takes besides files.
const (
	maxFormValues = 4 << 20
	maxTitle      = 255
	maxSummary    = 10000
	maxDuration   = 255
	// defaultFileCap caps uploads when no registered kind says otherwise.
	defaultFileCap = 100 << 20
)

// canAuthor reports whether p may author topics of some course; which
// courses is CanEdit's to say.
func canAuthor(p *access.Principal) bool {
	return p.Has(access.CourseUpdate) || p.Has(access.CourseUpdateAuthored)
}

// CanReadKinds reports whether p may read what content kinds there are
// and what they take: those who browse or author topics.
func CanReadKinds(p *access.Principal) bool { return canBrowse(p) || canAuthor(p) }

// canBrowse reports whether p may read topics in the admin API.
func canBrowse(p *access.Principal) bool {
	return courses.CanList(p) || p.Has(access.CourseRead) || p.Has(access.CourseReadAuthored)
}

func allow(ok bool) error {
	if ok {
		return nil
	}
	return errUnauthorized
}

func (s *Service) now() time.Time { return s.Clock.Now() }

// env is what a kind may use for one topic; the file prefix is fresh on
// every call.
func (s *Service) env(t *platform.Tenant, topicID int64) content.Env {
	return content.Env{Tenant: t, TopicID: topicID, Now: s.now(), FilePrefix: content.NewPrefix("content"),
		FileURL: func(key string) string { return s.Files.URL(t, key) }}
}

// editable loads a topic with its course and checks that p may change it.
func (s *Service) editable(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (Topic, courses.Course, error) {
	if !canAuthor(p) {
		return Topic{}, courses.Course{}, errUnauthorized
	}
	topic, err := ByID(ctx, t.DB, id)
	if err != nil {
		return topic, courses.Course{}, err
	}
	course, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return topic, course, err
	}
	return topic, course, allow(courses.CanEdit(p, course))
}

// readable loads a topic with its course and checks that p may read it in
// the admin API.
func (s *Service) readable(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (Topic, courses.Course, error) {
	if !canBrowse(p) {
		return Topic{}, courses.Course{}, errUnauthorized
	}
	topic, err := ByID(ctx, t.DB, id)
	if err != nil {
		return topic, courses.Course{}, err
	}
	course, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return topic, course, err
	}
	return topic, course, allow(courses.CanRead(p, course) || courses.CanEdit(p, course))
}

// editableLesson loads the lesson a topic goes to and checks that p may
// edit its course.
func editableLesson(ctx context.Context, q sqldb.Querier, p *access.Principal, id int64) (courses.Lesson, error) {
	lesson, err := courses.LessonByID(ctx, q, id)
	if err != nil {
		return lesson, err
	}
	course, err := courses.ByID(ctx, q, lesson.CourseID)
	if err != nil {
		return lesson, err
	}
	return lesson, allow(courses.CanEdit(p, course))
}

// kind finds the registered kind of a class; 422 on the field when none.
func (s *Service) kind(class, field string) (content.Kind, error) {
	k, ok := s.Kinds.ByClass(class)
	if !ok {
		return nil, apperr.Field(field, fmt.Sprintf("The selected %s is invalid: it is not one of the classes GET /api/admin/topics/types lists.", field))
	}
	return k, nil
}

// fileCap is the largest upload any registered kind takes.
func (s *Service) fileCap() int64 {
	var cap int64
	for _, k := range s.Kinds.Kinds() {
		if u, ok := k.(content.Uploads); ok {
			cap = max(cap, u.MaxUpload())
		}
	}
	if cap == 0 {
		cap = defaultFileCap
	}
	return cap
}

// topicFields are the common fields of a create or update; nil means not
// sent.
type topicFields struct {
	lesson    *int64
	title     *string
	order     *int64
	summary   *string
	preview   *bool
	active    *bool
	canSkip   *bool
	duration  *string
	topicable *string
}

// common names the common fields and their aliases; everything else in
// a form is the content's input.
var common = map[string]bool{
	"lesson": true, "lesson_id": true, "title": true, "order": true, "position": true, "summary": true,
	"preview": true, "active": true, "can_skip": true, "canSkip": true, "duration": true, "topicable": true,
	"topicable_type": true,
}

func readTopicFields(r *fieldReader) topicFields {
	return topicFields{
		lesson:    r.integer("lesson", "lesson_id"),
		title:     r.text(maxTitle, "title"),
		order:     r.integer("order", "position"),
		summary:   r.text(maxSummary, "summary"),
		preview:   r.boolean("preview"),
		active:    r.boolean("active"),
		canSkip:   r.boolean("can_skip", "canSkip"),
		duration:  r.text(maxDuration, "duration"),
		topicable: r.text(512, "topicable", "topicable_type"),
	}
}

// contentInput is what the form holds for the content kind.
func contentInput(f *form) content.Input {
	in := content.Input{Fields: map[string]string{}, Files: map[string]content.File{}}
	for name, raw := range f.values {
		if common[name] {
			continue
		}
		if name == "value" {
			in.Value = raw
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			in.Fields[name] = s
		} else {
			in.Fields[name] = string(raw)
		}
	}
	for name, sp := range f.files {
		in.Files[name] = sp.file()
	}
	return in
}

func hasContent(in content.Input) bool {
	return len(in.Value) > 0 || len(in.Fields) > 0 || len(in.Files) > 0
}

// sameJSON reports whether two values are equal as JSON: PostgreSQL
// returns jsonb in its own spelling, so bytes may differ.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// uploadCap returns the form's file cap function for a create or update:
// checks that can be made before the file streams in (the lesson and its
// course, the kind) are made when the file part starts, and the cap is
// the kind's own when the class is known by then.
func (s *Service) uploadCap(ctx context.Context, t *platform.Tenant, p *access.Principal, class string) func(string, map[string]json.RawMessage) (int64, error) {
	checked := false
	return func(_ string, values map[string]json.RawMessage) (int64, error) {
		f := &form{values: values}
		r := newFieldReader(f)
		fields := readTopicFields(r)
		if !checked && fields.lesson != nil && len(r.errs) == 0 {
			if _, err := editableLesson(ctx, t.DB, p, *fields.lesson); err != nil {
				return 0, err
			}
			checked = true
		}
		if fields.topicable != nil {
			class = *fields.topicable
		}
		if class != "" {
			k, err := s.kind(class, "topicable")
			if err != nil {
				return 0, err
			}
			if u, ok := k.(content.Uploads); ok {
				return u.MaxUpload(), nil
			}
		}
		return s.fileCap(), nil
	}
}

// Create adds a topic to a lesson of a course p may edit.
func (s *Service) Create(ctx context.Context, t *platform.Tenant, p *access.Principal, body rawBody) (View, error) {
	if !canAuthor(p) {
		return View{}, errUnauthorized
	}
	f, err := readForm(ctx, body, formLimits{values: maxFormValues, fileCap: s.uploadCap(ctx, t, p, ""), scanner: s.Scanner})
	if err != nil {
		return View{}, err
	}
	defer f.Close()
	r := newFieldReader(f)
	fields := readTopicFields(r)
	if fields.lesson == nil && r.errs["lesson"] == nil && r.errs["lesson_id"] == nil {
		r.fail("lesson", "The lesson field is required.")
	}
	if fields.title == nil || strings.TrimSpace(*fields.title) == "" {
		if r.errs["title"] == nil {
			r.fail("title", "The title field is required.")
		}
	}
	if fields.topicable == nil && r.errs["topicable"] == nil {
		r.fail("topicable", "The topicable field is required.")
	}
	if err := r.err(); err != nil {
		return View{}, err
	}
	kind, err := s.kind(*fields.topicable, "topicable")
	if err != nil {
		return View{}, err
	}
	lesson, err := editableLesson(ctx, t.DB, p, *fields.lesson)
	if err != nil {
		return View{}, err
	}
	now := s.now()
	topic := Topic{LessonID: lesson.ID, CourseID: lesson.CourseID, Title: strings.TrimSpace(*fields.title), Active: true,
		TopicableType: kind.Class(), CreatedAt: now, UpdatedAt: now}
	fields.apply(&topic)
	// The content is built before the transaction: a kind may stream a
	// large file to storage, which must not hold the database's writer.
	value, err := kind.Build(ctx, s.env(t, 0), nil, contentInput(f))
	if err != nil {
		return View{}, err
	}
	topic.Content = value
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if fields.order == nil {
			if topic.Position, err = nextPosition(ctx, tx, topic.LessonID); err != nil {
				return err
			}
		}
		if topic.ID, err = insertTopic(ctx, tx, topic); err != nil {
			return err
		}
		if err := enqueue(ctx, tx, t, kind, topic.ID, topic.Content); err != nil {
			return err
		}
		return courses.ContentChanged(ctx, tx, now, topic.CourseID)
	})
	if err != nil {
		s.removeContent(ctx, t, kind, 0, value)
		return View{}, err
	}
	return s.viewByID(ctx, t, topic.ID, false)
}

// apply copies the sent common fields, other than lesson and class, onto
// the topic.
func (fields topicFields) apply(topic *Topic) {
	if fields.title != nil && strings.TrimSpace(*fields.title) != "" {
		topic.Title = strings.TrimSpace(*fields.title)
	}
	if fields.order != nil {
		topic.Position = int(*fields.order)
	}
	if fields.summary != nil {
		topic.Summary = *fields.summary
	}
	if fields.preview != nil {
		topic.Preview = *fields.preview
	}
	if fields.active != nil {
		topic.Active = *fields.active
	}
	if fields.canSkip != nil {
		topic.CanSkip = *fields.canSkip
	}
	if fields.duration != nil {
		topic.Duration = *fields.duration
	}
}

// removeContent deletes a value's files when nothing points at them any
// more. A failure only leaves orphan files, so it is logged, not returned.
func (s *Service) removeContent(ctx context.Context, t *platform.Tenant, kind content.Kind, topicID int64, value json.RawMessage) {
	if kind == nil || value == nil {
		return
	}
	if err := kind.Remove(context.WithoutCancel(ctx), s.env(t, topicID), value); err != nil {
		httpx.Log(ctx).Warn("topics: remove content files", "tenant", t.ID, "topic", topicID, "error", err)
	}
}

// Update changes a topic. Every field is optional; the content is rebuilt
// when content fields are sent or the class changes.
func (s *Service) Update(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, body rawBody) (View, error) {
	topic, _, err := s.editable(ctx, t, p, id)
	if err != nil {
		return View{}, err
	}
	fromCourse := topic.CourseID
	f, err := readForm(ctx, body, formLimits{values: maxFormValues, fileCap: s.uploadCap(ctx, t, p, topic.TopicableType), scanner: s.Scanner})
	if err != nil {
		return View{}, err
	}
	defer f.Close()
	r := newFieldReader(f)
	fields := readTopicFields(r)
	if fields.title != nil && strings.TrimSpace(*fields.title) == "" {
		r.fail("title", "The title field may not be empty.")
	}
	if err := r.err(); err != nil {
		return View{}, err
	}
	oldKind, _ := s.Kinds.ByClass(topic.TopicableType)
	newKind := oldKind
	// Kinds are compared by class: a kind's type need not be comparable.
	classChanged := fields.topicable != nil && *fields.topicable != topic.TopicableType
	if classChanged {
		if newKind, err = s.kind(*fields.topicable, "topicable"); err != nil {
			return View{}, err
		}
	}
	if fields.lesson != nil && *fields.lesson != topic.LessonID {
		lesson, err := editableLesson(ctx, t.DB, p, *fields.lesson)
		if err != nil {
			return View{}, err
		}
		topic.LessonID, topic.CourseID = lesson.ID, lesson.CourseID
		if fields.order == nil {
			topic.Position = -1
		}
	}
	fields.apply(&topic)
	oldValue := topic.Content
	in := contentInput(f)
	switch {
	case classChanged:
		topic.TopicableType = newKind.Class()
		if topic.Content, err = newKind.Build(ctx, s.env(t, topic.ID), nil, in); err != nil {
			return View{}, err
		}
	case hasContent(in) && oldKind == nil:
		return View{}, apperr.Field("topicable", "The content of a topic whose class is not registered cannot be changed.")
	case hasContent(in):
		if topic.Content, err = oldKind.Build(ctx, s.env(t, topic.ID), oldValue, in); err != nil {
			return View{}, err
		}
	}
	changed := classChanged || !sameJSON(oldValue, topic.Content)
	topic.UpdatedAt = s.now()
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if topic.Position < 0 {
			if topic.Position, err = nextPosition(ctx, tx, topic.LessonID); err != nil {
				return err
			}
		}
		if err := updateTopic(ctx, tx, topic); err != nil {
			return err
		}
		if changed {
			if err := enqueue(ctx, tx, t, newKind, topic.ID, topic.Content); err != nil {
				return err
			}
		}
		return courses.ContentChanged(ctx, tx, topic.UpdatedAt, fromCourse, topic.CourseID)
	})
	if err != nil {
		if changed {
			s.removeContent(ctx, t, newKind, topic.ID, topic.Content)
		}
		return View{}, err
	}
	if changed {
		s.removeContent(ctx, t, oldKind, topic.ID, oldValue)
	}
	return s.viewByID(ctx, t, topic.ID, false)
}

// Delete removes a topic with its content, attachments and submissions.
// Deleting a topic that is not there succeeds: the caller's wish holds.
func (s *Service) Delete(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) error {
	topic, _, err := s.editable(ctx, t, p, id)
	if apperr.Is(err, apperr.NotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	var rest *Remnants
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if rest, err = s.remnants(ctx, tx, `SELECT id FROM topics WHERE id = $1`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM topics WHERE id = $1`, id); err != nil {
			return err
		}
		return courses.ContentChanged(ctx, tx, s.now(), topic.CourseID)
	})
	if err != nil {
		return fmt.Errorf("topics: delete topic %d: %w", id, err)
	}
	rest.Remove(ctx, t)
	return nil
}

// deleteBlobs deletes files no row names any more; failures leave orphan
// files and are logged.
func (s *Service) deleteBlobs(ctx context.Context, t *platform.Tenant, keys []string) {
	for _, k := range keys {
		if err := t.Blob.Delete(context.WithoutCancel(ctx), k); err != nil {
			httpx.Log(ctx).Warn("topics: remove file", "tenant", t.ID, "key", k, "error", err)
		}
	}
}

// Get returns one topic with its attachments.
func (s *Service) Get(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (View, error) {
	if _, _, err := s.readable(ctx, t, p, id); err != nil {
		return View{}, err
	}
	return s.viewByID(ctx, t, id, true)
}

// ListQuery filters the admin list.
type ListQuery struct {
	LessonID, CourseID int64
	TopicableType      string
	Title              string
	Offset, Limit      int
}

// List lists topics: every topic for admins, the topics of their own
// courses for tutors.
func (s *Service) List(ctx context.Context, t *platform.Tenant, p *access.Principal, q ListQuery) ([]View, int64, error) {
	if !canBrowse(p) {
		return nil, 0, errUnauthorized
	}
	f := filter{LessonID: q.LessonID, CourseID: q.CourseID, TopicableType: q.TopicableType, Title: q.Title,
		Offset: q.Offset, Limit: q.Limit}
	if !p.Has(access.CourseRead) {
		authored, err := courses.Authored(ctx, t.DB, p.UserID)
		if err != nil {
			return nil, 0, err
		}
		f.CourseIDs = authored
	}
	list, total, err := listTopics(ctx, t.DB, f)
	if err != nil {
		return nil, 0, err
	}
	off, err := s.Kinds.Off(ctx, t)
	if err != nil {
		return nil, 0, err
	}
	out := make([]View, 0, len(list))
	for _, topic := range list {
		v, err := s.view(t, topic, nil, off)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	return out, total, nil
}

// Types lists the registered content classes.
func (s *Service) Types(p *access.Principal) ([]TypeView, error) {
	if !CanReadKinds(p) {
		return nil, errUnauthorized
	}
	out := []TypeView{}
	for _, k := range s.Kinds.Kinds() {
		tv := TypeView{Class: k.Class(), Kind: k.Name()}
		if u, ok := k.(content.Uploads); ok {
			tv.Extensions, tv.MaxUpload = u.Extensions(), u.MaxUpload()
		}
		out = append(out, tv)
	}
	return out, nil
}

// CreateForm is the form data of a create: the classes and the defaults.
func (s *Service) CreateForm(p *access.Principal) (FormView, error) {
	if !canAuthor(p) {
		return FormView{}, errUnauthorized
	}
	types, err := s.Types(p)
	if err != nil {
		return FormView{}, err
	}
	return FormView{Types: types, Defaults: formDefaults{Active: true}}, nil
}

// EditForm is the form data of an edit: the topic, the classes and the
// defaults.
func (s *Service) EditForm(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (FormView, error) {
	if _, _, err := s.editable(ctx, t, p, id); err != nil {
		return FormView{}, err
	}
	form, err := s.CreateForm(p)
	if err != nil {
		return FormView{}, err
	}
	v, err := s.viewByID(ctx, t, id, true)
	if err != nil {
		return FormView{}, err
	}
	form.Topic = &v
	return form, nil
}

// CreateJSON adds a topic as POST /api/admin/topics does with the JSON
// body; topics made elsewhere (the content items an LTI tool returns by
// deep linking) go through it, so permissions and building stay here.
func (s *Service) CreateJSON(ctx context.Context, t *platform.Tenant, p *access.Principal, body []byte) (View, error) {
	return s.Create(ctx, t, p, rawBody{contentType: "application/json", r: bytes.NewReader(body)})
}

// CreateBody adds a topic as POST /api/admin/topics does with a body of
// the content type given (a multipart form streaming a file), for topics
// made from files the platform fetched (a meeting's recording), so caps,
// the malware scan, building and transcoding stay those of an upload.
func (s *Service) CreateBody(ctx context.Context, t *platform.Tenant, p *access.Principal, contentType string, body io.Reader) (View, error) {
	return s.Create(ctx, t, p, rawBody{contentType: contentType, r: body})
}

// UpdateJSON updates a topic as PUT /api/admin/topics/{id} does with the
// JSON body; routes that edit one part of a kind's value (the questions
// of a quiz) go through it, so permissions and rebuilding stay here.
func (s *Service) UpdateJSON(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, body []byte) (View, error) {
	return s.Update(ctx, t, p, id, rawBody{contentType: "application/json", r: bytes.NewReader(body)})
}
