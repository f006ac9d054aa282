// This file is the LiaScript content kind: a course written in
// LiaScript's Markdown, played by LiaScript's own runtime. The Service
// stores the courses with their assets and records learners' section
// visits and quiz results; this file parses a course and says when a
// learner's progress completes the topic.

package liascript

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/platform"
)

// Class is the topicable class of LiaScript topics.
const Class = `Lms\TopicTypeLiaScript\Models\LiaScript`

// Completion rules of a topic.
const (
	// All: every section visited and every quiz solved (the default).
	All = "all"
	// Sections: every section visited.
	Sections = "sections"
	// Quizzes: every quiz solved (a course without quizzes: every section
	// visited).
	Quizzes = "quizzes"
)

// Limits of a course.
const (
	MaxMarkdown = 4 << 20
	MaxUpload   = 128 << 20
)

// Value is what a LiaScript topic stores.
type Value struct {
	Course     int64     `json:"course"`
	Completion string    `json:"completion"`
	Structure  Structure `json:"structure"`
}

// stored is Value with its key kept in the database.
type stored struct {
	Value
	Key string `json:"markdown_key"`
}

// Course is a stored course.
type Course struct {
	ID        int64
	Structure Structure
	// Prefix is the blob prefix of the course's files; its Markdown is
	// prefix + MarkdownFile.
	Prefix string
}

// MarkdownFile is the name the course's Markdown is stored under.
const MarkdownFile = "course.md"

// Courses is the course store the kind builds topics on (the Service
// of this package).
type Courses interface {
	// Add stores a course from Markdown text, or from an uploaded .md or
	// .zip (the course's Markdown with its assets).
	AddMarkdown(ctx context.Context, t *platform.Tenant, markdown string) (Course, error)
	AddFile(ctx context.Context, t *platform.Tenant, f content.File, field string) (Course, error)
	Course(ctx context.Context, t *platform.Tenant, id int64) (Course, error)
}

// Kind is the LiaScript kind.
type Kind struct {
	Courses Courses
}

func (*Kind) Class() string        { return Class }
func (*Kind) Name() string         { return "liascript" }
func (*Kind) MaxUpload() int64     { return MaxUpload }
func (*Kind) Extensions() []string { return []string{".md", ".zip"} }

// Fields documents the kind's fields of a topic create or update.
func (*Kind) Fields() map[string]*huma.Schema {
	return map[string]*huma.Schema{
		"course": {Type: huma.TypeInteger, Description: "LiaScript: id of a course uploaded with POST /api/admin/liascript; alternatives: markdown, or an .md or .zip in file."},
		"liascriptCompletion": {Type: huma.TypeString, Enum: []any{All, Sections, Quizzes},
			Description: "LiaScript: when the topic completes: all (default: every section visited and every quiz solved), sections (every section visited), quizzes (every quiz solved)."},
	}
}

// Build takes markdown (text), file (.md or .zip with assets) or course
// (an uploaded course's id), and liascriptCompletion. On update, a topic
// sent no new source keeps its course.
func (k *Kind) Build(ctx context.Context, env content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	v := stored{Value: Value{Completion: All}}
	if old != nil {
		if err := json.Unmarshal(old, &v); err != nil {
			return nil, fmt.Errorf("liascript: parse value: %w", err)
		}
	}
	problems := apperr.Problems{}
	if c, ok := in.Sent("liascriptCompletion", "completion"); ok {
		c = strings.TrimSpace(c)
		if c != All && c != Sections && c != Quizzes {
			problems.Add("liascriptCompletion", "The completion must be all, sections or quizzes.")
		}
		v.Completion = c
	}
	// Sent: a source sent empty is refused, not taken for none.
	md, hasMD := in.Sent("markdown")
	f, field, hasFile := content.FileFrom(in, "file")
	idText, hasID := in.Sent("course")
	sources := 0
	for _, has := range []bool{hasMD, hasFile, hasID} {
		if has {
			sources++
		}
	}
	if sources > 1 {
		problems.Add("markdown", "Send one source: markdown, file or course.")
	}
	if len(problems) > 0 {
		// Markdown text is named with the other problems; a file or a
		// course is read only for a topic that can be stored.
		if hasMD && sources == 1 {
			problems.Join(checkMarkdown([]byte(md), "markdown"))
		}
		return nil, problems.Err()
	}
	var c Course
	var err error
	switch {
	case hasMD:
		c, err = k.Courses.AddMarkdown(ctx, env.Tenant, md)
	case hasFile:
		c, err = k.Courses.AddFile(ctx, env.Tenant, f, field)
	case hasID:
		id, perr := strconv.ParseInt(strings.TrimSpace(idText), 10, 64)
		if perr != nil || id < 1 {
			return nil, apperr.Field("course", "The course must be the id of an uploaded LiaScript course.")
		}
		c, err = k.Courses.Course(ctx, env.Tenant, id)
		if apperr.Is(err, apperr.NotFound) {
			return nil, apperr.Field("course", "The course must be the id of an uploaded LiaScript course.")
		}
	case old == nil:
		return nil, apperr.Field("markdown", "The markdown field (or an .md or .zip in file, or a course id) is required.")
	default:
		return json.Marshal(v)
	}
	if err != nil {
		return nil, err
	}
	v.Course, v.Structure, v.Key = c.ID, c.Structure, c.Prefix+MarkdownFile
	return json.Marshal(v)
}

