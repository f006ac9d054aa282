package learning

import (
	"context"
	"strconv"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// Course states of a learner, as the paginated progress list filters them.
const (
	Planned  = "planned"
	Started  = "started"
	Finished = "finished"
)

// ProgressSummary is a learner's progress in one course.
type ProgressSummary struct {
	// A program's summary is null for anonymous callers: the schema says
	// so, so that clients tell no progress from a zero one. (Lists that
	// embed the summary are not affected.)
	_              struct{}   `nullable:"true"`
	Status         string     `json:"status" enum:"planned,started,finished"`
	TotalTopics    int        `json:"total_topics" doc:"Visible topics of the course."`
	FinishedTopics int        `json:"finished_topics" doc:"Visible topics the learner completed."`
	Percent        int        `json:"percent" doc:"finished_topics of total_topics, rounded down."`
	Seconds        int64      `json:"seconds" doc:"Time spent on the course's topics."`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
	Deadline       *time.Time `json:"deadline"`
}

func summarize(tr *tree, progress map[int64]topicProgress, cp *courseProgress) ProgressSummary {
	s := ProgressSummary{Status: Planned, TotalTopics: len(tr.order)}
	for _, topic := range tr.order {
		tp := progress[topic.ID]
		if tp.Status == Complete {
			s.FinishedTopics++
		}
		s.Seconds += tp.Seconds
	}
	if s.TotalTopics > 0 {
		s.Percent = s.FinishedTopics * 100 / s.TotalTopics
	}
	if cp != nil {
		s.StartedAt, s.FinishedAt, s.Deadline = cp.StartedAt, cp.FinishedAt, cp.Deadline
		s.Status = Started
		if cp.FinishedAt != nil {
			s.Status = Finished
		}
	}
	return s
}

// CourseProgress is a learner's progress in one course, topic by topic.
type CourseProgress struct {
	CourseID int64 `json:"course_id"`
	ProgressSummary
	Topics []TopicProgress `json:"topics" doc:"Every visible topic in program order."`
}

// CourseProgress returns the caller's progress in one course they may
// learn or have progress in.
func (s *Service) CourseProgress(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64) (CourseProgress, error) {
	c, err := courses.ByID(ctx, t.DB, courseID)
	if err != nil {
		return CourseProgress{}, err
	}
	cp, err := courseRow(ctx, t.DB, p.UserID, c.ID)
	if err != nil {
		return CourseProgress{}, err
	}
	if cp == nil {
		ok, err := courses.CanLearn(ctx, t, t.DB, s.now(), p, c)
		if err != nil {
			return CourseProgress{}, err
		}
		if !ok {
			return CourseProgress{}, errNoAccess
		}
	}
	tr, err := loadTree(ctx, t.DB, c.ID, s.now())
	if err != nil {
		return CourseProgress{}, err
	}
	return courseProgressOf(ctx, t.DB, p.UserID, c, tr, cp)
}

func courseProgressOf(ctx context.Context, q sqldb.Querier, userID int64, c courses.Course, tr *tree,
	cp *courseProgress) (CourseProgress, error) {
	progress, err := topicRows(ctx, q, userID, c.ID)
	if err != nil {
		return CourseProgress{}, err
	}
	out := CourseProgress{CourseID: c.ID, ProgressSummary: summarize(tr, progress, cp), Topics: make([]TopicProgress, 0, len(tr.order))}
	for _, topic := range tr.order {
		out.Topics = append(out.Topics, topicStatus(topic, progress[topic.ID]))
	}
	return out, nil
}

// ProgressWrite is one topic status a learner reports.
type ProgressWrite struct {
	TopicID int64 `json:"topic_id" minimum:"1"`
	Status  int   `json:"status" enum:"0,1,2" doc:"0 incomplete, 1 complete, 2 in progress."`
}

// Record writes the caller's statuses of topics of one course and
// answers the course's progress. It is idempotent: a status already held
// changes nothing and emits nothing, and a complete topic stays complete.
func (s *Service) Record(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64, writes []ProgressWrite) (CourseProgress, error) {
	now := s.now()
	c, err := courses.ByID(ctx, t.DB, courseID)
	if err != nil {
		return CourseProgress{}, err
	}
	if err := writable(ctx, t, t.DB, now, p, c); err != nil {
		return CourseProgress{}, err
	}
	tr, err := loadTree(ctx, t.DB, c.ID, now)
	if err != nil {
		return CourseProgress{}, err
	}
	fields := map[string][]string{}
	for i, w := range writes {
		key := "progress." + strconv.Itoa(i) + ".topic_id"
		if topic, ok := tr.topics[w.TopicID]; !ok {
			fields[key] = append(fields[key], "The topic is not part of this course.")
		} else if !tr.open(topic) {
			fields[key] = append(fields[key], msgClosed)
		} else if w.Status == Complete && s.completesItself(topic) {
			status := "progress." + strconv.Itoa(i) + ".status"
			fields[status] = append(fields[status], "This topic completes through its own activity, not a progress write.")
		}
	}
	if len(fields) > 0 {
		return CourseProgress{}, &apperr.Error{Kind: apperr.Invalid, Message: "The given data was invalid.", Fields: fields}
	}
	var out CourseProgress
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		cp, err := s.record(ctx, tx, now, p.UserID, c, tr, writes, nil)
		if err != nil {
			return err
		}
		out, err = courseProgressOf(ctx, tx, p.UserID, c, tr, cp)
		return err
	})
	return out, err
}

