package gift_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/gift"
)

func parseOne(t *testing.T, src string) gift.Question {
	t.Helper()
	qs, err := gift.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 1 {
		t.Fatalf("got %d questions, want 1", len(qs))
	}
	return qs[0]
}

func TestErrorsNameLineAndExpectation(t *testing.T) {
	cases := []struct{ src, want string }{
		{"Q1 {=a ~b}\n\n// c\nQ2 {=a ~b\n", "line 4: expected } closing the answer block"},
		{"::Title without end {T}", "line 1: expected :: closing the title"},
		{"Q {\n~%150%a =b}", "line 1: expected a weight between %-100% and %100%"},
		{"Q {\n#abc}", "line 1: expected a number, found \"abc\""},
		{"\n\nQ {#5..1}", "line 3: expected min..max with min ≤ max"},
		{"Q {=a -> b}", "line 1: expected at least two pairs"},
		{"Q {=a -> b =c}", "expected \"question -> answer\""},
		{"Q }", "line 1: expected { before }"},
		{"Q {~a}", "expected at least two answers"},
	}
	for _, c := range cases {
		_, err := gift.Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want %q", c.src, err, c.want)
		}
	}
}

func TestMissingWordAndRoundTrip(t *testing.T) {
	src := `::Colours:: The sky is {~red =blue ~green} on a clear day.

Match: {
	=cat -> meow
	=dog -> woof
	= -> moo
	####Animals.
}

Wrong feedback {#2:0.5 ~#Not quite}
`
	qs, err := gift.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if qs[0].Prompt() != "The sky is _____ on a clear day." || !qs[0].Single || qs[0].Answers[1].Weight != 100 {
		t.Fatalf("missing word: %+v", qs[0])
	}
	if qs[1].Type != gift.Matching || len(qs[1].Pairs) != 3 || qs[1].GeneralFeedback.Text != "Animals." {
		t.Fatalf("matching: %+v", qs[1])
	}
	if qs[2].WrongFeedback == nil || qs[2].WrongFeedback.Text != "Not quite" || qs[2].Answers[0].Min != 1.5 {
		t.Fatalf("numerical: %+v", qs[2])
	}
	again, err := gift.Parse(gift.Render(qs))
	if err != nil || !reflect.DeepEqual(again, qs) {
		t.Fatalf("round trip: %v\n%s", err, gift.Render(qs))
	}
}

func TestEscapesInTexts(t *testing.T) {
	q := parseOne(t, `Q \{1\} \: a\nb \\ c {=x\=y\#z \~w}`)
	if q.Stem.Text != "Q {1} : a\nb \\ c" || q.Answers[0].Text.Text != "x=y#z ~w" {
		t.Fatalf("%q %q", q.Stem.Text, q.Answers[0].Text.Text)
	}
}

func grade(t *testing.T, src string, r gift.Response) float64 {
	t.Helper()
	q := parseOne(t, src)
	if err := q.Check(r); err != nil {
		t.Fatal(err)
	}
	f, manual := gift.Grade(q, r)
	if manual {
		t.Fatal("graded by a person")
	}
	return f
}

