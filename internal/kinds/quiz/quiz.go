// Package quiz runs quiz attempts: a learner starts an attempt at a quiz
// topic (kind.go), saves answers one by one while its time
// runs, and ends it; the attempt is scored per question type (package
// gift), passes on the quiz's pass score, and completes the topic through
// the learning package. Admins and the course's editors list attempts and
// grade essays. It also serves the admin routes that edit a quiz's
// questions one by one.
package quiz

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/gift"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/kinds"
	"github.com/lms-platform/lms/internal/lock"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
	"github.com/lms-platform/lms/internal/versioned"
)

// TimeSetting is the setting holding an attempt's time limit in minutes.
const TimeSetting = "lms_gift_quiz.max_quiz_time"

// Service runs attempts.
type Service struct {
	Clock    clock.Clock
	Settings kinds.Settings
	// Topics rewrites a quiz's questions for the admin question routes.
	Topics kinds.Topics
	// Progress completes the topic when an attempt passes, and Gate says
	// whether a learner may take it now (both package learning).
	Progress topics.ScoredCompleter
	Gate     Gate
	// Locker orders the question edits of one quiz across replicas: each
	// rewrites the whole list, so two at once would lose one.
	Locker lock.Locker
}

var (
	errUnauthorized = apperr.New(apperr.Forbidden, "This action is unauthorized.")
	errNotQuiz      = apperr.New(apperr.Invalid, "This topic is not a quiz.")
	errEnded        = apperr.New(apperr.Conflict, "This attempt has ended.")
	errTimeOver     = apperr.New(apperr.Conflict, "The time of this attempt is over; it has ended.")
	errAnswered     = apperr.New(apperr.Conflict, "This question is answered and reviewed; its answer cannot be changed.")
)

func (s *Service) now() time.Time { return s.Clock.Now().UTC().Truncate(time.Microsecond) }

// quizTopic loads a quiz topic.
func quizTopic(ctx context.Context, t *platform.Tenant, topicID int64) (topics.Topic, error) {
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return topic, err
	}
	if topic.TopicableType != Class {
		return topic, errNotQuiz
	}
	return topic, nil
}

// quizCourse loads a quiz topic and its course.
func quizCourse(ctx context.Context, t *platform.Tenant, topicID int64) (topics.Topic, courses.Course, error) {
	topic, err := quizTopic(ctx, t, topicID)
	if err != nil {
		return topic, courses.Course{}, err
	}
	course, err := courses.ByID(ctx, t.DB, topic.CourseID)
	return topic, course, err
}

// A class starts its exam at once, and parsing the quiz's GIFT questions
// was a large part of each start. So each tenant keeps the parsed values
// of its quizzes, each used while the topic's stored value is byte for
// byte the one parsed. A kept value is shared: nothing may change it.
const (
	parsedEntries = 256
	parsedTTL     = 10 * time.Minute
)

type parsedQuiz struct {
	raw   string
	value Value
}

type parsedKey struct{}

// parsed is the topic's value, parsed, from the tenant's memo when the
// stored value has not changed.
func parsed(t *platform.Tenant, topic topics.Topic, now time.Time) (Value, error) {
	memo := t.Local(parsedKey{}, func() any {
		return versioned.New[int64, parsedQuiz](parsedEntries)
	}).(*versioned.Cache[int64, parsedQuiz])
	if p, ok := memo.Get(topic.ID, 0, now); ok && p.raw == string(topic.Content) {
		return p.value, nil
	}
	v, err := Parse(topic.Content)
	if err != nil {
		return v, err
	}
	memo.Put(topic.ID, 0, now.Add(parsedTTL), now, parsedQuiz{raw: string(topic.Content), value: v})
	return v, nil
}

// Gate says whether a learner may record progress in a topic now: access
// to its course, the topic shown to learners, its lesson open.
type Gate = kinds.Gate

