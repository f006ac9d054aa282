package content_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/content"
)

// described is a kind that describes the fields it is given, and does
// nothing else.
type described struct {
	class  string
	fields []string
}

func (k described) Class() string { return k.class }
func (k described) Name() string  { return k.class }
func (described) Build(context.Context, content.Env, json.RawMessage, content.Input) (json.RawMessage, error) {
	return nil, nil
}
func (described) Copy(context.Context, content.Env, json.RawMessage) (json.RawMessage, error) {
	return nil, nil
}
func (described) Remove(context.Context, content.Env, json.RawMessage) error { return nil }
func (described) View(content.Env, json.RawMessage) (any, error)             { return nil, nil }
func (k described) Fields() map[string]*huma.Schema {
	out := map[string]*huma.Schema{}
	for _, f := range k.fields {
		out[f] = &huma.Schema{Description: k.class + "'s " + f}
	}
	return out
}

// TestRegistryRefusesSharedFields: the topic form's description keeps one
// schema per field, so two kinds describing one field is refused when the
// second is registered, as two kinds of one class are.
func TestRegistryRefusesSharedFields(t *testing.T) {
	refused := func(what string, register func()) string {
		t.Helper()
		var msg string
		func() {
			defer func() { msg, _ = recover().(string) }()
			register()
		}()
		if msg == "" {
			t.Errorf("%s: registered", what)
		}
		return msg
	}
	r := content.NewRegistry(described{"a", []string{"package", "au"}}, described{"b", []string{"sco"}})
	if msg := refused("a shared field", func() { r.Register(described{"c", []string{"height", "package"}}) }); !strings.Contains(msg, "field package described by two kinds: a and c") {
		t.Errorf("message %q", msg)
	}
	refused("a class twice", func() { r.Register(described{"b", nil}) })
	refused("a shared field at once", func() { content.NewRegistry(described{"a", []string{"x"}}, described{"b", []string{"x"}}) })
	r.Register(described{"d", []string{"height"}})
	if got := len(r.Kinds()); got != 3 {
		t.Errorf("%d kinds, want 3", got)
	}
}
