package web

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLayoutFallback: a document the page cannot render, wholly or in
// part, is shown as its fallback; a renderable one is not.
func TestLayoutFallback(t *testing.T) {
	fallback := `"fallback":"# Planets","fallback_html":"<h1>Planets</h1>"`
	for name, c := range map[string]struct {
		doc      string
		fallback bool
	}{
		"renderable":        {`[{"component":"Callout","props":{"tone":"info","body":"Hi"}}]`, false},
		"unknown component": {`[{"component":"Callout","props":{"tone":"info","body":"Hi"}},{"component":"Carousel","props":{}}]`, true},
		"not yet rendered":  {`[{"component":"LiaScriptLesson","props":{"topic_id":3}}]`, true},
		"props not object":  {`[{"component":"Callout","props":"Hi"}]`, true},
		"bad H5P id":        {`[{"component":"H5PFrame","props":{"content_id":"../x","title":"T"}}]`, true},
		"empty":             {`[]`, true},
		"not a list":        {`{"a":1}`, true},
	} {
		d := &topicData{Topic: &topic{ID: 4, Kind: "layout", Topicable: json.RawMessage(`{"document":` + c.doc + `,` + fallback + `}`)}}
		(&Handler{}).fillContent(d)
		if shown := d.Layout == nil && strings.Contains(string(d.HTML), "<h1>Planets</h1>"); shown != c.fallback {
			t.Errorf("%s: fallback shown %v, want %v", name, shown, c.fallback)
		}
		if d.Mode != "open" || !d.Manual {
			t.Errorf("%s: a layout without practice completes when viewed: mode %q manual %v", name, d.Mode, d.Manual)
		}
	}
}