// takeable returns the quiz topic p may take: one where a learner may
// record progress, as the gate's program cache holds it; the course's
// editors may always try it. The topic and its course are read only when
// the gate refuses, as most takers are learners.
func (s *Service) takeable(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) (topics.Topic, error) {
	topic, err := s.Gate.RecordableTopic(ctx, t, p, topicID)
	if err == nil {
		if topic.TopicableType != Class {
			return topic, errNotQuiz
		}
		return topic, nil
	}
	topic, course, cerr := quizCourse(ctx, t, topicID)
	if cerr != nil {
		return topic, cerr
	}
	if courses.CanEdit(p, course) {
		return topic, nil
	}
	return topic, err
}

// Start begins an attempt, or returns the learner's attempt still under
// way (created is then false).
func (s *Service) Start(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) (AttemptView, bool, error) {
	now := s.now()
	topic, err := s.takeable(ctx, t, p, topicID)
	if err != nil {
		return AttemptView{}, false, err
	}
	v, err := parsed(t, topic, now)
	if err != nil {
		return AttemptView{}, false, err
	}
	if len(v.Questions) == 0 {
		return AttemptView{}, false, apperr.New(apperr.Invalid, "This quiz has no questions yet.")
	}
	open, used, err := s.settle(ctx, t, topicID, p.UserID, now)
	if err != nil {
		return AttemptView{}, false, err
	}
	if open != nil {
		view, err := s.view(ctx, t, *open, now, false)
		return view, false, err
	}
	minutes, err := s.Settings.Int(ctx, t, TimeSetting)
	if err != nil {
		return AttemptView{}, false, err
	}
	if v.MaxAttempts > 0 && used >= v.MaxAttempts {
		return AttemptView{}, false, apperr.New(apperr.Forbidden, fmt.Sprintf("You have used all %d attempts at this quiz.", v.MaxAttempts))
	}
	a := Attempt{TopicID: topicID, UserID: p.UserID, Number: used + 1, Questions: v.Questions, StartedAt: now,
		EndsAt: now.Add(time.Duration(minutes) * time.Minute), MaxScore: v.MaxTotal(), MinPassScore: v.MinPassScore,
		Review: v.ReviewMode()}
	// A rush of starts queues for SQLite's writer in Go instead of
	// sleeping in its busy handler, and costs PostgreSQL one round trip.
	err = t.DB.Write(ctx, func(q sqldb.Querier) error { return insertAttempt(ctx, q, &a) })
	if err != nil {
		if sqldb.IsUniqueViolation(err) {
			// Two starts at once: the other one made the attempt.
			return s.Start(ctx, t, p, topicID)
		}
		return AttemptView{}, false, fmt.Errorf("quiz: start attempt: %w", err)
	}
	keepOpen(t, a, now)
	// A new attempt has no answers to load.
	return viewOf(a, nil, now, false), true, nil
}

// settle ends the learner's attempts at the topic whose time is over and
// returns the one still under way, if any, and the number of attempts.
func (s *Service) settle(ctx context.Context, t *platform.Tenant, topicID, userID int64, now time.Time) (*Attempt, int, error) {
	all, err := learnerAttempts(ctx, t, topicID, userID)
	if err != nil {
		return nil, 0, err
	}
	var current *Attempt
	for _, a := range all {
		switch {
		case a.EndedAt != nil:
		case !now.Before(a.EndsAt):
			if _, err := s.finish(ctx, t, a, now); err != nil {
				return nil, 0, err
			}
		default:
			current = &a
		}
	}
	return current, len(all), nil
}

// own loads an attempt of p's, ending it first when its time is over.
func (s *Service) own(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, now time.Time) (Attempt, error) {
	a, err := attemptByID(ctx, t.DB, id)
	if err != nil {
		return a, err
	}
	if a.UserID != p.UserID {
		// Another learner's attempt is not there for this one.
		return Attempt{}, errAttemptMissing
	}
	if a.EndedAt == nil && !now.Before(a.EndsAt) {
		return s.finish(ctx, t, a, now)
	}
	return a, nil
}

