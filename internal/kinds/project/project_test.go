package project

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
)

func build(t *testing.T, old json.RawMessage, in content.Input) (Value, json.RawMessage, error) {
	t.Helper()
	raw, err := Kind{}.Build(context.Background(), content.Env{}, old, in)
	if err != nil {
		return Value{}, nil, err
	}
	v, err := parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return v, raw, nil
}

func TestDefaults(t *testing.T) {
	v, _, err := build(t, nil, content.Input{Fields: map[string]string{"instructions": "Write **an essay**.<script>x</script>"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(v.Instructions, "<strong>an essay</strong>") || strings.Contains(v.Instructions, "<script") {
		t.Errorf("instructions %q", v.Instructions)
	}
	if !slices.Equal(v.Accept, DefaultAccept) || v.MaxSize != DefaultMaxSize {
		t.Errorf("defaults: %+v", v)
	}
	for _, ext := range v.Accept {
		if slices.Contains(refused, ext) {
			t.Errorf("default accepts %s", ext)
		}
	}
}

func TestAcceptAndSize(t *testing.T) {
	v, _, err := build(t, nil, content.Input{Fields: map[string]string{"accept": "PDF, .zip docx", "max_size": "1048576"}})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Accept, []string{".docx", ".pdf", ".zip"}) || v.MaxSize != 1<<20 {
		t.Errorf("got %+v", v)
	}
	v, _, err = build(t, nil, content.Input{Value: json.RawMessage(`{"instructions":"x","accept":[".pdf"],"max_size":10}`)})
	if err != nil || !slices.Equal(v.Accept, []string{".pdf"}) || v.MaxSize != 10 {
		t.Errorf("generic value: %+v %v", v, err)
	}
	for _, in := range []map[string]string{
		{"accept": ".html"}, {"accept": ".svg"}, {"accept": "../x"}, {"accept": "[1]"}, {"accept": ",,"},
		{"max_size": "0"}, {"max_size": "999999999999"}, {"max_size": "big"},
	} {
		if _, _, err := build(t, nil, content.Input{Fields: in}); !apperr.Is(err, apperr.Invalid) {
			t.Errorf("%v: %v, want 422", in, err)
		}
	}
}

func TestUpdateKeepsFields(t *testing.T) {
	_, old, err := build(t, nil, content.Input{Fields: map[string]string{"instructions": "Do it", "accept": "pdf"}})
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := build(t, old, content.Input{Fields: map[string]string{"max_size": "100"}})
	if err != nil {
		t.Fatal(err)
	}
	if v.Markdown != "Do it" || !slices.Equal(v.Accept, []string{".pdf"}) || v.MaxSize != 100 {
		t.Errorf("got %+v", v)
	}
	same, err := Kind{}.Build(context.Background(), content.Env{}, old, content.Input{})
	if err != nil || string(same) != string(old) {
		t.Errorf("empty update changed the value: %s", same)
	}
	accept, size, err := Kind{}.SubmissionRules(old)
	if err != nil || !slices.Equal(accept, []string{".pdf"}) || size != DefaultMaxSize {
		t.Errorf("rules %v %d %v", accept, size, err)
	}
}
