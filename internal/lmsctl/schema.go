package lmsctl

// The API's OpenAPI 3.1 schemas write a nullable field as a type list
// (["string", "null"]) and leave a few values untyped ("any JSON").
// Agent clients map tool schemas onto single-type dialects and drop or
// refuse such schemas (the MCP Inspector's --strict check names both), so
// every tool's input schema is rewritten: a type list becomes anyOf
// branches of one type each, and an untyped value says which JSON types
// it takes.

// anyJSON is a value the API takes as any JSON, written out type by type.
func anyJSON(description string) map[string]any {
	s := map[string]any{"anyOf": []any{
		map[string]any{"type": "string"}, map[string]any{"type": "number"}, map[string]any{"type": "boolean"},
		map[string]any{"type": "object", "additionalProperties": true}, map[string]any{"type": "array"},
		map[string]any{"type": "null"},
	}}
	if description != "" {
		s["description"] = description
	}
	return s
}

// typedFields are untyped fields of the API whose values have a known
// type, by property name.
var typedFields = map[string]map[string]any{
	// A SCORM topic's SCO is an id.
	"sco": {"type": "integer"},
	// An H5P content's parameters and metadata are JSON objects.
	"params":   {"type": "object", "additionalProperties": true},
	"metadata": {"type": "object", "additionalProperties": true},
}

// constraining are the keywords that make a schema accept less than any
// value (the Inspector's list, less the rarely used ones our schemas do
// not write).
var constraining = []string{"type", "enum", "const", "anyOf", "oneOf", "allOf", "not", "$ref", "properties",
	"items", "additionalProperties", "required", "pattern", "format", "minimum", "maximum", "minLength", "maxLength",
	"minItems", "maxItems"}

// portable returns schema rewritten for agent clients; name is the
// property it describes ("" at the top).
func portable(schema any, name string) any {
	s, ok := schema.(map[string]any)
	if !ok {
		if b, isBool := schema.(bool); isBool && b {
			return anyJSON("")
		}
		return schema
	}
	out := make(map[string]any, len(s))
	for k, v := range s {
		out[k] = v
	}
	untyped := true
	for _, k := range constraining {
		if _, ok := out[k]; ok {
			untyped = false
			break
		}
	}
	if untyped {
		desc, _ := out["description"].(string)
		if typed, ok := typedFields[name]; ok {
			for k, v := range typed {
				out[k] = v
			}
		} else {
			return anyJSON(desc)
		}
	}
	if types, ok := out["type"].([]any); ok {
		branches := make([]any, 0, len(types))
		for _, t := range types {
			branches = append(branches, map[string]any{"type": t})
		}
		delete(out, "type")
		if len(branches) == 1 {
			out["type"] = types[0]
		} else {
			out["anyOf"] = branches
		}
	}
	if props, ok := out["properties"].(map[string]any); ok {
		p := make(map[string]any, len(props))
		for k, v := range props {
			p[k] = portable(v, k)
		}
		out["properties"] = p
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if v, ok := out[k]; ok {
			if _, isBool := v.(bool); !isBool || k == "items" {
				out[k] = portable(v, "")
			}
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := out[k].([]any); ok {
			l := make([]any, len(list))
			for i, v := range list {
				l[i] = portable(v, "")
			}
			out[k] = l
		}
	}
	return out
}
