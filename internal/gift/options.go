package gift

import (
	"fmt"
	"strings"
)

// Option is one option of a multiple-choice question given as a prompt
// with options rather than as GIFT text.
type Option struct {
	Text    string `json:"text"`
	Correct bool   `json:"correct"`
}

// FromOptions writes a multiple-choice question as GIFT: one right option
// is a single-answer question; with several, each right option earns an
// equal share and each wrong one takes a share away. The quiz and
// practice kinds of the server and lmsctl, which converts before sending,
// all write such questions here, so they mean the same everywhere.
func FromOptions(prompt string, options []Option) (string, error) {
	if strings.TrimSpace(prompt) == "" {
		return "", fmt.Errorf("the prompt is required")
	}
	right := 0
	for _, o := range options {
		if strings.TrimSpace(o.Text) == "" {
			return "", fmt.Errorf("every option needs a text")
		}
		if o.Correct {
			right++
		}
	}
	if len(options) < 2 || right == 0 {
		return "", fmt.Errorf("a question needs at least two options, one of them correct")
	}
	q := Question{Type: MultipleChoice, Stem: Text{Text: strings.TrimSpace(prompt), Format: FormatMoodle}, Single: right == 1}
	share := 100 / float64(right)
	for _, o := range options {
		w := -share
		switch {
		case o.Correct && right == 1:
			w = 100
		case o.Correct:
			w = share
		case right == 1:
			w = 0
		}
		q.Answers = append(q.Answers, Answer{Text: Text{Text: strings.TrimSpace(o.Text), Format: FormatMoodle}, Weight: w})
	}
	return RenderQuestion(q), nil
}
