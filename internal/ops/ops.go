// Package ops is the registry of client operations that lmsctl's commands
// and its MCP tools share: one entry per API operation a scoped token may
// call, with its kind, stability, scope and input schema. The entries are
// built from the API's OpenAPI document (Build) and committed as
// registry.json, so the command line and the tools cannot drift apart and
// a test notices when the API changes under them.
package ops

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
)

//go:generate go run ./opsgen -o registry.json

// Kind says what an operation does to the platform; MCP annotations and
// the tool gates of `lmsctl mcp` follow from it.
type Kind string

const (
	Read        Kind = "read"
	Write       Kind = "write"
	Destructive Kind = "destructive"
)

// Stable is the stability of every operation (spec, Versioning 2).
const Stable = "stable"

// Operation is one entry of the registry.
type Operation struct {
	// Name is stable, derived from the operation id without its "api-"
	// segment: get-admin-courses, post-admin-topics.
	Name        string `json:"name"`
	OperationID string `json:"operationId"`
	Kind        Kind   `json:"kind"`
	Stability   string `json:"stability"`
	// Scope is the scope a scoped token needs; "any" when every scoped
	// token may call it.
	Scope   string `json:"scope"`
	Method  string `json:"method"`
	Path    string `json:"path"`
	Summary string `json:"summary"`
	// Idempotent: repeating the call with the same input changes nothing more.
	Idempotent bool    `json:"idempotent"`
	Params     []Param `json:"params,omitempty"`
	// Body is the JSON schema of the request body (references inlined);
	// nil when the operation takes none.
	Body         json.RawMessage `json:"body,omitempty"`
	BodyRequired bool            `json:"bodyRequired,omitempty"`
	// Form is the schema of the multipart form data of an operation that
	// takes no JSON body (an upload); its binary fields are files.
	Form json.RawMessage `json:"form,omitempty"`
	// Output names the schema of the answer's data ("CourseView",
	// "[]TagCount", "Page[CourseView]"); empty when it has none.
	Output string `json:"output,omitempty"`
}

// Param is a path or query parameter.
type Param struct {
	Name        string          `json:"name"`
	In          string          `json:"in"`
	Required    bool            `json:"required,omitempty"`
	Description string          `json:"description,omitempty"`
	Schema      json.RawMessage `json:"schema"`
}

// Type is the parameter's JSON type (integer, string, boolean, number, array).
func (p Param) Type() string {
	var s struct {
		Type json.RawMessage `json:"type"`
	}
	_ = json.Unmarshal(p.Schema, &s)
	return firstType(s.Type)
}

//go:embed registry.json
var registryJSON []byte

var (
	loadOnce sync.Once
	loaded   []Operation
	loadErr  error
)

// All returns the registry, sorted by name. The slice is shared: do not
// change it.
func All() []Operation {
	loadOnce.Do(func() {
		loadErr = json.Unmarshal(registryJSON, &loaded)
	})
	if loadErr != nil {
		// The file is generated and checked by a test; failing to read it
		// is a build defect, not a runtime condition.
		panic(fmt.Sprintf("ops: registry.json: %v", loadErr))
	}
	return loaded
}

// Find returns the operation called name.
func Find(name string) (Operation, bool) {
	all := All()
	i, ok := slices.BinarySearchFunc(all, name, func(o Operation, n string) int {
		switch {
		case o.Name < n:
			return -1
		case o.Name > n:
			return 1
		}
		return 0
	})
	if !ok {
		return Operation{}, false
	}
	return all[i], true
}

// InputSchema is the JSON schema of the operation's input as one object:
// its parameters by name, and its body under "body".
func (o Operation) InputSchema() map[string]any {
	props := map[string]any{}
	required := []string{}
	for _, p := range o.Params {
		var s map[string]any
		_ = json.Unmarshal(p.Schema, &s)
		if s == nil {
			s = map[string]any{}
		}
		if p.Description != "" {
			s["description"] = p.Description
		}
		props[p.Name] = s
		if p.Required {
			required = append(required, p.Name)
		}
	}
	if o.Body != nil {
		var s map[string]any
		_ = json.Unmarshal(o.Body, &s)
		props["body"] = s
		if o.BodyRequired {
			required = append(required, "body")
		}
	}
	if o.Form != nil {
		var s map[string]any
		_ = json.Unmarshal(o.Form, &s)
		props["form"] = s
		required = append(required, "form")
	}
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	return out
}

// BodyProperty is a top-level property of a JSON body or a form.
type BodyProperty struct {
	Name        string
	Type        string // integer, number, string, boolean, array, object or ""
	Description string
	Required    bool
	// File: a form field that carries a file.
	File bool
}

// BodyProperties lists the body's top-level properties, sorted by name.
func (o Operation) BodyProperties() []BodyProperty { return properties(o.Body) }

// FormFields lists the fields of the form, sorted by name.
func (o Operation) FormFields() []BodyProperty { return properties(o.Form) }

func properties(schema json.RawMessage) []BodyProperty {
	if schema == nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type        json.RawMessage `json:"type"`
			Format      string          `json:"format"`
			Description string          `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	out := make([]BodyProperty, 0, len(s.Properties))
	for name, p := range s.Properties {
		out = append(out, BodyProperty{Name: name, Type: firstType(p.Type), Description: p.Description,
			Required: slices.Contains(s.Required, name), File: p.Format == "binary"})
	}
	slices.SortFunc(out, func(a, b BodyProperty) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// firstType is the first non-null name of a schema's "type" (a name or a
// list of names in OpenAPI 3.1).
func firstType(raw json.RawMessage) string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	_ = json.Unmarshal(raw, &many)
	for _, t := range many {
		if t != "null" {
			return t
		}
	}
	return ""
}
