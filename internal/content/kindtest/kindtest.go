// Package kindtest is the conformance suite of content.Kind: Run checks
// one topic kind through the public API of a real server (apitest), as
// blob/blobtest does for blob stores. For each kind it creates a topic,
// sends invalid inputs and reads the refusals, reads the learner's program
// for answers it must not show, completes the topic as a learner through
// the kind's own routes, clones it and compares the clone, and deletes
// both, listing the tenant's blob store to see that no file is left.
//
// The suite knows no kind package: a Case says in API terms what a kind
// takes and how a learner completes it, and every call goes through the
// typed client (package client).
package kindtest

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/config"
)

// Case describes one topic kind for the suite.
type Case struct {
	// Class is the topicable class, as GET /api/admin/topics/types lists it.
	Class string
	// Kind is the kind name topic views carry (richtext, pdf, ...).
	Kind string
	// Setup prepares the tenant before anything else (a setting, an
	// external tool); optional.
	Setup func(t *testing.T, w *World)
	// Create returns a valid create input; the suite fills in the lesson,
	// the title and the class. It may upload a package first through the
	// kind's own upload route.
	Create func(t *testing.T, w *World) Input
	// Files says that a created topic stores files of its own in the
	// tenant's blob store, which its clone copies and its delete removes.
	Files bool
	// Shared are the blob key prefixes of a store of packages the topic
	// plays by reference (an uploaded SCORM package, H5P content and
	// libraries): a clone shares them and they outlive the topics, as
	// resources of their own. The suite checks that clone and delete leave
	// them as the create made them, and that no file outside them is left.
	Shared []string
	// Invalid are create inputs the API refuses.
	Invalid []Invalid
	// NotEmpty are the fields of an update that may not be sent empty:
	// each, sent "" alone, answers 422 naming it and changes nothing,
	// rather than being taken for a field left out.
	NotEmpty []string
	// Clears are the optional fields an update clears when sent empty:
	// each, sent "" alone, is taken (200) and changes the topic, whose
	// create set it, rather than being taken for a field left out.
	Clears []string
	// Answers are texts the learner's program must not carry (right
	// options, solutions): the author's view may hold them.
	Answers []string
	// AuthorSees says that the author's view of the topic holds the
	// Answers, which shows that the learner's view leaves them out rather
	// than never having them.
	AuthorSees bool
	// SelfCompleting says that a learner's progress write may not mark the
	// topic complete: only its own activity does.
	SelfCompleting bool
	// Complete completes the topic as the learner (World.Student) through
	// the kind's public routes; the suite then reads the course progress.
	Complete func(t *testing.T, w *World, topic *client.View)
	// Options adjust the server, for kinds that need a peer on the
	// loopback network (an oEmbed provider); optional.
	Configure func(*config.Config)
}

// Input is a topic create: a JSON body or a multipart form (for files).
// The suite sets Lesson, Title and Topicable unless already set.
type Input struct {
	JSON *client.PostAdminTopicsBody
	Form *client.PostAdminTopicsForm
}

// Invalid is a create input the API refuses, and how.
type Invalid struct {
	Name string
	// Input returns the refused input (lesson, title and class filled in
	// by the suite unless set).
	Input func(t *testing.T, w *World) Input
	// Status is the status of the refusal (422, 413...).
	Status int
	// Field, when set, must be a key of the refusal's errors.
	Field string
	// Message, when set, must be part of the message or a field message.
	Message string
	// Fields and Says are, for an input with several problems, the keys
	// of its errors and the parts of its field messages that must all be
	// there: every problem is named at once.
	Fields []string
	Says   []string
}

// World is one tenant prepared for a kind: a published course with one
// lesson, authored by the admin, with the student assigned.
type World struct {
	Env *apitest.Env
	// Admin, Tutor, Student and Anonymous are typed clients of the roles.
	Admin, Tutor, Student, Anonymous *client.Client
	// StudentID is the learner's user id.
	StudentID int64
	Course    int64
	Lesson    int64
}

// Ctx is the context of the world's calls.
func (w *World) Ctx() context.Context { return w.Env.T.Context() }