// Copy shares the course: the clone plays the same Markdown.
func (*Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove keeps the course, which other topics may play.
func (*Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// View is the course's structure, its rule, a signed link to its
// Markdown, and the signed link of the player page that plays it with
// LiaScript's runtime.
type View struct {
	Value
	MarkdownURL string `json:"markdown_url"`
	PlayURL     string `json:"play_url" doc:"The player page (LiaScript's runtime in a sandbox, fed this course): frame it with sandbox=\"allow-scripts allow-popups allow-forms allow-modals\"."`
}

func (*Kind) View(env content.Env, value json.RawMessage) (any, error) {
	v, err := parseStored(value)
	if err != nil {
		return nil, err
	}
	return View{Value: v.Value, MarkdownURL: env.FileURL(v.Key), PlayURL: PlayURL(env.Tenant, TopicGrant, env.TopicID, env.Now)}, nil
}

// Grant purposes of player links: a topic's (progress is reported) or a
// course's, which records nothing: an author's preview, or a layout's
// LiaScriptLesson.
const (
	TopicGrant  = "liascript"
	CourseGrant = "liascript-course"
)

// playTTL is how long a player link works; pages fetch the topic again
// long before.
const playTTL = 6 * time.Hour

// PlayURL is the signed link of the player page of a topic (TopicGrant,
// id a topic) or a course (CourseGrant, id a course):
// /api/liascript/play/<id>-<expires>-<signature>/. The course's Markdown
// and assets are served under it by their relative paths.
func PlayURL(t *platform.Tenant, purpose string, id int64, now time.Time) string {
	return "/api/liascript/play/" + content.SignGrant(t.URLKey, purpose, id, content.GrantExpiry(now, playTTL)) + "/"
}

// Prefix is the blob prefix of the files of a topic's course.
func Prefix(value json.RawMessage) (string, error) {
	v, err := parseStored(value)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(v.Key, MarkdownFile), nil
}

// CompletesItself: a LiaScript topic completes through its progress route.
func (*Kind) CompletesItself(json.RawMessage) bool { return true }

// parseStored reads a stored value.
func parseStored(value json.RawMessage) (stored, error) {
	var v stored
	if err := json.Unmarshal(value, &v); err != nil {
		return v, fmt.Errorf("liascript: parse value: %w", err)
	}
	return v, nil
}

// ParseValue reads a stored value.
func ParseValue(value json.RawMessage) (Value, error) {
	v, err := parseStored(value)
	return v.Value, err
}

// Complete applies the topic's rule to the sections visited and quizzes
// solved.
func (v Value) Complete(visited, solved int) bool {
	allSections := visited >= len(v.Structure.Sections)
	allQuizzes := solved >= v.Structure.Quizzes
	switch v.Completion {
	case Sections:
		return allSections
	case Quizzes:
		if v.Structure.Quizzes == 0 {
			return allSections
		}
		return allQuizzes
	}
	return allSections && allQuizzes
}
