package gift

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Response is a learner's answer to one question; which field counts
// follows the question's type.
type Response struct {
	// Choices are the indexes of the chosen answers of a multiple-choice
	// question (one for a single-answer question).
	Choices []int `json:"choices,omitempty"`
	// Text is the answer to a short answer, numerical or essay question.
	Text string `json:"text,omitempty"`
	// Truth is the answer to a true/false question.
	Truth *bool `json:"truth,omitempty"`
	// Matches are the answers chosen for the pairs of a matching question
	// that have a question, in their order.
	Matches []string `json:"matches,omitempty"`
}

// MaxResponseText bounds a response's text (an essay).
const MaxResponseText = 20000

// ShapeError is a response that gives its answer in a field the
// question's type does not read (text for a multiple-choice question,
// truth for a numerical one): graded, it would earn nothing for an answer
// the learner believes given.
type ShapeError struct {
	// Want is the response field the question reads: choices, truth,
	// text or matches.
	Want string
	Type Type
}

func (e *ShapeError) Error() string {
	return fmt.Sprintf("a %s question takes its answer in %s", e.Type, e.Want)
}

// responseField is the response field that answers the question; "" for
// a description, which takes none.
func (q Question) responseField() string {
	switch q.Type {
	case MultipleChoice:
		return "choices"
	case TrueFalse:
		return "truth"
	case Matching:
		return "matches"
	case Description:
		return ""
	}
	return "text"
}

// Check tells whether r is a well-formed response to q (it says nothing of
// its being right); a response in another field than the question's is a
// *ShapeError.
func (q Question) Check(r Response) error {
	if len(r.Text) > MaxResponseText {
		return fmt.Errorf("the answer is longer than %d characters", MaxResponseText)
	}
	if want := q.responseField(); want != "" {
		given := map[string]bool{"choices": r.Choices != nil, "text": r.Text != "", "truth": r.Truth != nil, "matches": r.Matches != nil}
		for field, set := range given {
			if set && field != want {
				return &ShapeError{Want: want, Type: q.Type}
			}
		}
	}
	switch q.Type {
	case MultipleChoice:
		if q.Single && len(r.Choices) > 1 {
			return errors.New("this question takes one choice")
		}
		seen := map[int]bool{}
		for _, c := range r.Choices {
			if c < 0 || c >= len(q.Answers) || seen[c] {
				return fmt.Errorf("choice %d is not an option of this question, or chosen twice", c)
			}
			seen[c] = true
		}
	case Matching:
		if len(r.Matches) > len(q.matchQuestions()) {
			return errors.New("more matches than the question has items")
		}
	case Description:
		return errors.New("a description takes no answer")
	}
	return nil
}

func (q Question) matchQuestions() []Pair {
	var out []Pair
	for _, p := range q.Pairs {
		if p.Question.Text != "" {
			out = append(out, p)
		}
	}
	return out
}

// Grade is the share (0 to 1) of the question's score that r earns. An
// essay is graded by a person: Grade reports manual and 0.
func Grade(q Question, r Response) (fraction float64, manual bool) {
	switch q.Type {
	case MultipleChoice:
		sum := 0.0
		for _, c := range r.Choices {
			if c >= 0 && c < len(q.Answers) {
				sum += q.Answers[c].Weight
			}
		}
		return clamp(sum / 100), false
	case TrueFalse:
		if r.Truth != nil && *r.Truth == q.Truth {
			return 1, false
		}
		return 0, false
	case ShortAnswer:
		best := 0.0
		for _, a := range q.Answers {
			if a.Weight > best && wildcardMatch(a.Text.Text, r.Text) {
				best = a.Weight
			}
		}
		return clamp(best / 100), false
	case Numerical:
		v, ok := parseNumber(r.Text)
		if !ok {
			return 0, false
		}
		best := 0.0
		for _, a := range q.Answers {
			// A small relative slack absorbs the rounding of min and max.
			slack := 1e-9 * math.Max(1, math.Max(math.Abs(a.Min), math.Abs(a.Max)))
			if a.Weight > best && v >= a.Min-slack && v <= a.Max+slack {
				best = a.Weight
			}
		}
		return clamp(best / 100), false
	case Matching:
		items := q.matchQuestions()
		if len(items) == 0 {
			return 0, false
		}
		right := 0
		for i, p := range items {
			if i < len(r.Matches) && strings.TrimSpace(r.Matches[i]) == p.Answer {
				right++
			}
		}
		return float64(right) / float64(len(items)), false
	case Essay:
		return 0, true
	}
	return 0, false
}

func clamp(f float64) float64 { return math.Max(0, math.Min(1, f)) }

// parseNumber reads a learner's number; a decimal comma is accepted.
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, ".") {
		s = strings.Replace(s, ",", ".", 1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// wildcardMatch compares like Moodle's short answer: case-insensitive,
// surrounding spaces ignored, "*" in the pattern matching any text.
func wildcardMatch(pattern, s string) bool {
	pattern = strings.ToLower(strings.TrimSpace(pattern))
	s = strings.ToLower(strings.TrimSpace(s))
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last)
}

// Shown is what a learner sees of a question before answering it: nothing
// that tells the right answer (no weights, no feedback, no pairing).
type Shown struct {
	Type   Type   `json:"type"`
	Title  string `json:"title,omitempty"`
	Prompt Text   `json:"prompt"`
	// Single is true when a multiple-choice question takes one choice.
	Single bool `json:"single,omitempty"`
	// Options are the choices of a multiple-choice question, in order.
	Options []Text `json:"options,omitempty"`
	// Items are the questions of a matching question; Targets the answers
	// to match them with, sorted so that their order tells nothing.
	Items   []Text   `json:"items,omitempty"`
	Targets []string `json:"targets,omitempty"`
}

// Show is the learner's view of q.
func (q Question) Show() Shown {
	s := Shown{Type: q.Type, Title: q.Title, Prompt: Text{Text: q.Prompt(), Format: q.Stem.Format}}
	switch q.Type {
	case MultipleChoice:
		s.Single = q.Single
		for _, a := range q.Answers {
			s.Options = append(s.Options, a.Text)
		}
	case Matching:
		for _, p := range q.Pairs {
			if p.Question.Text != "" {
				s.Items = append(s.Items, p.Question)
			}
			if !slices.Contains(s.Targets, p.Answer) {
				s.Targets = append(s.Targets, p.Answer)
			}
		}
		slices.Sort(s.Targets)
	}
	return s
}
