// Package richtext is the rich text content kind: HTML written by the
// author, or Markdown the server renders to HTML. Stored HTML is always
// sanitised, so a topic can be shown to learners as it is.
package richtext

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
)

// Class is the topicable class of rich text topics.
const Class = `Lms\TopicTypes\Models\TopicContent\RichText`

// MaxLength caps the HTML and the Markdown of a topic, in bytes.
const MaxLength = 2 << 20

// Value is what a rich text topic stores and shows: the sanitised HTML
// and, when the author wrote Markdown, its source.
type Value struct {
	HTML     string `json:"html"`
	Markdown string `json:"markdown,omitempty"`
}

// Kind is the rich text kind.
type Kind struct{}

func (Kind) Class() string { return Class }
func (Kind) Name() string  { return "richtext" }

// Build takes html and/or markdown (fields, or a generic value that is an
// object with them or a string of HTML). HTML given is sanitised and kept
// with any Markdown beside it; Markdown alone is rendered. An update that
// sends neither keeps the old value.
func (Kind) Build(_ context.Context, _ content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	htmlText, hasHTML := in.Text("html")
	md, hasMD := in.Text("markdown")
	if !hasHTML && !hasMD {
		var s string
		if len(in.Value) > 0 && json.Unmarshal(in.Value, &s) == nil && s != "" {
			htmlText, hasHTML = s, true
		}
	}
	if _, sent := in.Sent("html", "markdown"); sent && !hasHTML && !hasMD {
		// Sent empty, not left out: an update cannot empty the text.
		field := "html"
		if _, ok := in.Sent("html"); !ok {
			field = "markdown"
		}
		return nil, apperr.Field(field, "The html or markdown field must not be empty.")
	}
	if !hasHTML && !hasMD {
		if old != nil {
			return old, nil
		}
		return nil, apperr.Field("html", "The html or markdown field is required.")
	}
	if len(htmlText) > MaxLength {
		return nil, apperr.Field("html", "The html may not be greater than 2 MiB.")
	}
	if len(md) > MaxLength {
		return nil, apperr.Field("markdown", "The markdown may not be greater than 2 MiB.")
	}
	v := Value{Markdown: md}
	if hasHTML {
		v.HTML = Sanitize(htmlText)
	} else {
		rendered, err := Render(md)
		if err != nil {
			return nil, err
		}
		v.HTML = rendered
	}
	return json.Marshal(v)
}

// Copy returns the value: rich text holds no files.
func (Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove has nothing to delete.
func (Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// View shows the stored value; it was sanitised when it was built.
func (Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return nil, fmt.Errorf("richtext: view: %w", err)
	}
	return v, nil
}

// Render turns Markdown (GitHub flavoured) into sanitised HTML. Raw HTML
// in the Markdown is passed to the sanitiser, not dropped, so authors may
// mix both.
func Render(markdown string) (string, error) {
	var buf bytes.Buffer
	if err := markdownRenderer().Convert([]byte(markdown), &buf); err != nil {
		return "", fmt.Errorf("richtext: render markdown: %w", err)
	}
	return Sanitize(buf.String()), nil
}

// Sanitize keeps what a course author needs (text formatting, links,
// images, tables, headings, lists, code) and removes scripts, styles,
// event handlers, frames, forms and URLs of any scheme but http, https and
// mailto.
func Sanitize(htmlText string) string {
	return policy().Sanitize(htmlText)
}

// The policy and the renderer are built once and never changed after, so
// sharing them between requests and tenants is safe.
var (
	policy           = sync.OnceValue(newPolicy)
	markdownRenderer = sync.OnceValue(newRenderer)
)

var languageClass = regexp.MustCompile(`^language-[A-Za-z0-9_+#-]{1,32}$`)

func newPolicy() *bluemonday.Policy {
	p := bluemonday.UGCPolicy()
	// Code blocks keep the language class Markdown renderers put there,
	// for syntax highlighting by the frontend.
	p.AllowAttrs("class").Matching(languageClass).OnElements("code")
	p.AllowElements("kbd", "caption", "figure", "figcaption")
	p.AllowDataURIImages()
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.RequireNoReferrerOnFullyQualifiedLinks(true)
	return p
}

func newRenderer() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.GFM),
		goldmark.WithRendererOptions(html.WithUnsafe()),
	)
}
