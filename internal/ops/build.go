package ops

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// declaredKinds are operations whose kind is not the one their method
// implies (read for GET, destructive for DELETE, write otherwise).
var declaredKinds = map[string]Kind{
	// Taking learners off a course ends their access to what they were
	// learning: an agent must confirm it like a deletion.
	"post-admin-courses-id-access-remove": Destructive,
	// Restoring a message template's default throws the custom one away.
	"post-admin-message-templates-id-restore-default": Destructive,
	// Previews render what they are sent and store nothing.
	"post-admin-message-templates-preview": Read,
	"post-liascript-id-preview":            Read,
}

// excludedPrefixes are paths the client does not offer although a scoped
// token may call them: approving a device login is for a person in a
// browser, never for the client that asked for it.
var excludedPrefixes = []string{"/api/auth/device/"}

type docSchema = map[string]any

type docOperation struct {
	method      string
	OperationID string `json:"operationId"`
	Summary     string `json:"summary"`
	Scope       string `json:"x-lms-scope"`
	Parameters  []struct {
		Name        string          `json:"name"`
		In          string          `json:"in"`
		Required    bool            `json:"required"`
		Description string          `json:"description"`
		Schema      json.RawMessage `json:"schema"`
	} `json:"parameters"`
	RequestBody *struct {
		Required bool                                  `json:"required"`
		Content  map[string]struct{ Schema docSchema } `json:"content"`
	} `json:"requestBody"`
	Responses map[string]struct {
		Content map[string]struct{ Schema docSchema } `json:"content"`
	} `json:"responses"`
}

var methodOrder = []string{"get", "put", "post", "delete", "patch"}

