package reports

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
)

// TopicTrack is one learner's work in one topic in full: the topic's row
// of the learner's detail, and the records its kind kept. Each list is
// empty unless the topic is of its kind and the learner did something.
type TopicTrack struct {
	CourseID    int64                `json:"course_id"`
	CourseTitle string               `json:"course_title"`
	UserID      int64                `json:"user_id"`
	Name        string               `json:"name"`
	Email       string               `json:"email"`
	Topic       GradebookTopicDetail `json:"topic" doc:"The topic's row of GET .../progress/{user_id}, with its tracks summed up."`
	Quiz        []QuizAttempt        `json:"quiz_attempts" doc:"A quiz topic: every attempt, oldest first, with each question's answer and the right one."`
	SCORM       []SCORecord          `json:"scorm_scos" doc:"A SCORM topic: the learner's track of each SCO launched, in the package's order."`
	CMI5        []XAPIStatement      `json:"cmi5_statements" doc:"A cmi5 topic: the latest statements of the learner's registration (at most 500), oldest first; voided ones left out."`
	H5P         []XAPIStatement      `json:"h5p_statements" doc:"An H5P topic: the latest statements its content reported (at most 500), oldest first."`
}

// QuizAttempt is one attempt at a quiz.
type QuizAttempt struct {
	ID             int64        `json:"id" doc:"The attempt's id (POST /api/admin/quiz-attempts/{id}/grade grades its essays)."`
	Number         int64        `json:"number"`
	StartedAt      time.Time    `json:"started_at"`
	EndsAt         time.Time    `json:"ends_at" doc:"When its time runs out."`
	EndedAt        *time.Time   `json:"ended_at" doc:"null while under way."`
	Score          float64      `json:"score" doc:"Points earned so far."`
	MaxScore       float64      `json:"max_score"`
	Passed         *bool        `json:"passed" doc:"null while under way, while an essay waits for a grade, or without a pass score."`
	PendingGrading bool         `json:"pending_grading" doc:"An essay answer waits for a grade."`
	Answered       int          `json:"answered" doc:"Questions answered."`
	Right          int          `json:"right" doc:"Questions that earned their full points."`
	Questions      []QuizAnswer `json:"questions" doc:"The scored questions of the attempt, in its order."`
}

// QuizAnswer is one question of an attempt and the learner's answer.
type QuizAnswer struct {
	QuestionID int64    `json:"question_id"`
	Type       string   `json:"type" doc:"multichoice, truefalse, shortanswer, numerical, matching or essay."`
	Prompt     string   `json:"prompt" doc:"The question's text, as written in GIFT."`
	Points     float64  `json:"points" doc:"Points of a fully right answer."`
	Earned     *float64 `json:"earned" doc:"Points earned; null while an essay waits for a grade."`
	Answered   bool     `json:"answered"`
	Answer     []string `json:"answer" doc:"The answer in words: the options chosen, the text, true or false, or item → target per match."`
	Right      []string `json:"right" doc:"The answers the question takes as right, in the same words; empty for an essay."`
}

// SCORecord is the learner's track of one SCO.
type SCORecord struct {
	SCOID             int64            `json:"sco_id"`
	Title             string           `json:"title"`
	Attempt           int64            `json:"attempt" doc:"The attempt the track holds (a new one starts after an ended attempt)."`
	Completion        string           `json:"completion" doc:"Completion status (1.2: the lesson status)."`
	Success           string           `json:"success" doc:"Success status; unknown when the SCO did not say."`
	ScoreRaw          *float64         `json:"score_raw"`
	ScoreMin          *float64         `json:"score_min"`
	ScoreMax          *float64         `json:"score_max"`
	ScoreScaled       *float64         `json:"score_scaled"`
	TotalSeconds      int64            `json:"total_seconds" doc:"Time over all sessions of the attempt."`
	SessionSeconds    int64            `json:"session_seconds" doc:"Time of the latest session."`
	Exit              string           `json:"exit"`
	Location          string           `json:"location" doc:"The bookmark the SCO keeps."`
	SuspendDataLength int              `json:"suspend_data_length" doc:"Characters of suspend data kept."`
	Interactions      []SCOInteraction `json:"interactions" doc:"cmi.interactions in order (at most 500)."`
	CompletedAt       *time.Time       `json:"completed_at"`
	UpdatedAt         time.Time        `json:"updated_at"`
}

// SCOInteraction is one cmi.interactions.n of a SCO's track.
type SCOInteraction struct {
	ID              string `json:"id"`
	Type            string `json:"type"`
	Description     string `json:"description"`
	LearnerResponse string `json:"learner_response" doc:"1.2: student_response."`
	CorrectResponse string `json:"correct_response" doc:"The first correct response pattern."`
	Result          string `json:"result"`
	Latency         string `json:"latency"`
	Time            string `json:"time" doc:"2004: timestamp; 1.2: time."`
}

