// Package project is the project content kind: instructions for a piece
// of work learners upload to the topic, with the file types and size the
// upload may have. Package topics stores the submissions; this package
// says what a submission may be.
package project

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/kinds/file"
	"github.com/lms-platform/lms/internal/kinds/richtext"
)

// Class is the topicable class of project topics.
const Class = `Lms\TopicTypeProject\Models\Project`

const (
	// DefaultMaxSize is a submission's cap when the author sets none.
	DefaultMaxSize = 20 << 20
	// MaxSize is the largest cap an author may set.
	MaxSize = 100 << 20
	// maxInstructions caps the Markdown of the instructions.
	maxInstructions = 1 << 20
)

// DefaultAccept are the extensions accepted when the author lists none:
// documents, archives, images, audio and video, nothing a browser runs.
var DefaultAccept = []string{".csv", ".doc", ".docx", ".gif", ".jpeg", ".jpg", ".md", ".mp3", ".mp4", ".odp", ".ods",
	".odt", ".pdf", ".png", ".ppt", ".pptx", ".txt", ".webp", ".xls", ".xlsx", ".zip"}

// refused are extensions no author may accept: pages and scripts a
// browser or a desktop would run when a tutor opens the download.
var refused = []string{".htm", ".html", ".xhtml", ".svg", ".js", ".mjs", ".exe", ".bat", ".cmd", ".com", ".sh",
	".ps1", ".msi", ".scr", ".jar", ".vbs", ".hta", ".lnk"}

var extPattern = regexp.MustCompile(`^\.[a-z0-9]{1,10}$`)

// Value is what a project topic stores and shows.
type Value struct {
	// Instructions is sanitised HTML, rendered from Markdown.
	Instructions string   `json:"instructions"`
	Markdown     string   `json:"markdown,omitempty"`
	Accept       []string `json:"accept"`
	MaxSize      int64    `json:"max_size"`
}

// Kind is the project kind.
type Kind struct{}

func (Kind) Class() string { return Class }
func (Kind) Name() string  { return "project" }

// Build takes instructions (Markdown), accept (extensions, as a JSON array
// or separated by commas or spaces) and max_size (bytes). On update,
// fields not sent keep their old values.
func (Kind) Build(_ context.Context, _ content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	v := Value{Accept: DefaultAccept, MaxSize: DefaultMaxSize}
	if old != nil {
		prev, err := parse(old)
		if err != nil {
			return nil, err
		}
		v = prev
	}
	errs := map[string][]string{}
	if md, ok := in.Sent("instructions", "markdown"); ok {
		if len(md) > maxInstructions {
			errs["instructions"] = append(errs["instructions"], "The instructions may not be greater than 1 MiB.")
		} else {
			html, err := richtext.Render(md)
			if err != nil {
				return nil, err
			}
			v.Instructions, v.Markdown = html, md
		}
	} else if s, ok := stringValue(in.Value); ok {
		html, err := richtext.Render(s)
		if err != nil {
			return nil, err
		}
		v.Instructions, v.Markdown = html, s
	}
	if raw, ok := in.Sent("accept"); ok && strings.TrimSpace(raw) == "" {
		// Sent empty: the author lists none, as on a create without it.
		v.Accept = DefaultAccept
	} else if ok {
		accept, msg := parseAccept(raw)
		if msg != "" {
			errs["accept"] = append(errs["accept"], msg)
		}
		v.Accept = accept
	}
	if raw, ok := in.Sent("max_size", "maxSize"); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
		if err != nil || n < 1 || n > MaxSize {
			errs["max_size"] = append(errs["max_size"], fmt.Sprintf("The max_size must be a number of bytes from 1 to %d.", MaxSize))
		}
		v.MaxSize = n
	}
	if len(errs) > 0 {
		return nil, apperr.Validation(errs)
	}
	if old != nil {
		if prev, _ := parse(old); equal(prev, v) {
			return old, nil
		}
	}
	return json.Marshal(v)
}

func stringValue(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil || s == "" {
		return "", false
	}
	return s, true
}

// parseAccept reads a list of extensions; the message is empty when the
// list is valid.
func parseAccept(raw string) ([]string, string) {
	var items []string
	if strings.HasPrefix(strings.TrimSpace(raw), "[") {
		if err := json.Unmarshal([]byte(raw), &items); err != nil {
			return nil, "The accept field must be a list of file extensions."
		}
	} else {
		items = strings.FieldsFunc(raw, func(r rune) bool { return r == ',' || r == ' ' || r == ';' })
	}
	out := []string{}
	for _, item := range items {
		ext := strings.ToLower(strings.TrimSpace(item))
		if ext == "" {
			continue
		}
		if !strings.HasPrefix(ext, ".") {
			ext = "." + ext
		}
		if !extPattern.MatchString(ext) {
			return nil, fmt.Sprintf("The accept field holds an invalid extension: %q.", item)
		}
		if slices.Contains(refused, ext) {
			return nil, fmt.Sprintf("Submissions of type %s cannot be accepted.", ext)
		}
		if !slices.Contains(out, ext) {
			out = append(out, ext)
		}
	}
	if len(out) == 0 || len(out) > 50 {
		return nil, "The accept field must list from 1 to 50 file extensions."
	}
	slices.Sort(out)
	return out, ""
}

// Copy returns the value: a project holds no files of its own.
func (Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove has nothing to delete; submissions belong to the topic.
func (Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// View shows the instructions and the rules of submissions.
func (Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	return parse(value)
}

// SubmissionRules says which files a learner may submit to a topic with
// this value: one of the extensions, of at most maxSize bytes.
func (Kind) SubmissionRules(value json.RawMessage) (accept []string, maxSize int64, err error) {
	v, err := parse(value)
	if err != nil {
		return nil, 0, err
	}
	return v.Accept, v.MaxSize, nil
}

// CheckSubmission refuses a submission whose content is not of the type
// its extension names, as topic uploads are checked: an HTML page named
// x.pdf is not a PDF.
func (Kind) CheckSubmission(f content.File, field string) error {
	return file.CheckContent(f, field)
}

func parse(value json.RawMessage) (Value, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return v, fmt.Errorf("project: parse value: %w", err)
	}
	if len(v.Accept) == 0 {
		v.Accept = DefaultAccept
	}
	if v.MaxSize <= 0 {
		v.MaxSize = DefaultMaxSize
	}
	return v, nil
}

func equal(a, b Value) bool {
	return a.Instructions == b.Instructions && a.Markdown == b.Markdown && a.MaxSize == b.MaxSize && slices.Equal(a.Accept, b.Accept)
}
