// This file is the quiz content kind: an intro text and questions in
// GIFT (package gift), each with a score, plus the number of attempts a
// learner has and the score that passes. quiz.go runs the attempts;
// this file says what a quiz is.

package quiz

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/kinds/richtext"
)

// Class is the topicable class of quiz topics.
const Class = `Lms\TopicTypeGift\Models\GiftQuiz`

// Limits of a quiz.
const (
	MaxQuestions   = 500
	MaxGIFT        = 64 << 10
	MaxScore       = 1000
	MaxAttemptsCap = 1000
	maxIntro       = 1 << 20
	// DefaultScore is a question's score when the author gives none.
	DefaultScore = 1
)

// Question is one question of a quiz: its GIFT text, parsed, and its
// score (points earned by a fully right answer).
type Question struct {
	// ID is stable within the topic: attempts and the admin routes name
	// questions by it.
	ID    int64         `json:"id"`
	GIFT  string        `json:"gift"`
	Score float64       `json:"score"`
	Q     gift.Question `json:"-"`
}

// Value is what a quiz topic stores.
type Value struct {
	Intro     string `json:"intro,omitempty"`
	IntroHTML string `json:"intro_html,omitempty"`
	// MaxAttempts is the number of attempts a learner has; 0: no limit.
	MaxAttempts int `json:"max_attempts,omitempty"`
	// MinPassScore is the score (in points, as the questions' scores) an
	// attempt needs to pass; nil: any ended attempt completes the topic.
	MinPassScore *float64 `json:"min_pass_score,omitempty"`
	// Review is when a learner sees the review of a question (right
	// answers, feedback, points); empty means ReviewAfterEnd.
	Review    string     `json:"review,omitempty"`
	Questions []Question `json:"questions"`
	NextID    int64      `json:"next_id"`
}

// The review settings of a quiz.
const (
	ReviewAfterEnd = "after_end"
	// ReviewAfterAnswer shows each answer's review once it is saved, and
	// the answer is then final, so the review cannot be used to fix it.
	ReviewAfterAnswer = "after_answer"
	// ReviewNever shows learners only their score and pass.
	ReviewNever = "never"
)

// ReviewMode is the quiz's review setting, never empty.
func (v Value) ReviewMode() string {
	if v.Review == "" {
		return ReviewAfterEnd
	}
	return v.Review
}

// MaxTotal is the score of a fully right attempt.
func (v Value) MaxTotal() float64 {
	total := 0.0
	for _, q := range v.Questions {
		if q.Q.Scored() {
			total += q.Score
		}
	}
	return total
}

// Input is one question as topic creation takes it: a multiple-choice
// question (prompt and options, converted to GIFT) or GIFT text.
type Input struct {
	// ID keeps an existing question's id (the admin question routes
	// rewrite the list through it); new questions have none.
	ID      int64         `json:"id,omitempty"`
	Prompt  string        `json:"prompt,omitempty"`
	Options []gift.Option `json:"options,omitempty"`
	GIFT    string        `json:"gift,omitempty"`
	Score   *float64      `json:"score,omitempty"`
}

// Kind is the quiz kind.
type Kind struct{}

func (Kind) Class() string { return Class }
func (Kind) Name() string  { return "quiz" }

// Build takes questions (a JSON array of Input, required on create),
// maxAttempts, minPassScore, review and the intro as value (or intro). On update,
// fields not sent keep their old values.
func (Kind) Build(_ context.Context, _ content.Env, old json.RawMessage, in content.Input) (json.RawMessage, error) {
	v := Value{NextID: 1}
	if old != nil {
		prev, err := Parse(old)
		if err != nil {
			return nil, err
		}
		v = prev
	}
	errs := map[string][]string{}
	fail := func(field, msg string) { errs[field] = append(errs[field], msg) }
	if intro, ok := introOf(in); ok {
		if len(intro) > maxIntro {
			fail("value", "The intro may not be greater than 1 MiB.")
		} else {
			html, err := richtext.Render(intro)
			if err != nil {
				return nil, err
			}
			v.Intro, v.IntroHTML = intro, html
		}
	}
	if raw, ok := in.Sent("maxAttempts", "max_attempts"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil || n < 0 || n > MaxAttemptsCap {
			fail("maxAttempts", fmt.Sprintf("The maxAttempts must be an integer from 0 (no limit) to %d.", MaxAttemptsCap))
		}
		v.MaxAttempts = n
	}
	if raw, ok := in.Sent("minPassScore", "min_pass_score"); ok {
		if strings.TrimSpace(raw) == "null" {
			v.MinPassScore = nil
		} else if f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64); err != nil || math.IsNaN(f) || f < 0 || f > MaxScore*MaxQuestions {
			fail("minPassScore", "The minPassScore must be a number of points, at least 0.")
		} else {
			v.MinPassScore = &f
		}
	}
	if raw, ok := in.Sent("review"); ok {
		switch r := strings.TrimSpace(raw); r {
		case ReviewAfterEnd, ReviewAfterAnswer, ReviewNever:
			v.Review = r
		default:
			fail("review", "The review must be after_end, after_answer or never.")
		}
	}
	raw, ok := in.Sent("questions")
	switch {
	case ok:
		var items []json.RawMessage
		if err := json.Unmarshal([]byte(raw), &items); err != nil {
			fail("questions", "The questions must be an array.")
			break
		}
		if len(items) > MaxQuestions {
			fail("questions", fmt.Sprintf("A quiz holds at most %d questions.", MaxQuestions))
			break
		}
		prev := v
		v.Questions = nil
		seen := map[int64]bool{}
		for i, item := range items {
			field := fmt.Sprintf("questions.%d", i)
			var qi Input
			if err := strictJSON(item, &qi); err != nil {
				fail(field, "A question is {prompt, options: [{text, correct}], score?} or {gift, score?}.")
				continue
			}
			q, problems := qi.question(field)
			if _, known := prev.ByID(qi.ID); qi.ID != 0 && (!known || seen[qi.ID]) {
				problems[field+".id"] = []string{"The id must name a question of this quiz, once."}
			}
			for f, msgs := range problems {
				errs[f] = append(errs[f], msgs...)
			}
			if len(problems) == 0 {
				q.ID = qi.ID
				if q.ID == 0 {
					q.ID = v.NextID
					v.NextID++
				}
				seen[q.ID] = true
				v.Questions = append(v.Questions, q)
			}
		}
	case old == nil:
		fail("questions", "The questions field is required.")
	}
	if len(errs) > 0 {
		return nil, apperr.Validation(errs)
	}
	return json.Marshal(v)
}

