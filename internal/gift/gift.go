// Package gift reads and writes questions in Moodle's GIFT format and
// grades a learner's response to one question. Its Question is the
// question model of every kind that asks questions (quiz topics, the
// PracticeActivity of layout topics): they store GIFT text and parse it
// here, so a question means the same wherever it is asked.
//
// The anchor is Moodle's importer (question/format/gift): every question
// Moodle imports parses here to the same type, texts, answers, weights
// and feedback.
package gift

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Type is a question type.
type Type string

// The question types Moodle's GIFT importer knows.
const (
	MultipleChoice Type = "multichoice"
	TrueFalse      Type = "truefalse"
	ShortAnswer    Type = "shortanswer"
	Numerical      Type = "numerical"
	Matching       Type = "matching"
	Essay          Type = "essay"
	Description    Type = "description"
)

// Text formats; a text without a [format] prefix inherits its question's
// format, and a question's defaults to FormatMoodle.
const (
	FormatMoodle   = "moodle"
	FormatHTML     = "html"
	FormatPlain    = "plain"
	FormatMarkdown = "markdown"
)

// Text is a text with its format.
type Text struct {
	Text   string `json:"text"`
	Format string `json:"format"`
}

// Question is one GIFT question.
type Question struct {
	Type Type `json:"type"`
	// Category is the $CATEGORY in effect where the question stands.
	Category string `json:"category,omitempty"`
	// ID and Tags come from "// [id:...]" and "// [tag:...]" comments.
	ID    string   `json:"id,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	Title string   `json:"title,omitempty"`
	// Stem is the text before the answer block; After is the text after
	// it, non-empty for a missing-word question (the block stands in the
	// middle of the text).
	Stem  Text   `json:"stem"`
	After string `json:"after,omitempty"`
	// Single is true for a multiple-choice question with one answer (one
	// written with "="); otherwise the learner may choose several.
	Single bool `json:"single,omitempty"`
	// Answers of multiple choice, short answer and numerical questions.
	Answers []Answer `json:"answers,omitempty"`
	// Pairs of a matching question.
	Pairs []Pair `json:"pairs,omitempty"`
	// Truth is a true/false question's right answer.
	Truth bool `json:"truth,omitempty"`
	// WrongFeedback is shown for a wrong true/false or numerical answer,
	// RightFeedback for a right true/false answer.
	WrongFeedback   *Text `json:"wrongFeedback,omitempty"`
	RightFeedback   *Text `json:"rightFeedback,omitempty"`
	GeneralFeedback *Text `json:"generalFeedback,omitempty"`
}

// Answer is one answer of a multiple choice, short answer or numerical
// question.
type Answer struct {
	// Text is the answer (multiple choice, short answer, where "*" is a
	// wildcard) or the number as written (numerical).
	Text Text `json:"text"`
	// Weight is the share of the question's score this answer earns, in
	// percent, from -100 to 100.
	Weight   float64 `json:"weight"`
	Feedback *Text   `json:"feedback,omitempty"`
	// Min and Max bound the accepted numbers of a numerical answer;
	// Range tells it was written min..max rather than value:tolerance.
	Min   float64 `json:"min,omitempty"`
	Max   float64 `json:"max,omitempty"`
	Range bool    `json:"range,omitempty"`
}

// Pair is one pair of a matching question; an empty Question is a
// distractor answer.
type Pair struct {
	Question Text   `json:"question"`
	Answer   string `json:"answer"`
}

// Prompt is the question's text as shown, with "_____" where the answer
// block of a missing-word question stands.
func (q Question) Prompt() string {
	if q.After == "" {
		return q.Stem.Text
	}
	return q.Stem.Text + " _____ " + q.After
}

// Scored reports whether the question earns points (a description does
// not).
func (q Question) Scored() bool { return q.Type != Description }

// Error is a parse error at a line of the input.
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// Escaped control characters (and \\, a backslash) are replaced by these noncharacters while the
// structure is parsed, as Moodle does with its &&058; placeholders; the
// input's own noncharacters in this range are dropped first.
const (
	phColon     = '\uFDD0'
	phHash      = '\uFDD1'
	phEquals    = '\uFDD2'
	phOpen      = '\uFDD3'
	phClose     = '\uFDD4'
	phTilde     = '\uFDD5'
	phNewline   = '\uFDD6'
	phBackslash = '\uFDD7'
)

var escapes = map[rune]rune{':': phColon, '#': phHash, '=': phEquals, '{': phOpen, '}': phClose, '~': phTilde, 'n': phNewline, '\\': phBackslash}

func isPlaceholder(r rune) bool { return r >= '\uFDD0' && r <= '\uFDDF' }

func protect(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		if isPlaceholder(r) {
			continue
		}
		if r == '\\' && i+1 < len(rs) {
			if ph, ok := escapes[rs[i+1]]; ok {
				b.WriteRune(ph)
				i++
				continue
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}

var unprotect = strings.NewReplacer(string(phColon), ":", string(phHash), "#", string(phEquals), "=",
	string(phOpen), "{", string(phClose), "}", string(phTilde), "~", string(phNewline), "\n",
	string(phBackslash), `\`)

// Parse reads GIFT text. Questions are separated by blank lines; lines
// starting with "//" are comments.
func Parse(src string) ([]Question, error) {
	if !utf8.ValidString(src) {
		return nil, &Error{Line: 1, Msg: "expected UTF-8 text"}
	}
	src = strings.ReplaceAll(strings.ReplaceAll(src, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(src, "\n")
	var out []Question
	category := ""
	var block []string
	start := 0
	var id string
	var tags []string
	flush := func() error {
		defer func() { block, id, tags = nil, "", nil }()
		text := strings.Join(block, "\n")
		if strings.TrimSpace(text) == "" {
			return nil
		}
		lead := strings.Count(text[:len(text)-len(strings.TrimLeft(text, " \t\n"))], "\n")
		q, cat, err := parseQuestion(strings.TrimSpace(text), start+lead)
		if err != nil {
			return err
		}
		if q == nil {
			category = cat
			return nil
		}
		q.Category, q.ID, q.Tags = category, id, tags
		out = append(out, *q)
		return nil
	}
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" {
			if err := flush(); err != nil {
				return nil, err
			}
			continue
		}
		if len(block) == 0 {
			start = i + 1
		}
		if strings.HasPrefix(trimmed, "//") {
			id, tags = commentMeta(trimmed, id, tags)
			// Keep the line (empty) so that line numbers stay right.
			line = ""
		}
		block = append(block, line)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// commentMeta reads Moodle's "[id:...]" and "[tag:...]" markers.
func commentMeta(comment, id string, tags []string) (string, []string) {
	for {
		i := strings.Index(comment, "[")
		if i < 0 {
			return id, tags
		}
		comment = comment[i+1:]
		j := strings.Index(comment, "]")
		if j < 0 {
			return id, tags
		}
		item := comment[:j]
		comment = comment[j+1:]
		if v, ok := strings.CutPrefix(item, "id:"); ok {
			id = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(item, "tag:"); ok && strings.TrimSpace(v) != "" {
			tags = append(tags, strings.TrimSpace(v))
		}
	}
}

// parseQuestion reads one question block; a $CATEGORY block returns no
// question and the category.
func parseQuestion(raw string, line int) (*Question, string, error) {
	text := protect(raw)
	lineAt := func(off int) int { return line + strings.Count(text[:off], "\n") }
	if rest, ok := strings.CutPrefix(text, "$CATEGORY:"); ok {
		return nil, strings.TrimSpace(unprotect.Replace(rest)), nil
	}
	q := &Question{}
	body := 0
	if strings.HasPrefix(text, "::") {
		end := strings.Index(text[2:], "::")
		if end < 0 {
			return nil, "", &Error{Line: line, Msg: "expected :: closing the title"}
		}
		q.Title = strings.TrimSpace(unprotect.Replace(text[2 : 2+end]))
		body = 2 + end + 2
		body += len(text[body:]) - len(strings.TrimLeft(text[body:], " \t\n"))
	}
	open := strings.Index(text[body:], "{")
	if open >= 0 {
		open += body
	}
	closing := -1
	if open >= 0 {
		closing = strings.Index(text[open:], "}")
		if closing >= 0 {
			closing += open
		}
	}
	switch {
	case open < 0 && strings.Contains(text[body:], "}"):
		return nil, "", &Error{Line: lineAt(body + strings.Index(text[body:], "}")), Msg: "expected { before }, or \\} for a literal brace"}
	case open >= 0 && closing < 0:
		return nil, "", &Error{Line: lineAt(open), Msg: "expected } closing the answer block opened here"}
	}
	var answers string
	if open < 0 {
		q.Type = Description
		q.Stem = withFormat(text[body:], FormatMoodle)
		return q, "", nil
	}
	q.Stem = withFormat(text[body:open], FormatMoodle)
	q.After = strings.TrimSpace(unprotect.Replace(text[closing+1:]))
	answers = strings.TrimSpace(text[open+1 : closing])
	at := lineAt(open)
	if gf := strings.LastIndex(answers, "####"); gf >= 0 {
		t := withFormat(answers[gf+4:], q.Stem.Format)
		q.GeneralFeedback = nonEmpty(t)
		answers = strings.TrimSpace(answers[:gf])
	}
	var err error
	switch {
	case answers == "":
		q.Type = Essay
	case answers[0] == '#':
		q.Type = Numerical
		err = parseNumerical(q, answers[1:], at)
	case strings.Contains(answers, "~"):
		q.Type = MultipleChoice
		err = parseChoice(q, answers, at)
	case strings.Contains(answers, "=") && strings.Contains(answers, "->"):
		q.Type = Matching
		err = parseMatching(q, answers, at)
	case isTrueFalse(answers):
		q.Type = TrueFalse
		parseTrueFalse(q, answers)
	default:
		q.Type = ShortAnswer
		err = parseShort(q, answers, at)
	}
	if err != nil {
		return nil, "", err
	}
	return q, "", nil
}

// withFormat reads an optional [format] prefix; an unknown one is text.
func withFormat(s, def string) Text {
	s = strings.TrimSpace(s)
	t := Text{Format: def}
	if strings.HasPrefix(s, "[") {
		if end := strings.Index(s, "]"); end > 0 {
			switch f := s[1:end]; f {
			case FormatMoodle, FormatHTML, FormatPlain, FormatMarkdown:
				t.Format = f
				s = s[end+1:]
			}
		}
	}
	t.Text = strings.TrimSpace(unprotect.Replace(s))
	return t
}

func nonEmpty(t Text) *Text {
	if t.Text == "" {
		return nil
	}
	return &t
}

// splitFeedback splits "answer#feedback" at the first #.
func splitFeedback(s, format string) (Text, *Text) {
	text, fb, found := strings.Cut(s, "#")
	t := withFormat(text, format)
	if !found {
		return t, nil
	}
	return t, nonEmpty(withFormat(fb, format))
}

// weight reads a leading %n% weight.
func weight(s string, line int) (float64, string, bool, error) {
	if !strings.HasPrefix(s, "%") {
		return 0, s, false, nil
	}
	end := strings.Index(s[1:], "%")
	if end < 0 {
		return 0, s, false, &Error{Line: line, Msg: fmt.Sprintf("expected %% closing the weight in %q", clip(s))}
	}
	w, err := strconv.ParseFloat(strings.TrimSpace(s[1:1+end]), 64)
	if err != nil || math.IsNaN(w) || w < -100 || w > 100 {
		return 0, s, false, &Error{Line: line, Msg: fmt.Sprintf("expected a weight between %%-100%% and %%100%%, found %q", clip(s[:end+2]))}
	}
	return w, strings.TrimSpace(s[end+2:]), true, nil
}

// splitOn splits s before each separator rune, keeping the separator at
// the start of each part; text before the first separator is the first
// part when not blank.
func splitOn(s string, seps string) []string {
	var parts []string
	last := 0
	for i, r := range s {
		if strings.ContainsRune(seps, r) && i > 0 {
			parts = append(parts, s[last:i])
			last = i
		}
	}
	parts = append(parts, s[last:])
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func parseChoice(q *Question, s string, line int) error {
	q.Single = strings.Contains(s, "=")
	for _, part := range splitOn(s, "~=") {
		correct := part[0] == '='
		if part[0] == '=' || part[0] == '~' {
			part = strings.TrimSpace(part[1:])
		}
		w, rest, has, err := weight(part, line)
		if err != nil {
			return err
		}
		if !has && correct {
			w = 100
		}
		t, fb := splitFeedback(rest, q.Stem.Format)
		q.Answers = append(q.Answers, Answer{Text: t, Weight: w, Feedback: fb})
	}
	if len(q.Answers) < 2 {
		return &Error{Line: line, Msg: "expected at least two answers (= right, ~ wrong) in a multiple-choice question"}
	}
	return nil
}

func parseShort(q *Question, s string, line int) error {
	answers, err := rightAnswers(q, s, line)
	if err != nil {
		return err
	}
	q.Answers = append(q.Answers, answers...)
	if len(q.Answers) == 0 {
		return &Error{Line: line, Msg: "expected an answer (=text) in the answer block"}
	}
	return nil
}

// rightAnswers reads the = parts of a short-answer or numerical block:
// each an accepted answer with its weight (100% unless given) and
// feedback.
func rightAnswers(q *Question, s string, line int) ([]Answer, error) {
	var out []Answer
	for _, part := range splitOn(s, "=") {
		part = strings.TrimSpace(strings.TrimPrefix(part, "="))
		w, rest, has, err := weight(part, line)
		if err != nil {
			return nil, err
		}
		if !has {
			w = 100
		}
		t, fb := splitFeedback(rest, q.Stem.Format)
		out = append(out, Answer{Text: t, Weight: w, Feedback: fb})
	}
	return out, nil
}

func parseMatching(q *Question, s string, line int) error {
	for _, part := range splitOn(s, "=") {
		part = strings.TrimSpace(strings.TrimPrefix(part, "="))
		sub, ans, ok := strings.Cut(part, "->")
		if !ok {
			return &Error{Line: line, Msg: fmt.Sprintf("expected \"question -> answer\" in a matching pair, found %q", clip(unprotect.Replace(part)))}
		}
		q.Pairs = append(q.Pairs, Pair{Question: withFormat(sub, q.Stem.Format), Answer: strings.TrimSpace(unprotect.Replace(ans))})
	}
	if len(q.Pairs) < 2 {
		return &Error{Line: line, Msg: "expected at least two pairs in a matching question"}
	}
	return nil
}

func isTrueFalse(s string) bool {
	head, _, _ := strings.Cut(s, "#")
	switch strings.TrimSpace(head) {
	case "T", "TRUE", "F", "FALSE":
		return true
	}
	return false
}

// parseTrueFalse reads {TRUE#wrong#right}: as in Moodle, the first
// feedback is for the wrong answer and the second for the right one.
func parseTrueFalse(q *Question, s string) {
	parts := strings.SplitN(s, "#", 3)
	head := strings.TrimSpace(parts[0])
	q.Truth = head == "T" || head == "TRUE"
	if len(parts) > 1 {
		q.WrongFeedback = nonEmpty(withFormat(parts[1], q.Stem.Format))
	}
	if len(parts) > 2 {
		q.RightFeedback = nonEmpty(withFormat(parts[2], q.Stem.Format))
	}
}

func parseNumerical(q *Question, s string, line int) error {
	// A ~ part is the feedback for a wrong number.
	if i := strings.Index(s, "~"); i >= 0 {
		fb := nonEmpty(withFormat(strings.TrimPrefix(strings.TrimSpace(s[i+1:]), "#"), q.Stem.Format))
		q.WrongFeedback = fb
		s = s[:i]
	}
	answers, err := rightAnswers(q, s, line)
	if err != nil {
		return err
	}
	for _, a := range answers {
		if err := readNumber(&a, line); err != nil {
			return err
		}
		q.Answers = append(q.Answers, a)
	}
	if len(q.Answers) == 0 {
		return &Error{Line: line, Msg: "expected a number after # in a numerical answer block"}
	}
	return nil
}

func number(s string, line int) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, &Error{Line: line, Msg: fmt.Sprintf("expected a number, found %q", clip(s))}
	}
	return v, nil
}

// readNumber reads "value", "value:tolerance" or "min..max".
func readNumber(a *Answer, line int) error {
	s := a.Text.Text
	if lo, hi, ok := strings.Cut(s, ".."); ok && strings.TrimSpace(lo) != "" {
		min, err := number(lo, line)
		if err != nil {
			return err
		}
		max, err := number(hi, line)
		if err != nil {
			return err
		}
		if min > max {
			return &Error{Line: line, Msg: fmt.Sprintf("expected min..max with min ≤ max, found %q", clip(s))}
		}
		a.Min, a.Max, a.Range = min, max, true
		return nil
	}
	val, tol := s, "0"
	if v, t, ok := strings.Cut(s, ":"); ok && strings.TrimSpace(v) != "" {
		val, tol = v, t
	}
	v, err := number(val, line)
	if err != nil {
		return err
	}
	t, err := number(tol, line)
	if err != nil {
		return err
	}
	t = math.Abs(t)
	a.Min, a.Max = v-t, v+t
	return nil
}

func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	for i := 40; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}

// MarshalJSON writes the question with the answer data its type always
// has, whatever the value: the truth of a true/false question (false is
// a right answer too), single of a multiple-choice question, and the
// bounds and range of a numerical answer (0 is a bound). omitempty would
// drop each of them when it is false or 0.
func (q Question) MarshalJSON() ([]byte, error) {
	type plain Question
	type numerical struct {
		Answer
		Min   float64 `json:"min"`
		Max   float64 `json:"max"`
		Range bool    `json:"range"`
	}
	out := struct {
		plain
		Truth   *bool `json:"truth,omitempty"`
		Single  *bool `json:"single,omitempty"`
		Answers []any `json:"answers,omitempty"`
	}{plain: plain(q)}
	switch q.Type {
	case TrueFalse:
		out.Truth = &q.Truth
	case MultipleChoice:
		out.Single = &q.Single
	}
	for _, a := range q.Answers {
		if q.Type == Numerical {
			out.Answers = append(out.Answers, numerical{Answer: a, Min: a.Min, Max: a.Max, Range: a.Range})
		} else {
			out.Answers = append(out.Answers, a)
		}
	}
	return json.Marshal(out)
}
