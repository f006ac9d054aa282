package apitest

import (
	"strconv"
	"strings"
)

// Lookup returns the value at a dotted path ("document.0.props.title")
// inside a decoded JSON value, or nil. It reads the parts of a typed
// answer the API document leaves open, such as a topic's topicable, whose
// shape each content kind decides.
func Lookup(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch node := v.(type) {
		case map[string]any:
			v = node[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(node) {
				return nil
			}
			v = node[i]
		default:
			return nil
		}
	}
	return v
}

// LookupString returns the string at path inside v, or "".
func LookupString(v any, path string) string {
	s, _ := Lookup(v, path).(string)
	return s
}