// Get shows one of p's attempts.
func (s *Service) Get(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (AttemptView, error) {
	now := s.now()
	a, err := s.own(ctx, t, p, id, now)
	if err != nil {
		return AttemptView{}, err
	}
	return s.view(ctx, t, a, now, false)
}

// Mine lists p's attempts, of one topic when topicID is not 0, newest
// first, without their questions.
func (s *Service) Mine(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, offset, limit int) ([]AttemptView, int64, error) {
	now := s.now()
	if topicID != 0 {
		if _, _, err := s.settle(ctx, t, topicID, p.UserID, now); err != nil {
			return nil, 0, err
		}
	}
	list, total, err := listAttempts(ctx, t.DB, topicID, p.UserID, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	out := make([]AttemptView, 0, len(list))
	for _, a := range list {
		out = append(out, summary(a, now))
	}
	return out, total, nil
}

// SaveAnswer saves p's answer to one question of an open attempt. The
// answer is saved as given; unless the attempt's review setting is
// after_answer (the answer is then final and the reply holds its review),
// nothing in the reply tells whether it is right.
func (s *Service) SaveAnswer(ctx context.Context, t *platform.Tenant, p *access.Principal, id, questionID int64, r gift.Response) (SavedAnswer, error) {
	now := s.now()
	a, kept := openAttempts(t).Get(id, 0, now)
	if !kept || a.UserID != p.UserID {
		var err error
		if a, err = s.open(ctx, t, p, id, now); err != nil {
			return SavedAnswer{}, err
		}
		keepOpen(t, a, now)
	}
	q, ok := question(a, questionID)
	if !ok {
		return SavedAnswer{}, apperr.Field("question_id", "The question_id must name a question of this attempt.")
	}
	if err := q.Q.Check(r); err != nil {
		var shape *gift.ShapeError
		if errors.As(err, &shape) {
			return SavedAnswer{}, apperr.Field("answer."+shape.Want,
				fmt.Sprintf("This question (%s) takes its answer in answer.%s.", shape.Type, shape.Want))
		}
		return SavedAnswer{}, apperr.Field("answer", "The answer does not fit the question: "+err.Error()+".")
	}
	ans := Answer{QuestionID: questionID, Response: r, UpdatedAt: now}
	if f, manual := gift.Grade(q.Q, r); !manual {
		ans.Fraction = &f
	}
	final := a.Review == ReviewAfterAnswer
	var saved bool
	err := t.DB.Write(ctx, func(q sqldb.Querier) error {
		var err error
		saved, err = saveAnswer(ctx, q, a.ID, ans, now, final)
		return err
	})
	if err != nil {
		return SavedAnswer{}, err
	}
	if !saved {
		return SavedAnswer{}, s.refused(ctx, t, p, a.ID, questionID, now, final)
	}
	out := SavedAnswer{QuestionID: questionID, Answer: r, SavedAt: now}
	if final {
		out.Review = reviewOf(q, ans, true)
	}
	return out, nil
}

// open loads p's attempt id for a save, refused unless it is open.
func (s *Service) open(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, now time.Time) (Attempt, error) {
	a, err := s.own(ctx, t, p, id, now)
	if err != nil {
		return a, err
	}
	if a.EndedAt != nil {
		forgetOpen(t, id, now)
		if a.EndedAt.Equal(a.EndsAt) {
			return a, errTimeOver
		}
		return a, errEnded
	}
	return a, nil
}

// refused says why the write of an answer saved nothing: the attempt
// ended (here, elsewhere, or its time ran out) or, when answers are final,
// the question already has one.
func (s *Service) refused(ctx context.Context, t *platform.Tenant, p *access.Principal, id, questionID int64, now time.Time, final bool) error {
	if _, err := s.open(ctx, t, p, id, now); err != nil {
		return err
	}
	if final {
		answers, err := answersOf(ctx, t.DB, id)
		if err != nil {
			return err
		}
		if _, answered := answers[questionID]; answered {
			return errAnswered
		}
	}
	// The write found the attempt ended.
	return errEnded
}

func question(a Attempt, id int64) (Question, bool) {
	for _, q := range a.Questions {
		if q.ID == id && q.Q.Scored() {
			return q, true
		}
	}
	return Question{}, false
}

// End ends p's attempt and shows its result and review.
func (s *Service) End(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (AttemptView, error) {
	now := s.now()
	a, err := s.own(ctx, t, p, id, now)
	if err != nil {
		return AttemptView{}, err
	}
	if a.EndedAt == nil {
		if a, err = s.finish(ctx, t, a, now); err != nil {
			return AttemptView{}, err
		}
	}
	return s.view(ctx, t, a, now, false)
}

// result computes an attempt's score, pending grades and pass from its
// answers.
func result(a *Attempt, answers map[int64]Answer) {
	a.Score, a.Pending, a.Passed = 0, false, nil
	for _, q := range a.Questions {
		ans, ok := answers[q.ID]
		if !ok || !q.Q.Scored() {
			continue
		}
		if ans.Fraction == nil {
			a.Pending = true
			continue
		}
		a.Score += *ans.Fraction * q.Score
	}
	if a.MinPassScore != nil && !a.Pending {
		passed := a.Score >= *a.MinPassScore
		a.Passed = &passed
	}
}

// CloseJob ends the attempts whose time ran out and that nobody has looked
// at since (a learner who closed the browser): each ends at its limit with
// its saved answers, and completes its topic when it passed. A read of an
// attempt ends it the same way earlier.
const CloseJob = "quiz.close-expired"

// closeBatch bounds one pass of the job; it goes on until none is left.
const closeBatch = 500

// CloseExpired is CloseJob's run for one tenant.
func (s *Service) CloseExpired(ctx context.Context, t *platform.Tenant, now time.Time) error {
	now = now.UTC().Truncate(time.Microsecond)
	for {
		expired, err := expiredAttempts(ctx, t.DB, now, closeBatch)
		if err != nil {
			return err
		}
		for _, a := range expired {
			if _, err := s.finish(ctx, t, a, now); err != nil {
				return err
			}
		}
		if len(expired) < closeBatch {
			return nil
		}
	}
}

// Jobs are the quiz's scheduled jobs. Hourly, with the other hourly jobs,
// so it opens no tenant that they do not open anyway.
func (s *Service) Jobs() []jobs.Job {
	return []jobs.Job{{Name: CloseJob, Schedule: jobs.MustCron("@hourly"), Run: s.CloseExpired}}
}

// finish ends an attempt at now, or at its time limit when that came
// first, and completes the topic when the attempt passed (or ended, for
// a quiz without a pass score).
func (s *Service) finish(ctx context.Context, t *platform.Tenant, a Attempt, now time.Time) (Attempt, error) {
	answers, err := answersOf(ctx, t.DB, a.ID)
	if err != nil {
		return a, err
	}
	end := now
	if a.EndsAt.Before(end) {
		end = a.EndsAt
	}
	a.EndedAt = &end
	result(&a, answers)
	closed, err := closeAttempt(ctx, t.DB, a)
	if err != nil {
		return a, err
	}
	forgetOpen(t, a.ID, now)
	if !closed {
		// Another call ended it, and completed the topic if due.
		return attemptByID(ctx, t.DB, a.ID)
	}
	return a, s.complete(ctx, t, a)
}

// complete completes the topic for an attempt that earns it, with the
// attempt's score (the topic keeps the best of its attempts).
func (s *Service) complete(ctx context.Context, t *platform.Tenant, a Attempt) error {
	done := a.Passed != nil && *a.Passed || a.MinPassScore == nil && !a.Pending
	if !done || s.Progress == nil {
		return nil
	}
	err := s.Progress.CompleteTopicScored(ctx, t, a.UserID, a.TopicID, &topics.TopicScore{Raw: a.Score, Max: a.MaxScore})
	if apperr.Is(err, apperr.Forbidden) || apperr.Is(err, apperr.NotFound) {
		// Past the learner's deadline, outside the lesson's window, or an
		// editor trying the quiz: the attempt counts, progress does not
		// move.
		return nil
	}
	return err
}

// Attempts lists the attempts at a quiz topic, newest first, for those
// who may read its course in the admin API.
func (s *Service) Attempts(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64, offset, limit int) ([]AttemptView, int64, error) {
	_, course, err := quizCourse(ctx, t, topicID)
	if err != nil {
		return nil, 0, err
	}
	if !courses.CanRead(p, course) && !courses.CanEdit(p, course) {
		return nil, 0, errUnauthorized
	}
	list, total, err := listAttempts(ctx, t.DB, topicID, 0, offset, limit)
	if err != nil {
		return nil, 0, err
	}
	now := s.now()
	out := make([]AttemptView, 0, len(list))
	for _, a := range list {
		out = append(out, summary(a, now))
	}
	return out, total, nil
}

// QuestionReview shows any attempt in full, with its answers and their scores,
// for those who may read its course in the admin API.
func (s *Service) Review(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (AttemptView, error) {
	a, err := attemptByID(ctx, t.DB, id)
	if err != nil {
		return AttemptView{}, err
	}
	if err := s.canGrade(ctx, t, p, a, false); err != nil {
		return AttemptView{}, err
	}
	return s.view(ctx, t, a, s.now(), true)
}

func (s *Service) canGrade(ctx context.Context, t *platform.Tenant, p *access.Principal, a Attempt, write bool) error {
	_, course, err := quizCourse(ctx, t, a.TopicID)
	if err != nil {
		return err
	}
	if courses.CanEdit(p, course) || !write && courses.CanRead(p, course) {
		return nil
	}
	return errUnauthorized
}

// Grade sets the score of an essay answer of an ended attempt; the
// attempt's score and pass, and the topic's progress, follow.
func (s *Service) Grade(ctx context.Context, t *platform.Tenant, p *access.Principal, id, questionID int64, score float64) (AttemptView, error) {
	now := s.now()
	a, err := attemptByID(ctx, t.DB, id)
	if err != nil {
		return AttemptView{}, err
	}
	if err := s.canGrade(ctx, t, p, a, true); err != nil {
		return AttemptView{}, err
	}
	if a.EndedAt == nil {
		if !now.Before(a.EndsAt) {
			if a, err = s.finish(ctx, t, a, now); err != nil {
				return AttemptView{}, err
			}
		} else {
			return AttemptView{}, apperr.New(apperr.Conflict, "The attempt is under way; grade it once it has ended.")
		}
	}
	q, ok := question(a, questionID)
	if !ok || q.Q.Type != gift.Essay {
		return AttemptView{}, apperr.Field("question_id", "The question_id must name an essay question of this attempt.")
	}
	if score < 0 || score > q.Score {
		return AttemptView{}, apperr.Field("score", fmt.Sprintf("The score must be from 0 to %g.", q.Score))
	}
	fraction := 0.0
	if q.Score > 0 {
		fraction = score / q.Score
	}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		found, err := gradeAnswer(ctx, tx, a.ID, questionID, fraction, p.UserID, now)
		if err != nil {
			return err
		}
		if !found {
			return apperr.Field("question_id", "The learner did not answer this question.")
		}
		answers, err := answersOf(ctx, tx, a.ID)
		if err != nil {
			return err
		}
		result(&a, answers)
		return updateResult(ctx, tx, a)
	})
	if err != nil {
		return AttemptView{}, err
	}
	// An attempt that had completed the topic completes it again: a
	// higher grade may raise the score the topic keeps.
	if err := s.complete(ctx, t, a); err != nil {
		return AttemptView{}, err
	}
	return s.view(ctx, t, a, now, true)
}