// completesItself tells whether the topic's kind keeps its completion to
// its own activity (see content.SelfCompleting).
func (s *Service) completesItself(topic *topics.Topic) bool {
	if s.Kinds == nil {
		return false
	}
	kind, ok := s.Kinds.ByClass(topic.TopicableType)
	if !ok {
		return false
	}
	sc, ok := kind.(content.SelfCompleting)
	return ok && sc.CompletesItself(topic.Content)
}

// CompleteTopic marks a topic complete for a learner with the events a
// learner's own write emits (TopicFinished, LessonFinished,
// CourseFinished, and CourseStarted first when needed). Package topics
// calls it when a learner submits a project; the caller has checked the
// learner's access. It fails with Forbidden after the learner's deadline
// or outside the window of the topic's lesson, and NotFound for a topic
// learners do not see.
func (s *Service) CompleteTopic(ctx context.Context, t *platform.Tenant, userID, topicID int64) error {
	return s.CompleteTopicScored(ctx, t, userID, topicID, nil)
}

// CompleteTopicScored is CompleteTopic for a kind that measured the
// learner's score (nil: none). The topic keeps the best score it was
// given, so a later, lower attempt does not lower the result an LTI
// platform received; a score that is not Valid is dropped and the
// completion still counts. TopicFinished carries the score; a better
// score for a topic already complete is stored and emits TopicScored, so
// the platform gets it too.
func (s *Service) CompleteTopicScored(ctx context.Context, t *platform.Tenant, userID, topicID int64, score *topics.TopicScore) error {
	now := s.now()
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return err
	}
	c, err := courses.ByID(ctx, t.DB, topic.CourseID)
	if err != nil {
		return err
	}
	tr, err := loadTree(ctx, t.DB, c.ID, now)
	if err != nil {
		return err
	}
	visible, ok := tr.topics[topic.ID]
	if !ok {
		return errTopicMissing
	}
	if !tr.open(visible) {
		return errClosed
	}
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		_, err := s.record(ctx, tx, now, userID, c, tr, []ProgressWrite{{TopicID: topicID, Status: Complete}}, score)
		return err
	})
}