// XAPIStatement is an xAPI statement as a tutor reads it.
type XAPIStatement struct {
	ID         string      `json:"id"`
	Verb       string      `json:"verb" doc:"The verb id."`
	VerbName   string      `json:"verb_name" doc:"The verb's display in English, or in any language given."`
	Object     string      `json:"object" doc:"The object's id."`
	ObjectName string      `json:"object_name" doc:"The object's name in English, or in any language given."`
	Timestamp  *time.Time  `json:"timestamp" doc:"When it happened, as the statement says."`
	Stored     time.Time   `json:"stored" doc:"When it was stored."`
	Result     *XAPIResult `json:"result" doc:"null without a result."`
}

// XAPIResult is a statement's result.
type XAPIResult struct {
	Completion  *bool    `json:"completion"`
	Success     *bool    `json:"success"`
	ScoreScaled *float64 `json:"score_scaled"`
	ScoreRaw    *float64 `json:"score_raw"`
	ScoreMin    *float64 `json:"score_min"`
	ScoreMax    *float64 `json:"score_max"`
	Duration    string   `json:"duration" doc:"ISO 8601 duration, as given."`
	Response    string   `json:"response"`
}

// MaxStatements bounds the statements a topic's track lists.
const MaxStatements = 500

// TopicSource fills in what one kind kept of a learner's work in one
// topic of that kind.
type TopicSource func(ctx context.Context, t *platform.Tenant, userID, topicID int64, into *TopicTrack) error

var errNotTopic = apperr.New(apperr.NotFound, "The topic is not a visible topic of this course.")

// TopicTrack answers one learner's work in one visible topic of a course:
// the rules of Detail, and 404 for a topic that is not one of the
// course's visible topics.
func (s *Service) TopicTrack(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID, userID, topicID int64) (TopicTrack, error) {
	d, err := s.Detail(ctx, t, p, courseID, userID)
	if err != nil {
		return TopicTrack{}, err
	}
	i := slices.IndexFunc(d.Topics, func(x GradebookTopicDetail) bool { return x.ID == topicID })
	if i < 0 {
		return TopicTrack{}, errNotTopic
	}
	out := TopicTrack{CourseID: d.CourseID, CourseTitle: d.CourseTitle, UserID: d.UserID, Name: d.Name, Email: d.Email,
		Topic: d.Topics[i], Quiz: []QuizAttempt{}, SCORM: []SCORecord{}, CMI5: []XAPIStatement{}, H5P: []XAPIStatement{}}
	if source := s.TopicSources[out.Topic.Kind]; source != nil {
		if err := source(ctx, t, userID, topicID, &out); err != nil {
			return TopicTrack{}, err
		}
	}
	return out, nil
}

// statement is what the gradebook reads of an xAPI statement.
type statement struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Verb      struct {
		ID      string            `json:"id"`
		Display map[string]string `json:"display"`
	} `json:"verb"`
	Object struct {
		ID         string `json:"id"`
		Definition struct {
			Name map[string]string `json:"name"`
		} `json:"definition"`
	} `json:"object"`
	Result *struct {
		Completion *bool  `json:"completion"`
		Success    *bool  `json:"success"`
		Duration   string `json:"duration"`
		Response   string `json:"response"`
		Score      *struct {
			Scaled, Raw, Min, Max *float64
		} `json:"score"`
	} `json:"result"`
}

// Statement reads an xAPI statement's JSON for the gradebook; stored is
// when it was stored. A body that is not a statement reads as one
// without anything but the time.
func Statement(body []byte, stored time.Time) XAPIStatement {
	var s statement
	_ = json.Unmarshal(body, &s)
	out := XAPIStatement{ID: s.ID, Verb: s.Verb.ID, VerbName: english(s.Verb.Display), Object: s.Object.ID,
		ObjectName: english(s.Object.Definition.Name), Stored: stored}
	if at, err := time.Parse(time.RFC3339Nano, s.Timestamp); err == nil {
		at = at.UTC()
		out.Timestamp = &at
	}
	if r := s.Result; r != nil {
		out.Result = &XAPIResult{Completion: r.Completion, Success: r.Success, Duration: r.Duration, Response: r.Response}
		if sc := r.Score; sc != nil {
			out.Result.ScoreScaled, out.Result.ScoreRaw, out.Result.ScoreMin, out.Result.ScoreMax = sc.Scaled, sc.Raw, sc.Min, sc.Max
		}
	}
	return out
}

// english is a language map's English text (en-US, en, any en-...), else
// the first of the others in order of their tags, so the choice is stable.
func english(m map[string]string) string {
	for _, tag := range []string{"en-US", "en", "en-GB"} {
		if v := m[tag]; v != "" {
			return v
		}
	}
	tags := make([]string, 0, len(m))
	for tag := range m {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	for _, tag := range tags {
		if m[tag] != "" {
			return m[tag]
		}
	}
	return ""
}
