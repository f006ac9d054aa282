package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// layoutEditor is what the layout form shows beside its document: the
// palette of approved components, each with an example node to insert,
// and the document's nodes with the API's messages about each, so that an
// error stands next to the node it is about.
type layoutEditor struct {
	Palette []paletteItem
	Nodes   []outlineNode
	// Broken is set when the document is not a JSON array of nodes: no
	// outline can be drawn.
	Broken bool
	// Document is the API's message about the document as a whole.
	Document string
}

// paletteItem is an approved component and its example node, as JSON.
type paletteItem struct {
	Name, Description, Example string
}

// outlineNode is a node of the document as the author sent it.
type outlineNode struct {
	Number    int
	Component string
	ID        string
	Errors    []string
}

// newLayoutEditor reads the palette from the API's component catalogue and
// draws the outline of document with the messages of failed, the API's
// refusal of it if any, keyed by node (document[0].props.tone, ...).
func newLayoutEditor(ctx context.Context, api *client.Client, document string, failed error) layoutEditor {
	var e layoutEditor
	errs := map[string]string{}
	var refusal *client.Error
	if errors.As(failed, &refusal) {
		for key, msgs := range refusal.Errors {
			errs[strings.TrimPrefix(key, "body.")] = strings.Join(msgs, " ")
		}
	}
	if catalogue, err := api.GetAdminLayoutComponents(ctx); err == nil {
		for _, c := range catalogue.Components {
			example, err := json.MarshalIndent(map[string]any{"component": c.Name, "props": c.Example}, "", "  ")
			if err == nil {
				e.Palette = append(e.Palette, paletteItem{Name: c.Name, Description: c.Description, Example: string(example)})
			}
		}
	}
	e.Document = errs["document"]
	if strings.TrimSpace(document) == "" {
		return e
	}
	var nodes []json.RawMessage
	if json.Unmarshal([]byte(document), &nodes) != nil {
		e.Broken = true
		return e
	}
	for i, raw := range nodes {
		var n struct {
			Component any `json:"component"`
			ID        any `json:"id"`
		}
		json.Unmarshal(raw, &n)
		node := outlineNode{Number: i + 1, Component: plain(n.Component), ID: plain(n.ID)}
		node.Errors = nodeErrors(errs, i)
		e.Nodes = append(e.Nodes, node)
	}
	return e
}

// nodeErrors are the messages about node i, each with the path within the
// node it is about (props.tone: ...), in the order of their paths.
func nodeErrors(errs map[string]string, i int) []string {
	prefix := "document[" + strconv.Itoa(i) + "]"
	var keys []string
	for k := range errs {
		if rest, ok := strings.CutPrefix(k, prefix); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for j, k := range keys {
		if path := strings.TrimPrefix(strings.TrimPrefix(k, prefix), "."); path != "" {
			out[j] = path + ": " + errs[k]
		} else {
			out[j] = errs[k]
		}
	}
	return out
}

// plain is a JSON value as the author wrote it, for the outline.
func plain(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		return fmt.Sprint(v)
	}
}
