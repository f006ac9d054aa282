package quiz

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/gift"
)

func TestOptionsBecomeGIFT(t *testing.T) {
	single, err := FromOptions("Pick 7", []Option{{Text: "4"}, {Text: "7", Correct: true}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := ParseOne(single)
	if err != nil || !q.Single || q.Answers[1].Weight != 100 || q.Answers[0].Weight != 0 {
		t.Fatalf("single: %q %+v %v", single, q, err)
	}
	multi, err := FromOptions("Pick the primes", []Option{{Text: "2", Correct: true}, {Text: "4"}, {Text: "7", Correct: true}})
	if err != nil {
		t.Fatal(err)
	}
	q, err = ParseOne(multi)
	if err != nil || q.Single || q.Answers[0].Weight != 50 || q.Answers[1].Weight != -50 {
		t.Fatalf("multi: %q %+v %v", multi, q, err)
	}
	// Both right ones earn everything; a wrong one takes one back.
	if f, _ := gift.Grade(q, gift.Response{Choices: []int{0, 2}}); f != 1 {
		t.Errorf("both right: %v", f)
	}
	if f, _ := gift.Grade(q, gift.Response{Choices: []int{0, 1}}); f != 0 {
		t.Errorf("one right, one wrong: %v", f)
	}
	// Texts with GIFT's control characters survive the conversion.
	tricky, err := FromOptions("Which is {x}: a=b?", []Option{{Text: "a~b#c", Correct: true}, {Text: `back\slash`}})
	if err != nil {
		t.Fatal(err)
	}
	if q, err = ParseOne(tricky); err != nil || q.Stem.Text != "Which is {x}: a=b?" || q.Answers[0].Text.Text != "a~b#c" ||
		q.Answers[1].Text.Text != `back\slash` {
		t.Fatalf("tricky: %q %+v %v", tricky, q, err)
	}
	for _, bad := range [][]Option{nil, {{Text: "a", Correct: true}}, {{Text: "a"}, {Text: "b"}}, {{Text: ""}, {Text: "b", Correct: true}}} {
		if _, err := FromOptions("Q", bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}

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