// Build returns the registry of the OpenAPI document: every operation a
// scoped token may call (x-lms-scope other than "none") that answers JSON
// and takes no body, a JSON body or form data, sorted by name.
func Build(doc []byte) ([]Operation, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Schemas map[string]docSchema `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("ops: reading the OpenAPI document: %w", err)
	}
	r := resolver{schemas: d.Components.Schemas}
	var out []Operation
	for path, item := range d.Paths {
		if slices.ContainsFunc(excludedPrefixes, func(p string) bool { return strings.HasPrefix(path, p) }) {
			continue
		}
		for _, m := range methodOrder {
			raw, ok := item[m]
			if !ok {
				continue
			}
			var op docOperation
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("ops: %s %s: %w", m, path, err)
			}
			o, ok, err := r.operation(m, path, op)
			if err != nil {
				return nil, fmt.Errorf("ops: %s %s: %w", m, path, err)
			}
			if ok {
				out = append(out, o)
			}
		}
	}
	slices.SortFunc(out, func(a, b Operation) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("ops: two operations are named %s", out[i].Name)
		}
	}
	return out, nil
}

// Encode writes the registry as registry.json holds it.
func Encode(list []Operation) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(list); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func (r resolver) operation(method, path string, op docOperation) (Operation, bool, error) {
	op.method = method
	if op.Scope == "" || op.Scope == "none" || op.OperationID == "" {
		return Operation{}, false, nil
	}
	output, jsonAnswer := r.output(op)
	if !jsonAnswer {
		return Operation{}, false, nil
	}
	o := Operation{
		Name:        strings.Replace(op.OperationID, "-api-", "-", 1),
		OperationID: op.OperationID,
		Stability:   Stable,
		Scope:       op.Scope,
		Method:      strings.ToUpper(method),
		Path:        path,
		Summary:     op.Summary,
		Output:      output,
	}
	switch method {
	case "get":
		o.Kind, o.Idempotent = Read, true
	case "delete":
		o.Kind, o.Idempotent = Destructive, true
	case "put":
		o.Kind, o.Idempotent = Write, true
	default:
		o.Kind = Write
	}
	if k, ok := declaredKinds[o.Name]; ok {
		o.Kind = k
	}
	for _, p := range op.Parameters {
		if p.In != "path" && p.In != "query" {
			continue
		}
		var s docSchema
		if err := json.Unmarshal(p.Schema, &s); err != nil {
			return Operation{}, false, err
		}
		schema, err := json.Marshal(boundIntegers(r.inline(s, nil)))
		if err != nil {
			return Operation{}, false, err
		}
		o.Params = append(o.Params, Param{Name: p.Name, In: p.In, Required: p.Required || p.In == "path",
			Description: p.Description, Schema: schema})
	}
	if op.RequestBody != nil {
		media, ok := op.RequestBody.Content["application/json"]
		if !ok {
			if media, ok = op.RequestBody.Content["multipart/form-data"]; !ok {
				return Operation{}, false, nil
			}
			form, err := json.Marshal(r.inline(media.Schema, nil))
			if err != nil {
				return Operation{}, false, err
			}
			o.Form = form
			return o, true, nil
		}
		body, err := json.Marshal(boundIntegers(r.inline(media.Schema, nil)))
		if err != nil {
			return Operation{}, false, err
		}
		o.Body, o.BodyRequired = body, op.RequestBody.Required
	}
	return o, true, nil
}

// output names the data of the 2xx answer, and says whether the answer
// is JSON at all (downloads are not).
func (r resolver) output(op docOperation) (string, bool) {
	for code, resp := range op.Responses {
		if !strings.HasPrefix(code, "2") {
			continue
		}
		if len(resp.Content) == 0 {
			// A read that answers no JSON is a download or a probe.
			return "", op.method != "get"
		}
		media, ok := resp.Content["application/json"]
		if !ok {
			return "", false
		}
		env := r.deref(media.Schema)
		props, _ := env["properties"].(map[string]any)
		data, _ := props["data"].(map[string]any)
		name := schemaName(data)
		if name == "Empty" {
			name = ""
		}
		if _, page := props["meta"]; page && name != "" {
			name = "Page[" + strings.TrimPrefix(name, "[]") + "]"
		}
		return name, true
	}
	return "", true
}

func schemaName(s map[string]any) string {
	if s == nil {
		return ""
	}
	if ref, ok := s["$ref"].(string); ok {
		return refName(ref)
	}
	if items, ok := s["items"].(map[string]any); ok {
		return "[]" + schemaName(items)
	}
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if x != "null" {
				return fmt.Sprint(x)
			}
		}
	}
	return ""
}

func refName(ref string) string { return ref[strings.LastIndex(ref, "/")+1:] }

// maxSafeInteger bounds the integers of input schemas (spec: ids are
// accepted from -(2^53-1) to 2^53-1), so an agent's JSON numbers stay exact.
const maxSafeInteger = 1<<53 - 1

// boundIntegers gives every integer of an inlined input schema that has
// no bound of its own the safe-integer range.
func boundIntegers(v any) any {
	switch s := v.(type) {
	case map[string]any:
		for _, x := range s {
			boundIntegers(x)
		}
		if schemaName(map[string]any{"type": s["type"]}) == "integer" {
			if _, ok := s["minimum"]; !ok {
				s["minimum"] = -maxSafeInteger
			}
			if _, ok := s["maximum"]; !ok {
				s["maximum"] = maxSafeInteger
			}
		}
	case []any:
		for _, x := range s {
			boundIntegers(x)
		}
	}
	return v
}

type resolver struct {
	schemas map[string]docSchema
}

func (r resolver) deref(s docSchema) docSchema {
	if ref, ok := s["$ref"].(string); ok {
		return r.schemas[refName(ref)]
	}
	return s
}

// inline copies a schema with its references replaced by what they name,
// so a tool's input schema stands alone. A schema that contains itself
// (a tree) is cut at the repetition to an object of any shape.
func (r resolver) inline(v any, seen []string) any {
	switch s := v.(type) {
	case map[string]any:
		if ref, ok := s["$ref"].(string); ok {
			name := refName(ref)
			if slices.Contains(seen, name) {
				return map[string]any{"type": "object"}
			}
			return r.inline(r.schemas[name], append(seen, name))
		}
		out := make(map[string]any, len(s))
		for k, x := range s {
			out[k] = r.inline(x, seen)
		}
		return out
	case []any:
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = r.inline(x, seen)
		}
		return out
	}
	return v
}