func introOf(in content.Input) (string, bool) {
	if s, ok := in.Sent("intro"); ok {
		return s, true
	}
	var s string
	if len(in.Value) > 0 && json.Unmarshal(in.Value, &s) == nil {
		return s, true
	}
	return "", false
}

func strictJSON(raw json.RawMessage, v any) error {
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.DisallowUnknownFields()
	return d.Decode(v)
}

// question checks one Input and turns it into a Question (without its
// id); problems are keyed by field path.
func (qi Input) question(field string) (Question, map[string][]string) {
	problems := map[string][]string{}
	q := Question{Score: DefaultScore}
	if qi.Score != nil {
		if math.IsNaN(*qi.Score) || *qi.Score < 0 || *qi.Score > MaxScore {
			problems[field+".score"] = []string{fmt.Sprintf("The score must be from 0 to %d.", MaxScore)}
		}
		q.Score = *qi.Score
	}
	switch {
	case qi.GIFT != "" && (qi.Prompt != "" || len(qi.Options) > 0):
		problems[field] = []string{"A question is either gift or prompt with options, not both."}
	case qi.GIFT != "":
		parsed, err := ParseOne(qi.GIFT)
		if err != nil {
			problems[field+".gift"] = []string{err.Error()}
		}
		q.GIFT, q.Q = qi.GIFT, parsed
	default:
		g, err := gift.FromOptions(qi.Prompt, qi.Options)
		if err != nil {
			problems[field] = []string{err.Error()}
			break
		}
		q.GIFT = g
		q.Q, _ = ParseOne(g)
	}
	if q.Q.Type == gift.Description {
		// A description asks nothing and earns nothing.
		q.Score = 0
	}
	return q, problems
}

// ParseOne parses GIFT text that must hold exactly one question.
func ParseOne(src string) (gift.Question, error) {
	if len(src) > MaxGIFT {
		return gift.Question{}, fmt.Errorf("the GIFT text may not be greater than %d KiB", MaxGIFT>>10)
	}
	qs, err := gift.Parse(src)
	if err != nil {
		return gift.Question{}, err
	}
	if len(qs) != 1 {
		return gift.Question{}, fmt.Errorf("expected one question, found %d", len(qs))
	}
	return qs[0], nil
}

// Copy returns the value: a quiz holds no files.
func (Kind) Copy(_ context.Context, _ content.Env, value json.RawMessage) (json.RawMessage, error) {
	return value, nil
}

// Remove has nothing to delete; attempts belong to package quiz.
func (Kind) Remove(context.Context, content.Env, json.RawMessage) error { return nil }

// CompletesItself: a quiz completes only through an attempt (passed, or
// ended when it has no pass score), never by a progress write.
func (Kind) CompletesItself(json.RawMessage) bool { return true }

// View is what topics and programs show: the intro and the rules, never
// the questions, whose answers learners must not read; learners see the
// questions through an attempt, authors through the question routes.
type View struct {
	Intro         string   `json:"intro,omitempty"`
	MaxAttempts   int      `json:"max_attempts"`
	MinPassScore  *float64 `json:"min_pass_score"`
	Review        string   `json:"review"`
	QuestionCount int      `json:"question_count"`
	MaxScore      float64  `json:"max_score"`
}

// View shows the quiz without its questions.
func (Kind) View(_ content.Env, value json.RawMessage) (any, error) {
	v, err := Parse(value)
	if err != nil {
		return nil, err
	}
	return View{Intro: v.IntroHTML, MaxAttempts: v.MaxAttempts, MinPassScore: v.MinPassScore,
		Review: v.ReviewMode(), QuestionCount: len(v.Questions), MaxScore: v.MaxTotal()}, nil
}

// Parse reads a stored value with its questions parsed.
func Parse(value json.RawMessage) (Value, error) {
	var v Value
	if err := json.Unmarshal(value, &v); err != nil {
		return v, fmt.Errorf("quiz: parse value: %w", err)
	}
	for i := range v.Questions {
		q, err := ParseOne(v.Questions[i].GIFT)
		if err != nil {
			return v, fmt.Errorf("quiz: stored question %d: %w", v.Questions[i].ID, err)
		}
		v.Questions[i].Q = q
	}
	if v.NextID < 1 {
		v.NextID = 1
	}
	return v, nil
}

// ByID finds a question.
func (v Value) ByID(id int64) (Question, bool) {
	i := slices.IndexFunc(v.Questions, func(q Question) bool { return q.ID == id })
	if i < 0 {
		return Question{}, false
	}
	return v.Questions[i], true
}
