package gift_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/gift"
)

// meaning is what a question says, in a form both this parser's model and
// the reference parser's JSON reduce to.
type meaning struct {
	Type, Category, ID, Title string
	Tags                      []string
	Prompt, Format            string
	Embedded                  bool
	General                   string
	Answers                   []answerMeaning
	Pairs                     [][3]string
	Truth                     bool
	// First and Second are the true/false feedbacks in the order written.
	First, Second string
}

type answerMeaning struct {
	Text, Format string
	Weight       float64
	Feedback     string
	Min, Max     float64
}

var spaces = regexp.MustCompile(`\s+`)

// norm compares texts by their words: the reference parser collapses line
// breaks and indentation differently, and spaces around the blank of a
// missing-word question.
func norm(s string) string {
	s = spaces.ReplaceAllString(strings.TrimSpace(s), " ")
	return strings.ReplaceAll(strings.ReplaceAll(s, " _____", "_____"), "_____ ", "_____")
}

func textOf(t *gift.Text) string {
	if t == nil {
		return ""
	}
	return t.Format + ":" + norm(t.Text)
}

func fromModel(qs []gift.Question) []meaning {
	var out []meaning
	for _, q := range qs {
		m := meaning{Type: string(q.Type), Category: q.Category, ID: q.ID, Tags: q.Tags, Title: q.Title,
			Prompt: norm(q.Prompt()), Format: q.Stem.Format, Embedded: q.After != "", General: textOf(q.GeneralFeedback),
			Truth: q.Truth, First: textOf(q.WrongFeedback), Second: textOf(q.RightFeedback)}
		for _, a := range q.Answers {
			am := answerMeaning{Weight: a.Weight, Feedback: textOf(a.Feedback)}
			if q.Type == gift.Numerical {
				am.Min, am.Max = a.Min, a.Max
			} else {
				am.Text, am.Format = norm(a.Text.Text), a.Text.Format
			}
			m.Answers = append(m.Answers, am)
		}
		for _, p := range q.Pairs {
			m.Pairs = append(m.Pairs, [3]string{p.Question.Format, norm(p.Question.Text), norm(p.Answer)})
		}
		if q.Type != gift.TrueFalse {
			// Only true/false feedbacks are positional in the reference.
			m.First, m.Second = "", ""
			if q.Type == gift.Numerical {
				m.First = textOf(q.WrongFeedback)
			}
		}
		out = append(out, m)
	}
	return out
}

type refText struct{ Format, Text string }

type refNumber struct {
	Type                  string
	Number, Range         float64
	NumberHigh, NumberLow float64
}

type refChoice struct {
	IsCorrect bool
	Weight    *float64
	Text      json.RawMessage
	Feedback  *refText
}

type refQuestion struct {
	ID                 *string
	Tags               []string
	Type               string
	Title              *string
	Stem               refText
	HasEmbeddedAnswers bool
	GlobalFeedback     *refText
	Choices            json.RawMessage
	MatchPairs         []struct {
		Subquestion refText
		Subanswer   string
	}
	IsTrue                      bool
	TrueFeedback, FalseFeedback *refText
}

func refTextOf(t *refText) string {
	if t == nil || strings.TrimSpace(t.Text) == "" {
		return ""
	}
	return t.Format + ":" + norm(t.Text)
}

func bounds(n refNumber) (float64, float64) {
	switch n.Type {
	case "range":
		return n.Number - n.Range, n.Number + n.Range
	case "high-low":
		return n.NumberLow, n.NumberHigh
	}
	return n.Number, n.Number
}

var refTypes = map[string]string{"MC": "multichoice", "TF": "truefalse", "Short": "shortanswer", "Numerical": "numerical",
	"Matching": "matching", "Essay": "essay", "Description": "description"}

func fromReference(t *testing.T, data []byte) []meaning {
	var refs []refQuestion
	if err := json.Unmarshal(data, &refs); err != nil {
		t.Fatal(err)
	}
	var out []meaning
	category := ""
	for _, r := range refs {
		if r.Type == "Category" {
			category = *r.Title
			continue
		}
		m := meaning{Type: refTypes[r.Type], Category: category, Tags: r.Tags, Prompt: norm(r.Stem.Text), Format: r.Stem.Format,
			Embedded: r.HasEmbeddedAnswers, General: refTextOf(r.GlobalFeedback), Truth: r.IsTrue}
		if r.ID != nil {
			m.ID = *r.ID
		}
		if r.Title != nil {
			m.Title = *r.Title
		}
		if r.Type == "TF" {
			m.First, m.Second = refTextOf(r.TrueFeedback), refTextOf(r.FalseFeedback)
		}
		for _, p := range r.MatchPairs {
			m.Pairs = append(m.Pairs, [3]string{p.Subquestion.Format, norm(p.Subquestion.Text), norm(p.Subanswer)})
		}
		if len(r.Choices) > 0 {
			var one refNumber
			if r.Type == "Numerical" && json.Unmarshal(r.Choices, &one) == nil {
				lo, hi := bounds(one)
				m.Answers = []answerMeaning{{Weight: 100, Min: lo, Max: hi}}
			} else {
				var cs []refChoice
				if err := json.Unmarshal(r.Choices, &cs); err != nil {
					t.Fatal(err)
				}
				for _, c := range cs {
					am := answerMeaning{Feedback: refTextOf(c.Feedback)}
					switch {
					case c.Weight != nil:
						am.Weight = *c.Weight
					case c.IsCorrect:
						am.Weight = 100
					}
					if r.Type == "Numerical" {
						var n refNumber
						if err := json.Unmarshal(c.Text, &n); err != nil {
							t.Fatal(err)
						}
						am.Min, am.Max = bounds(n)
					} else {
						var tx refText
						if err := json.Unmarshal(c.Text, &tx); err != nil {
							t.Fatal(err)
						}
						am.Text, am.Format = norm(tx.Text), tx.Format
					}
					m.Answers = append(m.Answers, am)
				}
			}
		}
		out = append(out, m)
	}
	return out
}

// sameMeaning compares with a tolerance on numbers: the reference writes
// 3.141..3.142 as it reads it, this parser as min and max.
func sameMeaning(a, b []meaning) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if len(x.Answers) != len(y.Answers) {
			return false
		}
		for j := range x.Answers {
			if math.Abs(x.Answers[j].Min-y.Answers[j].Min) > 1e-9 || math.Abs(x.Answers[j].Max-y.Answers[j].Max) > 1e-9 {
				return false
			}
			x.Answers[j].Min, x.Answers[j].Max = y.Answers[j].Min, y.Answers[j].Max
		}
		if !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func TestFixturesMatchReference(t *testing.T) {
	for _, path := range fixtures.Glob(t, "gift/*.gift") {
		name := strings.TrimSuffix(filepath.Base(path), ".gift")
		t.Run(name, func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			qs, err := gift.Parse(string(src))
			if err != nil {
				t.Fatal(err)
			}
			want := fromReference(t, fixtures.Read(t, "gift/"+name+".json"))
			if got := fromModel(qs); !sameMeaning(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Fatalf("meaning differs\n got: %s\nwant: %s", g, w)
			}
			rendered := gift.Render(qs)
			again, err := gift.Parse(rendered)
			if err != nil {
				t.Fatalf("rendered GIFT does not parse: %v\n%s", err, rendered)
			}
			if !reflect.DeepEqual(again, qs) {
				t.Fatalf("round trip changed the questions\nrendered:\n%s", rendered)
			}
		})
	}
}
