package gift

import (
	"strconv"
	"strings"
)

// escaper writes text so that it parses back to itself: control
// characters escaped, line breaks as \n so that a text never holds the
// blank line that ends a question or a line that reads as a comment.
var escaper = strings.NewReplacer(`\`, `\\`, "~", `\~`, "=", `\=`, "#", `\#`, "{", `\{`, "}", `\}`, ":", `\:`, "\n", `\n`)

func esc(s string) string { return escaper.Replace(s) }

// text renders t, naming its format when it differs from def or when the
// text itself starts with a bracket that would read as a format.
func text(t Text, def string) string {
	s := esc(t.Text)
	if t.Format != def || strings.HasPrefix(t.Text, "[") {
		s = "[" + t.Format + "]" + s
	}
	return s
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Render writes questions as GIFT that Parse reads back to the same
// questions.
func Render(qs []Question) string {
	var b strings.Builder
	category := ""
	for i, q := range qs {
		if i > 0 {
			b.WriteString("\n")
		}
		if q.Category != category {
			b.WriteString("$CATEGORY: " + esc(q.Category) + "\n\n")
			category = q.Category
		}
		b.WriteString(RenderQuestion(q))
	}
	return b.String()
}

// RenderQuestion writes one question (without its category) as GIFT.
func RenderQuestion(q Question) string {
	var b strings.Builder
	if q.ID != "" {
		b.WriteString("// [id:" + strings.ReplaceAll(q.ID, "]", "") + "]\n")
	}
	for _, t := range q.Tags {
		b.WriteString("// [tag:" + strings.ReplaceAll(t, "]", "") + "]\n")
	}
	if q.Title != "" {
		b.WriteString("::" + esc(q.Title) + ":: ")
	}
	format := q.Stem.Format
	b.WriteString(text(q.Stem, FormatMoodle))
	if q.Type == Description {
		b.WriteString("\n")
		return b.String()
	}
	b.WriteString(" {")
	switch q.Type {
	case MultipleChoice:
		for _, a := range q.Answers {
			switch {
			case q.Single && a.Weight == 100:
				b.WriteString("\n\t=")
			case q.Single && a.Weight > 0:
				b.WriteString("\n\t=%" + num(a.Weight) + "%")
			case a.Weight != 0 || strings.HasPrefix(a.Text.Text, "%"):
				b.WriteString("\n\t~%" + num(a.Weight) + "%")
			default:
				b.WriteString("\n\t~")
			}
			answer(&b, a, format)
		}
	case ShortAnswer, Numerical:
		if q.Type == Numerical {
			b.WriteString("#")
		}
		for _, a := range q.Answers {
			var one strings.Builder
			answer(&one, a, format)
			if q.Type == ShortAnswer && len(q.Answers) == 1 && strings.Contains(one.String(), "->") {
				// "=" with "->" reads as matching: a lone answer goes
				// without its "=".
				b.WriteString("\n\t")
			} else {
				b.WriteString("\n\t=")
			}
			if a.Weight != 100 || strings.HasPrefix(a.Text.Text, "%") {
				b.WriteString("%" + num(a.Weight) + "%")
			}
			if q.Type == Numerical {
				// Numbers hold no control characters: written as they are.
				b.WriteString(numericalText(a) + " ")
				if a.Feedback != nil {
					b.WriteString("#" + text(*a.Feedback, format))
				}
				continue
			}
			answer(&b, a, format)
		}
		if q.Type == Numerical && q.WrongFeedback != nil {
			b.WriteString("\n\t~#" + text(*q.WrongFeedback, format))
		}
	case Matching:
		for _, p := range q.Pairs {
			b.WriteString("\n\t=" + text(p.Question, format) + " -> " + esc(p.Answer))
		}
	case TrueFalse:
		if q.Truth {
			b.WriteString("TRUE")
		} else {
			b.WriteString("FALSE")
		}
		if q.WrongFeedback != nil || q.RightFeedback != nil {
			b.WriteString("#")
			if q.WrongFeedback != nil {
				b.WriteString(text(*q.WrongFeedback, format))
			}
		}
		if q.RightFeedback != nil {
			b.WriteString("#" + text(*q.RightFeedback, format))
		}
	}
	if q.GeneralFeedback != nil {
		b.WriteString("\n\t####" + text(*q.GeneralFeedback, format))
	}
	if q.Type != TrueFalse && q.Type != Essay {
		b.WriteString("\n")
	}
	b.WriteString("}")
	if q.After != "" {
		b.WriteString(" " + esc(q.After))
	}
	b.WriteString("\n")
	return b.String()
}

// numericalText is the number as written when it still parses to the
// answer's bounds, else the bounds themselves.
func numericalText(a Answer) string {
	check := Answer{Text: Text{Text: a.Text.Text}}
	if readNumber(&check, 0) == nil && check.Min == a.Min && check.Max == a.Max {
		return a.Text.Text
	}
	if a.Min == a.Max {
		return num(a.Min)
	}
	return num(a.Min) + ".." + num(a.Max)
}

func answer(b *strings.Builder, a Answer, format string) {
	b.WriteString(text(a.Text, format) + " ")
	if a.Feedback != nil {
		b.WriteString("#" + text(*a.Feedback, format))
	}
}
