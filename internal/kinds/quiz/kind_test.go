package quiz

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lms-platform/lms/internal/content"
)

func TestUpdateKeepsIDsAndOtherFields(t *testing.T) {
	build := func(old json.RawMessage, fields map[string]string) (Value, json.RawMessage) {
		t.Helper()
		raw, err := Kind{}.Build(context.Background(), content.Env{}, old, content.Input{Fields: fields})
		if err != nil {
			t.Fatal(err)
		}
		v, err := Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		return v, raw
	}
	v, raw := build(nil, map[string]string{"questions": `[{"gift":"A {T}"},{"gift":"B {F}","score":2}]`, "maxAttempts": "3"})
	if len(v.Questions) != 2 || v.Questions[1].ID != 2 || v.MaxAttempts != 3 || v.MaxTotal() != 3 {
		t.Fatalf("created: %+v", v)
	}
	v, _ = build(raw, map[string]string{"questions": `[{"id":2,"gift":"B {F}"},{"gift":"C {T}"}]`, "minPassScore": "1"})
	if v.Questions[0].ID != 2 || v.Questions[1].ID != 3 || v.MaxAttempts != 3 || v.MinPassScore == nil || *v.MinPassScore != 1 {
		t.Fatalf("updated: %+v", v)
	}
	if _, err := (Kind{}).Build(context.Background(), content.Env{}, raw, content.Input{Fields: map[string]string{
		"questions": `[{"id":9,"gift":"X {T}"}]`}}); err == nil {
		t.Error("an unknown id was accepted")
	}
}
