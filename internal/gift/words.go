package gift

import (
	"strconv"
	"strings"
)

// Answers in words, for a person who reads a learner's attempt (the
// gradebook): what the learner answered and what the question takes as
// right, each a list of short texts. True and false are written "true"
// and "false"; a page translates them.

// ResponseWords is r in words as q reads it: the chosen options' texts,
// the text given, "true" or "false", or "item → target" per matched item.
func ResponseWords(q Question, r Response) []string {
	var out []string
	switch q.Type {
	case MultipleChoice:
		for _, c := range r.Choices {
			if c >= 0 && c < len(q.Answers) {
				out = append(out, q.Answers[c].Text.Text)
			}
		}
	case TrueFalse:
		if r.Truth != nil {
			out = append(out, strconv.FormatBool(*r.Truth))
		}
	case Matching:
		for i, p := range q.matchQuestions() {
			if i < len(r.Matches) && strings.TrimSpace(r.Matches[i]) != "" {
				out = append(out, p.Question.Text+" → "+strings.TrimSpace(r.Matches[i]))
			}
		}
	default:
		if strings.TrimSpace(r.Text) != "" {
			out = append(out, r.Text)
		}
	}
	return out
}

// RightWords are the answers q takes as right in words: those of a
// positive weight (multiple choice, short answer, numerical as written),
// the truth, or every pairing; none for an essay or a description.
func RightWords(q Question) []string {
	var out []string
	switch q.Type {
	case MultipleChoice, ShortAnswer, Numerical:
		for _, a := range q.Answers {
			if a.Weight > 0 {
				out = append(out, a.Text.Text)
			}
		}
	case TrueFalse:
		out = append(out, strconv.FormatBool(q.Truth))
	case Matching:
		for _, p := range q.matchQuestions() {
			out = append(out, p.Question.Text+" → "+p.Answer)
		}
	}
	return out
}