func TestGradeEachType(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		src  string
		r    gift.Response
		want float64
	}{
		{"single right", "Q {=a ~b ~c}", gift.Response{Choices: []int{0}}, 1},
		{"single wrong", "Q {=a ~b ~c}", gift.Response{Choices: []int{2}}, 0},
		{"single partial", "Q {=a ~%50%b ~c}", gift.Response{Choices: []int{1}}, 0.5},
		{"multi two halves", "Q {~%50%a ~%50%b ~%-100%c}", gift.Response{Choices: []int{0, 1}}, 1},
		{"multi with a wrong one", "Q {~%50%a ~%50%b ~%-100%c}", gift.Response{Choices: []int{0, 2}}, 0},
		{"multi one half", "Q {~%50%a ~%50%b ~%-100%c}", gift.Response{Choices: []int{1}}, 0.5},
		{"true right", "Q {T}", gift.Response{Truth: &yes}, 1},
		{"true wrong", "Q {TRUE}", gift.Response{Truth: &no}, 0},
		{"false right", "Q {F#wrong#right}", gift.Response{Truth: &no}, 1},
		{"no truth", "Q {F}", gift.Response{}, 0},
		{"short case", "Q {=Paris =%50%paname}", gift.Response{Text: "  paris "}, 1},
		{"short partial", "Q {=Paris =%50%paname}", gift.Response{Text: "Paname"}, 0.5},
		{"short wildcard", "Q {=%25%*ris =Paris}", gift.Response{Text: "Doris"}, 0.25},
		{"short miss", "Q {=Paris}", gift.Response{Text: "Lyon"}, 0},
		{"numerical exact", "Q {#1822}", gift.Response{Text: "1822"}, 1},
		{"numerical tolerance", "Q {#3:0.5}", gift.Response{Text: "3.5"}, 1},
		{"numerical outside", "Q {#3:0.5}", gift.Response{Text: "3.51"}, 0},
		{"numerical range", "Q {#1..5}", gift.Response{Text: "4,5"}, 1},
		{"numerical partial", "Q {#=1822:0 =%50%1822:2}", gift.Response{Text: "1821"}, 0.5},
		{"numerical not a number", "Q {#1822}", gift.Response{Text: "soon"}, 0},
		{"matching all", "Q {=a -> 1 =b -> 2 =c -> 3 = -> 4}", gift.Response{Matches: []string{"1", "2", "3"}}, 1},
		{"matching two of four", "Q {=a -> 1 =b -> 2 =c -> 3 =d -> 4}", gift.Response{Matches: []string{"1", "3", "2", "4"}}, 0.5},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := grade(t, c.src, c.r); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	q := parseOne(t, "Essay {}")
	if _, manual := gift.Grade(q, gift.Response{Text: "My essay"}); !manual {
		t.Fatal("an essay is graded by a person")
	}
}

func TestCheckRefusesMalformedResponses(t *testing.T) {
	single := parseOne(t, "Q {=a ~b}")
	for _, r := range []gift.Response{{Choices: []int{0, 1}}, {Choices: []int{2}}, {Choices: []int{-1}}} {
		if single.Check(r) == nil {
			t.Errorf("accepted %+v", r)
		}
	}
	multi := parseOne(t, "Q {~%50%a ~%50%b}")
	if multi.Check(gift.Response{Choices: []int{1, 1}}) == nil {
		t.Error("accepted a choice twice")
	}
	if parseOne(t, "Just text").Check(gift.Response{Text: "x"}) == nil {
		t.Error("a description took an answer")
	}
	if parseOne(t, "E {}").Check(gift.Response{Text: strings.Repeat("x", gift.MaxResponseText+1)}) == nil {
		t.Error("accepted an oversized essay")
	}
}

func TestShowRevealsNoAnswer(t *testing.T) {
	for _, src := range []string{
		"Q {=right#well done ~wrong#no ####general}",
		"Q {~%100%right ~%-50%wrong}",
		"Q {=secret answer}",
		"Q {#42:1#exactly}",
		"Q {TRUE#wrongfb#rightfb}",
		"Q {=zebra -> stripes =leopard -> spots}",
	} {
		shown := parseOne(t, src).Show()
		b, _ := json.Marshal(shown)
		for _, leak := range []string{"well done", "general", "100", "-50", "secret", "42", "exactly", "fb", "weight", "feedback", "true\""} {
			if strings.Contains(string(b), leak) {
				t.Errorf("%s shows %q: %s", src, leak, b)
			}
		}
	}
	m := parseOne(t, "Q {=zebra -> stripes =leopard -> spots}").Show()
	if !reflect.DeepEqual(m.Targets, []string{"spots", "stripes"}) || len(m.Items) != 2 {
		t.Fatalf("matching shown as %+v", m)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"Q {=a ~b}", "::t:: [html] x {#1..2 =%50%3:1#f ~#w}", "Q {T#a#b}", "$CATEGORY: x\n\nQ {}",
		"a {=b -> c =d -> e}", `\{\}\:\~\=\#\n\\`, "// [id:1] [tag:x]\nQ {=a}\n\n}{", "{####}", "Q {=%%a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		qs, err := gift.Parse(src)
		if err != nil {
			return
		}
		for _, q := range qs {
			q.Show()
			gift.Grade(q, gift.Response{Text: src, Choices: []int{0}, Matches: []string{src}})
		}
		// What parsed renders to GIFT that parses again.
		if _, err := gift.Parse(gift.Render(qs)); err != nil {
			t.Fatalf("rendered questions do not parse: %v\n%s", err, gift.Render(qs))
		}
	})
}