// Run runs the suite for each case, on every backend apitest offers. The
// kinds share one server per backend (starting one is most of a case's
// time), each in a course of its own; the server takes every case's
// configuration.
func Run(t *testing.T, cases []Case) {
	configure := func(cfg *config.Config) {
		for _, c := range cases {
			if c.Configure != nil {
				c.Configure(cfg)
			}
		}
	}
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) {
			env := apitest.New(t, backend, apitest.Options{Configure: configure})
			for _, c := range cases {
				t.Run(c.Kind, func(t *testing.T) {
					runCase(t, env, c)
				})
			}
		})
	}
}

func runCase(t *testing.T, env *apitest.Env, c Case) {
	w := newWorld(t, env)
	if c.Setup != nil {
		c.Setup(t, w)
	}
	ctx := w.Ctx()

	types := apitest.Must(w.Admin.GetAdminTopicsTypes(ctx))(t)
	if !slices.ContainsFunc(types, func(tv client.TypeView) bool { return tv.Class == c.Class && tv.Kind == c.Kind }) {
		t.Fatalf("GET /api/admin/topics/types lists no %s of kind %s: %+v", c.Class, c.Kind, types)
	}

	in := c.Create(t, w)
	before := blobKeys(t, env)
	var topic *client.View
	t.Run("create", func(t *testing.T) {
		topic = create(t, w, c, in)
	})
	if topic == nil {
		t.FailNow()
	}
	mine := own(c, added(before, blobKeys(t, env)))
	if c.Files && len(mine) == 0 {
		t.Errorf("the %s topic stored no file", c.Kind)
	}

	t.Run("invalid", func(t *testing.T) {
		for _, inv := range c.Invalid {
			t.Run(inv.Name, func(t *testing.T) { refuse(t, w, c, inv) })
		}
	})
	t.Run("empty fields", func(t *testing.T) { emptyFields(t, w, c, topic) })
	t.Run("learner view", func(t *testing.T) { learnerView(t, w, c, topic) })
	t.Run("completion", func(t *testing.T) { complete(t, w, c, topic) })
	t.Run("clone and delete", func(t *testing.T) { cloneAndDelete(t, w, c, topic, before) })
}

