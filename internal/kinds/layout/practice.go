package layout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/kinds/liascript"
	"github.com/lms-platform/lms/internal/kinds/quiz"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// LearnerValue is what learners get of a layout topic: the document with
// every PracticeActivity stripped of correct flags, hints and solutions.
type LearnerValue struct {
	Document     []LearnerNode `json:"document"`
	Fallback     string        `json:"fallback"`
	FallbackHTML string        `json:"fallback_html"`
	// Practice is true when the topic completes on the first checked
	// answer rather than on being viewed.
	Practice bool `json:"practice"`
}

// LearnerNode is a node as learners get it.
type LearnerNode struct {
	Component string `json:"component"`
	Props     any    `json:"props"`
	ID        string `json:"id,omitempty"`
}

type learnerPractice struct {
	Title        string            `json:"title,omitempty"`
	Instructions string            `json:"instructions,omitempty"`
	Questions    []learnerQuestion `json:"questions"`
}

type learnerQuestion struct {
	Prompt  string          `json:"prompt"`
	Options []learnerOption `json:"options"`
	// Multiple says that several options may be chosen (the question
	// has more than one correct option), as checkboxes do.
	Multiple bool     `json:"multiple"`
	Score    *float64 `json:"score,omitempty"`
	// GIFT is a GIFT question as the quiz shows it (no weights, no
	// feedback); its prompt is in Prompt too.
	GIFT *gift.Shown `json:"gift,omitempty"`
}

type learnerOption struct {
	Text string `json:"text"`
}

// learnerLesson is a LiaScriptLesson with the link of the player that
// plays its course, recording nothing.
type learnerLesson struct {
	LiaScriptLessonProps
	PlayURL string `json:"play_url"`
}

// LearnerView strips what would give the answers away, and gives each
// LiaScriptLesson its player's link.
func (*Kind) LearnerView(env content.Env, value json.RawMessage) (any, error) {
	v, err := parse(value)
	if err != nil {
		return nil, err
	}
	out := LearnerValue{Fallback: v.Fallback, FallbackHTML: v.FallbackHTML, Document: make([]LearnerNode, len(v.Document))}
	for i, n := range v.Document {
		out.Document[i] = LearnerNode{Component: n.Component, Props: n.Props, ID: n.ID}
		if n.Component == "LiaScriptLesson" {
			var l LiaScriptLessonProps
			if err := json.Unmarshal(n.Props, &l); err != nil {
				return nil, fmt.Errorf("layout: parse LiaScript lesson: %w", err)
			}
			out.Document[i].Props = learnerLesson{LiaScriptLessonProps: l,
				PlayURL: liascript.PlayURL(env.Tenant, liascript.CourseGrant, l.CourseID, env.Now)}
			continue
		}
		if n.Component != "PracticeActivity" {
			continue
		}
		var a PracticeActivityProps
		if err := json.Unmarshal(n.Props, &a); err != nil {
			return nil, fmt.Errorf("layout: parse practice: %w", err)
		}
		lp := learnerPractice{Title: a.Title, Instructions: a.Instructions, Questions: make([]learnerQuestion, len(a.Questions))}
		for q, question := range a.Questions {
			g, err := question.asGIFT()
			if err != nil {
				return nil, fmt.Errorf("layout: practice question: %w", err)
			}
			lq := learnerQuestion{Prompt: question.Prompt, Score: question.Score, Options: make([]learnerOption, len(question.Options))}
			for o, opt := range question.Options {
				lq.Options[o] = learnerOption{Text: opt.Text}
			}
			lq.Multiple = !g.Single
			if question.GIFT != "" {
				shown := g.Show()
				lq.Prompt, lq.Multiple, lq.GIFT = shown.Prompt.Text, g.Type == gift.MultipleChoice && !g.Single, &shown
			}
			lp.Questions[q] = lq
		}
		out.Document[i].Props = lp
		out.Practice = true
	}
	return out, nil
}

// CompletesItself: a layout with a PracticeActivity completes on its
// first checked answer, never by a progress write.
func (*Kind) CompletesItself(value json.RawMessage) bool {
	v, err := parse(value)
	if err != nil {
		return false
	}
	for _, n := range v.Document {
		if n.Component == "PracticeActivity" {
			return true
		}
	}
	return false
}