// record applies writes inside tx and emits their events: CourseStarted
// when this starts the course, TopicFinished for each topic turning
// complete, LessonFinished for each lesson turning finished (children
// first), CourseFinished when the course turns finished, and TopicScored
// when score beats the one kept for a topic already complete. score, when
// not nil, is the learner's score in the topic of the single write (see
// CompleteTopicScored); it is kept under the lock startCourse takes, so
// two completions of one learner compare their scores one after the
// other. It returns the learner's course row.
func (s *Service) record(ctx context.Context, tx *sqldb.Tx, now time.Time, userID int64, c courses.Course, tr *tree,
	writes []ProgressWrite, score *topics.TopicScore) (*courseProgress, error) {
	started, err := startCourse(ctx, tx, now, userID, c)
	if err != nil {
		return nil, err
	}
	cp, err := courseRow(ctx, tx, userID, c.ID)
	if err != nil {
		return nil, err
	}
	if cp.missed(now) {
		return nil, errDeadline
	}
	if started {
		if err := emit(ctx, tx, now, events.CourseStarted, userID, map[string]any{"course_id": c.ID,
			"deadline": cp.Deadline}); err != nil {
			return nil, err
		}
	}
	var kept, wasComplete bool
	if score != nil {
		if kept, wasComplete, err = keepScore(ctx, tx, now, userID, c.ID, writes[0].TopicID, score); err != nil {
			return nil, err
		}
	}
	if kept && wasComplete {
		if err := emit(ctx, tx, now, events.TopicScored, userID, map[string]any{"course_id": c.ID,
			"lesson_id": tr.topics[writes[0].TopicID].LessonID, "topic_id": writes[0].TopicID, "score": score}); err != nil {
			return nil, err
		}
	}
	var completed []int64
	for _, w := range writes {
		done, err := setStatus(ctx, tx, now, userID, c.ID, w.TopicID, w.Status)
		if err != nil {
			return nil, err
		}
		if done {
			completed = append(completed, w.TopicID)
		}
	}
	if len(completed) == 0 {
		return cp, nil
	}
	after, err := statuses(ctx, tx, userID, c.ID)
	if err != nil {
		return nil, err
	}
	before := make(map[int64]int, len(after))
	for id, st := range after {
		before[id] = st
	}
	for _, id := range completed {
		before[id] = Incomplete
		payload := map[string]any{"course_id": c.ID, "lesson_id": tr.topics[id].LessonID, "topic_id": id}
		if kept {
			// A topic turning complete had no score yet, so the one
			// given is the one kept.
			payload["score"] = score
		}
		if err := emit(ctx, tx, now, events.TopicFinished, userID, payload); err != nil {
			return nil, err
		}
	}
	wasFinished := map[int64]bool{}
	for _, id := range tr.finishedLessons(before) {
		wasFinished[id] = true
	}
	for _, id := range tr.finishedLessons(after) {
		if wasFinished[id] {
			continue
		}
		if err := emit(ctx, tx, now, events.LessonFinished, userID, map[string]any{"course_id": c.ID,
			"lesson_id": id}); err != nil {
			return nil, err
		}
	}
	if tr.finished(after) {
		finished, err := finishCourse(ctx, tx, now, userID, c.ID)
		if err != nil {
			return nil, err
		}
		if finished {
			cp.FinishedAt = &now
			if err := emit(ctx, tx, now, events.CourseFinished, userID, map[string]any{"course_id": c.ID}); err != nil {
				return nil, err
			}
		}
	}
	return cp, nil
}

func emit(ctx context.Context, tx *sqldb.Tx, now time.Time, name string, userID int64, payload map[string]any) error {
	return events.Emit(ctx, tx, now, events.Event{Name: name, UserID: userID, Payload: payload})
}

// TopicPing is the state of a topic after a ping.
type TopicPing struct {
	TopicID int64 `json:"topic_id"`
	Status  int   `json:"status" enum:"0,1,2"`
	Seconds int64 `json:"seconds" doc:"Time spent on the topic."`
}

// Ping records that the caller is on a topic: it adds the caller's time
// since their previous ping (see ping), marks the topic in progress unless
// it is complete, and starts the course when needed.
func (s *Service) Ping(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) (TopicPing, error) {
	now := s.now()
	q := t.DB
	c, _, err := s.learnerTopic(ctx, t, q, now, p, topicID)
	if err != nil {
		return TopicPing{}, err
	}
	out := TopicPing{TopicID: topicID}
	if t.DB.Dialect == sqldb.Postgres {
		applied, status, seconds, err := pingBatched(ctx, t, now, p.UserID, c.ID, topicID, deadlineFor(c, now))
		if applied || err != nil {
			out.Status, out.Seconds = status, seconds
			return out, err
		}
	}
	cp, err := courseRow(ctx, q, p.UserID, c.ID)
	if err != nil {
		return TopicPing{}, err
	}
	if cp.missed(now) {
		return TopicPing{}, errDeadline
	}
	err = t.Tx(ctx, func(tx *sqldb.Tx) error {
		if cp == nil {
			if _, err := s.record(ctx, tx, now, p.UserID, c, nil, nil, nil); err != nil {
				return err
			}
		}
		out.Status, out.Seconds, err = ping(ctx, tx, now, p.UserID, c.ID, topicID)
		return err
	})
	return out, err
}

// CanRecord checks that p may record progress in a topic now: access to
// its course within the learner's dates, the topic shown to learners and
// its lesson open. Package quiz asks it before an attempt starts, so that
// an attempt is taken only where its completion would count.
func (s *Service) CanRecord(ctx context.Context, t *platform.Tenant, p *access.Principal, topicID int64) error {
	_, _, err := s.learnerTopic(ctx, t, t.DB, s.now(), p, topicID)
	return err
}

// RecordableTopic is CanRecord answering the topic too, as the program
// cache holds it, so that the kind asking need not read it again (a quiz
// start). Its Content is shared: it must not be changed.
func (s *Service) RecordableTopic(ctx context.Context, t *platform.Tenant, p *access.Principal,
	topicID int64) (topics.Topic, error) {
	_, topic, err := s.learnerTopic(ctx, t, t.DB, s.now(), p, topicID)
	if err != nil {
		return topics.Topic{}, err
	}
	return *topic, nil
}
