package layout

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
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
}

type learnerOption struct {
	Text string `json:"text"`
}

// LearnerView strips what would give the answers away.
func (*Kind) LearnerView(_ content.Env, value json.RawMessage) (any, error) {
	v, err := parse(value)
	if err != nil {
		return nil, err
	}
	out := LearnerValue{Fallback: v.Fallback, FallbackHTML: v.FallbackHTML, Document: make([]LearnerNode, len(v.Document))}
	for i, n := range v.Document {
		out.Document[i] = LearnerNode{Component: n.Component, Props: n.Props, ID: n.ID}
		if n.Component != "PracticeActivity" {
			continue
		}
		var a PracticeActivityProps
		if err := json.Unmarshal(n.Props, &a); err != nil {
			return nil, fmt.Errorf("layout: parse practice: %w", err)
		}
		lp := learnerPractice{Title: a.Title, Instructions: a.Instructions, Questions: make([]learnerQuestion, len(a.Questions))}
		for q, question := range a.Questions {
			lq := learnerQuestion{Prompt: question.Prompt, Score: question.Score, Options: make([]learnerOption, len(question.Options))}
			for o, opt := range question.Options {
				lq.Options[o] = learnerOption{Text: opt.Text}
			}
			lq.Multiple = len(correctOptions(question.Options)) > 1
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
	Selected []int `json:"selected" maxItems:"10" doc:"Indexes of the options chosen."`
}

// CheckResult tells the learner how the answer went, with what the page
// held back until now.
type CheckResult struct {
	Correct        bool     `json:"correct"`
	Score          float64  `json:"score" doc:"The question's score (1 by default) when correct, else 0."`
	CorrectOptions []int    `json:"correct_options"`
	Hints          []string `json:"hints" doc:"The question's hints, after a wrong answer."`
	Solution       string   `json:"solution,omitempty"`
}

// Practice checks answers to the PracticeActivity questions of layout
// topics and completes the topic on the first check.
type Practice struct {
	Topics   *topics.Service
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
	for _, s := range in.Selected {
		if s < 0 || s >= len(q.Options) {
			return CheckResult{}, apperr.Field("selected", "Each selected option must be the index of an option of the question.")
		}
	}
	res := CheckResult{Correct: CheckChoice(q.Options, in.Selected), CorrectOptions: correctOptions(q.Options),
		Solution: q.Solution, Hints: []string{}}
	if res.Correct {
		res.Score = 1
		if q.Score != nil {
			res.Score = *q.Score
		}
	} else if q.Hints != nil {
		res.Hints = q.Hints
	}
	if pr.Progress != nil {
		if err := pr.Progress.CompleteTopic(ctx, t, p.UserID, topicID); err != nil {
			return CheckResult{}, err
		}
	}
	return res, nil
}

// CheckChoice tells whether the selected options are exactly the correct
// ones. It is the one grading rule of practice questions, kept apart so
// that it can give way to the quiz package's grading of choice questions.
func CheckChoice(options []PracticeOption, selected []int) bool {
	chosen := slices.Clone(selected)
	slices.Sort(chosen)
	return slices.Equal(slices.Compact(chosen), correctOptions(options))
}

func correctOptions(options []PracticeOption) []int {
	out := []int{}
	for i, o := range options {
		if o.Correct {
			out = append(out, i)
		}
	}
	return out
}