// newWorld makes the course. A second topic, plain text, stays
// unfinished, so completing the kind's topic never finishes the course
// (whose certificate would add files of its own).
func newWorld(t *testing.T, env *apitest.Env) *World {
	t.Helper()
	cs := env.Clients()
	w := &World{Env: env, Admin: cs.Admin, Tutor: cs.Tutor, Student: cs.Student, Anonymous: cs.Anonymous,
		StudentID: env.As("student").ID}
	ctx := w.Ctx()
	course := apitest.Must(w.Admin.PostAdminCourses(ctx, client.CourseBody{Title: "Kinds", Status: client.Ptr("published")}))(t)
	w.Course = course.ID
	lesson := apitest.Must(w.Admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: w.Course, Title: "Lesson"}))(t)
	w.Lesson = lesson.ID
	apitest.Must(w.Admin.PostAdminCoursesIDAccess(ctx, w.Course,
		client.AssignInputBody{Users: []client.GrantBody{{ID: w.StudentID}}}))(t)
	apitest.Must(w.Admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: w.Lesson, Title: "Still to read",
		Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`, HTML: client.Ptr("<p>Later.</p>")}))(t)
	return w
}

// fill sets the common fields of a create the case left unset.
func fill(w *World, c Case, in Input, title string) Input {
	if in.JSON != nil {
		b := *in.JSON
		if b.Lesson == 0 {
			b.Lesson = w.Lesson
		}
		if b.Title == "" {
			b.Title = title
		}
		if b.Topicable == "" {
			b.Topicable = c.Class
		}
		in.JSON = &b
	}
	if in.Form != nil {
		f := *in.Form
		if f.Lesson == 0 {
			f.Lesson = w.Lesson
		}
		if f.Title == "" {
			f.Title = title
		}
		if f.Topicable == "" {
			f.Topicable = c.Class
		}
		in.Form = &f
	}
	return in
}

// post sends a create as the admin.
func post(w *World, in Input) (*client.View, error) {
	switch {
	case in.JSON != nil:
		return w.Admin.PostAdminTopics(w.Ctx(), *in.JSON)
	case in.Form != nil:
		return w.Admin.PostAdminTopicsMultipart(w.Ctx(), *in.Form)
	}
	return nil, fmt.Errorf("kindtest: an Input with neither JSON nor Form")
}

func create(t *testing.T, w *World, c Case, in Input) *client.View {
	t.Helper()
	in = fill(w, c, in, "A "+c.Kind+" topic")
	topic := apitest.Must(post(w, in))(t)
	if topic.Kind != c.Kind || topic.TopicableType != c.Class || topic.LessonID != w.Lesson || topic.CourseID != w.Course ||
		topic.Topicable == nil {
		t.Fatalf("created topic: %+v", topic)
	}
	got := apitest.Must(w.Admin.GetAdminTopicsID(w.Ctx(), topic.ID))(t)
	if got.ID != topic.ID || got.Kind != c.Kind {
		t.Fatalf("topic read back: %+v", got)
	}
	return got
}

func refuse(t *testing.T, w *World, c Case, inv Invalid) {
	// The input first: it may upload a package, which stays.
	in := fill(w, c, inv.Input(t, w), "Refused "+inv.Name)
	before := blobKeys(t, w.Env)
	topics := apitest.Must(w.Admin.GetAdminTopics(w.Ctx(), client.GetAdminTopicsParams{LessonID: client.Ptr(w.Lesson)}))(t)
	_, err := post(w, in)
	e := apitest.Refused(t, err, inv.Status)
	if inv.Field != "" && len(e.Errors[inv.Field]) == 0 {
		t.Errorf("no error for field %s: %v", inv.Field, e)
	}
	if inv.Message != "" && !apitest.Says(e, inv.Message) {
		t.Errorf("the refusal does not say %q: %v", inv.Message, e)
	}
	for _, f := range inv.Fields {
		if len(e.Errors[f]) == 0 {
			t.Errorf("no error for field %s: %v", f, e)
		}
	}
	for _, s := range inv.Says {
		if !apitest.Says(e, s) {
			t.Errorf("the refusal does not say %q: %v", s, e)
		}
	}
	if e.Message == "" {
		t.Errorf("a refusal without a message")
	}
	after := apitest.Must(w.Admin.GetAdminTopics(w.Ctx(), client.GetAdminTopicsParams{LessonID: client.Ptr(w.Lesson)}))(t)
	if after.Meta.Total != topics.Meta.Total {
		t.Errorf("a refused create stored a topic: %d topics, want %d", after.Meta.Total, topics.Meta.Total)
	}
	if left := added(before, blobKeys(t, w.Env)); len(left) > 0 {
		t.Errorf("a refused create left files: %v", left)
	}
}

// learnerTopic finds the topic in the learner's program.
func learnerTopic(t *testing.T, w *World, id int64) *client.LearnerTopic {
	t.Helper()
	program := apitest.Must(w.Student.GetCoursesIDProgram(w.Ctx(), w.Course))(t)
	var find func(ls []client.LearnerLesson) *client.LearnerTopic
	find = func(ls []client.LearnerLesson) *client.LearnerTopic {
		for i := range ls {
			for j := range ls[i].Topics {
				if ls[i].Topics[j].ID == id {
					return &ls[i].Topics[j]
				}
			}
			if tp := find(ls[i].Lessons); tp != nil {
				return tp
			}
		}
		return nil
	}
	tp := find(program.Lessons)
	if tp == nil {
		t.Fatalf("topic %d is not in the learner's program: %+v", id, program.Lessons)
	}
	return tp
}

func learnerView(t *testing.T, w *World, c Case, topic *client.View) {
	tp := learnerTopic(t, w, topic.ID)
	if tp.Kind != c.Kind || tp.TopicableType != c.Class || tp.Topicable == nil {
		t.Fatalf("the learner's topic: %+v", tp)
	}
	raw, err := json.Marshal(tp)
	if err != nil {
		t.Fatal(err)
	}
	author, err := json.Marshal(topic.Topicable)
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range c.Answers {
		if strings.Contains(string(raw), answer) {
			t.Errorf("the learner's program shows %q: %s", answer, raw)
		}
		if c.AuthorSees && !strings.Contains(string(author), answer) {
			t.Errorf("the author's view lacks %q: %s", answer, author)
		}
	}
}

// status is the learner's status of the topic in the course progress.
func status(t *testing.T, w *World, topic int64) int64 {
	t.Helper()
	p := apitest.Must(w.Student.GetCoursesProgressID(w.Ctx(), w.Course))(t)
	for _, tp := range p.Topics {
		if tp.TopicID == topic {
			return tp.Status
		}
	}
	t.Fatalf("topic %d not in the learner's progress: %+v", topic, p.Topics)
	return -1
}

func complete(t *testing.T, w *World, c Case, topic *client.View) {
	if c.Complete == nil {
		t.Skip("no learner completion path for this kind")
	}
	if s := status(t, w, topic.ID); s == 1 {
		t.Fatalf("the topic is complete before the learner did anything")
	}
	if c.SelfCompleting {
		_, err := w.Student.PatchCoursesProgressID(w.Ctx(), w.Course, client.WriteInputBody{
			Progress: []client.ProgressWrite{{TopicID: topic.ID, Status: 1}}})
		apitest.Refused(t, err, 422)
		if s := status(t, w, topic.ID); s == 1 {
			t.Fatalf("a refused progress write completed the topic")
		}
	}
	c.Complete(t, w, topic)
	if s := status(t, w, topic.ID); s != 1 {
		t.Fatalf("after the learner's activity the topic's status is %d, want 1 (complete)", s)
	}
}

func cloneAndDelete(t *testing.T, w *World, c Case, topic *client.View, baseline []string) {
	ctx := w.Ctx()
	orig := apitest.Must(w.Admin.GetAdminTopicsID(ctx, topic.ID))(t)
	all := added(baseline, blobKeys(t, w.Env))
	origKeys := own(c, all)
	shared := sharedKeys(c, all)
	clone := apitest.Must(w.Admin.PostAdminTopicsIDClone(ctx, topic.ID, client.CloneInputBody{}))(t)
	if clone.ID == orig.ID || clone.Kind != orig.Kind || clone.TopicableType != orig.TopicableType || clone.LessonID != orig.LessonID ||
		clone.Title != orig.Title {
		t.Fatalf("clone: %+v of %+v", clone, orig)
	}
	cloned := apitest.Must(w.Admin.GetAdminTopicsID(ctx, clone.ID))(t)
	if a, b := comparable(t, orig.Topicable, orig.ID), comparable(t, cloned.Topicable, clone.ID); a != b {
		t.Errorf("the clone's content differs:\n%s\n%s", a, b)
	}
	withClone := own(c, added(baseline, blobKeys(t, w.Env)))
	cloneKeys := added(origKeys, withClone)
	if c.Files && len(cloneKeys) == 0 {
		t.Errorf("the clone stored no files of its own")
	}

	// The original goes first: the clone keeps its own files and its view.
	apitest.OK(t, w.Admin.DeleteAdminTopicsID(ctx, orig.ID))
	apitest.OK(t, w.Admin.DeleteAdminTopicsID(ctx, orig.ID)) // idempotent
	_, err := w.Admin.GetAdminTopicsID(ctx, orig.ID)
	apitest.Refused(t, err, 404)
	now := blobKeys(t, w.Env)
	for _, k := range cloneKeys {
		if !slices.Contains(now, k) {
			t.Errorf("deleting the original removed the clone's file %s", k)
		}
	}
	for _, k := range origKeys {
		if slices.Contains(now, k) {
			t.Errorf("the deleted topic left its file %s", k)
		}
	}
	again := apitest.Must(w.Admin.GetAdminTopicsID(ctx, clone.ID))(t)
	if a, b := comparable(t, cloned.Topicable, clone.ID), comparable(t, again.Topicable, clone.ID); a != b {
		t.Errorf("the clone changed when the original was deleted:\n%s\n%s", a, b)
	}

	apitest.OK(t, w.Admin.DeleteAdminTopicsID(ctx, clone.ID))
	left := added(baseline, blobKeys(t, w.Env))
	if l := own(c, left); len(l) > 0 {
		t.Errorf("deleting both topics left files in the tenant's blob store: %v", l)
	}
	if kept := sharedKeys(c, left); !slices.Equal(kept, shared) {
		t.Errorf("the shared package store changed: %d files after the create, %d after clone and delete", len(shared), len(kept))
	} else if len(kept) > 0 {
		t.Logf("%d files of the shared package stay, as a resource of their own", len(kept))
	}
}

// own leaves out of keys those of the case's shared package stores.
func own(c Case, keys []string) []string {
	var out []string
	for _, k := range keys {
		if !isShared(c, k) {
			out = append(out, k)
		}
	}
	return out
}

func sharedKeys(c Case, keys []string) []string {
	var out []string
	for _, k := range keys {
		if isShared(c, k) {
			out = append(out, k)
		}
	}
	return out
}

func isShared(c Case, key string) bool {
	return slices.ContainsFunc(c.Shared, func(p string) bool { return strings.HasPrefix(key, p) })
}

// comparable is a topic's content as JSON with what differs between two
// equal contents blanked: signed links and the expiry or signature they
// carry, blob keys and ids of copied things.
func comparable(t *testing.T, v any, topicID int64) string {
	t.Helper()
	raw, err := json.Marshal(blank(v))
	if err != nil {
		t.Fatal(err)
	}
	// Links naming the topic itself (its launch route) name the clone in
	// the clone.
	self := regexp.MustCompile(`/` + strconv.FormatInt(topicID, 10) + `\b`)
	return self.ReplaceAllString(string(raw), "/<topic>")
}

// copyKeys are fields naming the copy a clone made of something: they
// differ between a topic and its clone by design.
var copyKeys = map[string]bool{"content_id": true, "embed_url": true, "play_url": true}

func blank(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if copyKeys[k] {
				out[k] = "<copy>"
				continue
			}
			out[k] = blank(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = blank(x)
		}
		return out
	case string:
		if strings.Contains(v, "/api/files/") || strings.Contains(v, "signature=") || strings.Contains(v, "expires=") {
			return "<signed>"
		}
	}
	return v
}

// blobKeys lists every file of the default tenant's blob store.
func blobKeys(t *testing.T, env *apitest.Env) []string {
	t.Helper()
	tn, release := env.OpenTenant(env.Tenant)
	defer release()
	var keys []string
	err := tn.Blob.List(context.Background(), "", func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// added lists the keys of now that were not in before.
func added(before, now []string) []string {
	var out []string
	for _, k := range now {
		if !slices.Contains(before, k) {
			out = append(out, k)
		}
	}
	return out
}

// emptyFields sends each of the case's NotEmpty fields empty in an update.
// The body is raw JSON: the typed client cannot send "" for a field it
// types as a number, which a form update (all text) can.
func emptyFields(t *testing.T, w *World, c Case, topic *client.View) {
	token := w.Env.As("admin").Token
	path := "/api/admin/topics/" + strconv.FormatInt(topic.ID, 10)
	before := apitest.Must(w.Admin.GetAdminTopicsID(w.Ctx(), topic.ID))(t)
	for _, field := range c.NotEmpty {
		res := w.Env.Call(t, 422, "PATCH", path, token, map[string]string{field: ""})
		if errs, _ := res.Get("errors").(map[string]any); errs[field] == nil {
			t.Errorf("%s sent empty: 422 without errors.%s: %s", field, field, res.Body)
		}
	}
	after := apitest.Must(w.Admin.GetAdminTopicsID(w.Ctx(), topic.ID))(t)
	if !reflect.DeepEqual(before.Topicable, after.Topicable) {
		t.Errorf("refused updates changed the topic:\n%+v\n%+v", before.Topicable, after.Topicable)
	}
	for _, field := range c.Clears {
		was := apitest.Must(w.Admin.GetAdminTopicsID(w.Ctx(), topic.ID))(t)
		w.Env.Call(t, 200, "PATCH", path, token, map[string]string{field: ""})
		now := apitest.Must(w.Admin.GetAdminTopicsID(w.Ctx(), topic.ID))(t)
		if reflect.DeepEqual(was.Topicable, now.Topicable) {
			t.Errorf("%s sent empty changed nothing: %+v", field, now.Topicable)
		}
	}
}