// CheckInput is a learner's answer to one question.
type CheckInput struct {
	Node     int   `json:"node" minimum:"0" doc:"Index of the PracticeActivity node in the document."`
	Question int   `json:"question" minimum:"0" doc:"Index of the question in the activity."`
	Selected []int `json:"selected,omitempty" maxItems:"10" doc:"Choice questions {prompt, options}: indexes of the options chosen."`
	// Answer has the shape of a quiz answer, so that one frontend control
	// serves both.
	Answer *gift.Response `json:"answer,omitempty" doc:"GIFT questions: choices (multiple choice: option indexes), truth (true/false), text (short answer, numerical) or matches (matching: one target per item, in order)."`
}

// CheckResult tells the learner how the answer went, with what the page
// held back until now.
type CheckResult struct {
	Correct bool    `json:"correct" doc:"True when the answer earns the full score."`
	Score   float64 `json:"score" doc:"The share of the question's score (1 by default) the answer earns, by the GIFT weights; choice questions earn it only when right."`
	// CorrectOptions are the right options of a choice or multiple-choice
	// question, empty for other types.
	CorrectOptions []int          `json:"correct_options"`
	RightAnswer    *gift.Response `json:"right_answer,omitempty" doc:"GIFT questions: a response that earns the full score, in the shape of answer."`
	Feedback       []string       `json:"feedback" doc:"GIFT questions: the feedback of the answer given, then the general feedback."`
	Hints          []string       `json:"hints" doc:"The question's hints, after a wrong answer."`
	Solution       string         `json:"solution,omitempty"`
}

// Practice checks answers to the PracticeActivity questions of layout
// topics and completes the topic on the first check.
type Practice struct {
	Topics   kinds.Topics
	Progress topics.Completer
}

// Check grades an answer of a learner (or an editor trying the topic).
func (pr *Practice) Check(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, in CheckInput) (CheckResult, error) {
	topic, err := pr.Topics.Learnable(ctx, t, p, topicID)
	if err != nil {
		return CheckResult{}, err
	}
	if topic.TopicableType != Class {
		return CheckResult{}, apperr.New(apperr.Invalid, "This topic is not a layout topic.")
	}
	v, err := parse(topic.Content)
	if err != nil {
		return CheckResult{}, err
	}
	if in.Node >= len(v.Document) || v.Document[in.Node].Component != "PracticeActivity" {
		return CheckResult{}, apperr.Field("node", "The node must be the index of a PracticeActivity of the topic.")
	}
	var a PracticeActivityProps
	if err := json.Unmarshal(v.Document[in.Node].Props, &a); err != nil {
		return CheckResult{}, fmt.Errorf("layout: parse practice: %w", err)
	}
	if in.Question >= len(a.Questions) {
		return CheckResult{}, apperr.Field("question", "The question must be the index of a question of the activity.")
	}
	q := a.Questions[in.Question]
	g, err := q.asGIFT()
	if err != nil {
		return CheckResult{}, fmt.Errorf("layout: practice question: %w", err)
	}
	var r gift.Response
	if q.GIFT == "" {
		for _, s := range in.Selected {
			if s < 0 || s >= len(q.Options) {
				return CheckResult{}, apperr.Field("selected", "Each selected option must be the index of an option of the question.")
			}
		}
		// A choice chosen twice counts once, as it always has.
		r.Choices = slices.Compact(slices.Sorted(slices.Values(in.Selected)))
	} else {
		if in.Answer == nil {
			return CheckResult{}, apperr.Field("answer", "A GIFT question takes its answer in answer.")
		}
		if err := g.Check(*in.Answer); err != nil {
			return CheckResult{}, apperr.Field("answer", "The answer does not fit the question: "+err.Error()+".")
		}
		r = *in.Answer
	}
	fraction, _ := gift.Grade(g, r)
	res := CheckResult{Correct: fraction >= 1-1e-9, Solution: q.Solution, Hints: []string{}, Feedback: []string{}}
	right := rightAnswer(g)
	res.CorrectOptions = right.Choices
	if res.CorrectOptions == nil {
		res.CorrectOptions = []int{}
	}
	score := 1.0
	if q.Score != nil {
		score = *q.Score
	}
	switch {
	case res.Correct:
		res.Score = score
	case q.GIFT != "":
		res.Score = fraction * score
	}
	if q.GIFT != "" {
		res.RightAnswer, res.Feedback = &right, answerFeedback(g, r, res.Correct)
	}
	if !res.Correct && q.Hints != nil {
		res.Hints = q.Hints
	}
	if pr.Progress != nil {
		if err := pr.Progress.CompleteTopic(ctx, t, p.UserID, topicID); err != nil {
			return CheckResult{}, err
		}
	}
	return res, nil
}

