package gift_test

import (
	"testing"

	"github.com/lms-platform/lms/internal/gift"
)

func TestOptionsBecomeGIFT(t *testing.T) {
	single, err := gift.FromOptions("Pick 7", []gift.Option{{Text: "4"}, {Text: "7", Correct: true}})
	if err != nil {
		t.Fatal(err)
	}
	if q := parseOne(t, single); !q.Single || q.Answers[1].Weight != 100 || q.Answers[0].Weight != 0 {
		t.Fatalf("single: %q %+v", single, q)
	}
	multi, err := gift.FromOptions("Pick the primes", []gift.Option{{Text: "2", Correct: true}, {Text: "4"}, {Text: "7", Correct: true}})
	if err != nil {
		t.Fatal(err)
	}
	q := parseOne(t, multi)
	if q.Single || q.Answers[0].Weight != 50 || q.Answers[1].Weight != -50 {
		t.Fatalf("multi: %q %+v", multi, q)
	}
	// Both right ones earn everything; a wrong one takes one back.
	if f, _ := gift.Grade(q, gift.Response{Choices: []int{0, 2}}); f != 1 {
		t.Errorf("both right: %v", f)
	}
	if f, _ := gift.Grade(q, gift.Response{Choices: []int{0, 1}}); f != 0 {
		t.Errorf("one right, one wrong: %v", f)
	}
	// Texts with GIFT's control characters survive the conversion.
	tricky, err := gift.FromOptions("Which is {x}: a=b?", []gift.Option{{Text: "a~b#c", Correct: true}, {Text: `back\slash`}})
	if err != nil {
		t.Fatal(err)
	}
	if q := parseOne(t, tricky); q.Stem.Text != "Which is {x}: a=b?" || q.Answers[0].Text.Text != "a~b#c" ||
		q.Answers[1].Text.Text != `back\slash` {
		t.Fatalf("tricky: %q %+v", tricky, q)
	}
	for _, bad := range [][]gift.Option{nil, {{Text: "a", Correct: true}}, {{Text: "a"}, {Text: "b"}}, {{Text: ""}, {Text: "b", Correct: true}}} {
		if _, err := gift.FromOptions("Q", bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}