// asGIFT is the question in the quiz's model: a choice question becomes
// the multiple-choice question the quiz kind makes of it, so that one
// grading serves both. Essays and descriptions are refused: nothing
// checks them in the browser.
func (q PracticeQuestion) asGIFT() (gift.Question, error) {
	src := q.GIFT
	if src == "" {
		opts := make([]gift.Option, len(q.Options))
		for i, o := range q.Options {
			opts[i] = gift.Option{Text: o.Text, Correct: o.Correct}
		}
		var err error
		if src, err = gift.FromOptions(q.Prompt, opts); err != nil {
			return gift.Question{}, err
		}
	}
	g, err := quiz.ParseOne(src)
	if err != nil {
		return g, err
	}
	if g.Type == gift.Essay || g.Type == gift.Description {
		return g, fmt.Errorf("%s questions cannot be checked in practice; use multiple choice, true/false, short answer, numerical or matching", g.Type)
	}
	return g, nil
}

// rightAnswer is a response that earns the full score of g.
func rightAnswer(g gift.Question) gift.Response {
	var r gift.Response
	switch g.Type {
	case gift.MultipleChoice:
		best := -1
		for i, a := range g.Answers {
			if g.Single {
				if a.Weight > 0 && (best < 0 || a.Weight > g.Answers[best].Weight) {
					best = i
				}
			} else if a.Weight > 0 {
				r.Choices = append(r.Choices, i)
			}
		}
		if best >= 0 {
			r.Choices = []int{best}
		}
	case gift.TrueFalse:
		truth := g.Truth
		r.Truth = &truth
	case gift.ShortAnswer, gift.Numerical:
		if a, ok := bestAnswer(g.Answers); ok && g.Type == gift.ShortAnswer {
			r.Text = a.Text.Text
		} else if ok {
			r.Text = strconv.FormatFloat((a.Min+a.Max)/2, 'f', -1, 64)
		}
	case gift.Matching:
		for _, p := range g.Pairs {
			if p.Question.Text != "" {
				r.Matches = append(r.Matches, p.Answer)
			}
		}
	}
	return r
}

func bestAnswer(answers []gift.Answer) (gift.Answer, bool) {
	var best gift.Answer
	found := false
	for _, a := range answers {
		if !found || a.Weight > best.Weight {
			best, found = a, true
		}
	}
	return best, found
}

// answerFeedback is the feedback the author wrote for the response r,
// then the general feedback. The answer of a short answer or numerical
// question that r matches is found with gift's own grading, asked of that
// answer alone.
func answerFeedback(g gift.Question, r gift.Response, correct bool) []string {
	out := []string{}
	add := func(t *gift.Text) {
		if t != nil && strings.TrimSpace(t.Text) != "" {
			out = append(out, t.Text)
		}
	}
	switch g.Type {
	case gift.MultipleChoice:
		for _, c := range r.Choices {
			add(g.Answers[c].Feedback)
		}
	case gift.TrueFalse:
		if correct {
			add(g.RightFeedback)
		} else {
			add(g.WrongFeedback)
		}
	case gift.ShortAnswer, gift.Numerical:
		matched := -1
		for i, a := range g.Answers {
			alone := g
			a.Weight = 100
			alone.Answers = []gift.Answer{a}
			if f, _ := gift.Grade(alone, r); f > 0 && (matched < 0 || g.Answers[i].Weight > g.Answers[matched].Weight) {
				matched = i
			}
		}
		if matched >= 0 {
			add(g.Answers[matched].Feedback)
		}
	}
	add(g.GeneralFeedback)
	return out
}

// feedbackTexts are all the feedback texts of g, which the fallback must
// leave out as it leaves out hints.
func feedbackTexts(g gift.Question) []string {
	var out []string
	for _, t := range []*gift.Text{g.RightFeedback, g.WrongFeedback, g.GeneralFeedback} {
		if t != nil {
			out = append(out, t.Text)
		}
	}
	for _, a := range g.Answers {
		if a.Feedback != nil {
			out = append(out, a.Feedback.Text)
		}
	}
	return out
}
