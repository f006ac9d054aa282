package learning

import (
	"context"
	"fmt"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
	"github.com/lms-platform/lms/internal/topics"
)

// LearnerProgram is a course with its visible lessons and topics, as a learner
// takes it.
type LearnerProgram struct {
	ID              int64           `json:"id"`
	Title           string          `json:"title"`
	Summary         string          `json:"summary"`
	Description     string          `json:"description"`
	ImagePath       *string         `json:"image_path"`
	Language        string          `json:"language"`
	Level           string          `json:"level"`
	Status          string          `json:"status"`
	ActiveFrom      *time.Time      `json:"active_from"`
	ActiveTo        *time.Time      `json:"active_to"`
	HoursToComplete *int            `json:"hours_to_complete"`
	Public          bool            `json:"public"`
	Authors         []int64         `json:"authors"`
	Tags            []string        `json:"tags"`
	Lessons         []LearnerLesson `json:"lessons"`
	// Progress is the caller's summary; null for anonymous callers.
	Progress *ProgressSummary `json:"progress"`
}

// LearnerLesson is a visible lesson with its topics and child lessons.
type LearnerLesson struct {
	ID         int64      `json:"id"`
	ParentID   *int64     `json:"parent_id"`
	Title      string     `json:"title"`
	Summary    string     `json:"summary"`
	Duration   string     `json:"duration"`
	Order      int        `json:"order"`
	ActiveFrom *time.Time `json:"active_from"`
	ActiveTo   *time.Time `json:"active_to"`
	// Open is false outside the lesson's window (or a parent's): its
	// topics are listed without content.
	Open    bool            `json:"is_open"`
	Topics  []LearnerTopic  `json:"topics"`
	Lessons []LearnerLesson `json:"lessons"`
}

// LearnerTopic is a visible topic with its content.
type LearnerTopic struct {
	ID            int64  `json:"id"`
	LessonID      int64  `json:"lesson_id"`
	Title         string `json:"title"`
	Summary       string `json:"summary"`
	Order         int    `json:"order"`
	Preview       bool   `json:"preview"`
	CanSkip       bool   `json:"can_skip"`
	Duration      string `json:"duration"`
	TopicableType string `json:"topicable_type"`
	Kind          string `json:"kind"`
	// Topicable is the content as its kind shows it; null when the lesson
	// is not open or no kind is registered for the class.
	Topicable any `json:"topicable"`
	// Progress is the caller's progress in the topic; null for anonymous
	// callers.
	Progress *TopicState `json:"progress"`
}

// TopicState is what a program shows of a learner's progress in a topic;
// GET /api/courses/progress/{course_id} has the dates.
type TopicState struct {
	// A program shows null to anonymous callers: the schema says so, so
	// that clients tell no progress from a zero one.
	_       struct{} `nullable:"true"`
	Status  int      `json:"status" enum:"0,1,2" doc:"0 incomplete, 1 complete, 2 in progress."`
	Seconds int64    `json:"seconds" doc:"Time spent on the topic."`
}

// TopicProgress is a learner's progress in one topic.
type TopicProgress struct {
	TopicID    int64              `json:"topic_id"`
	LessonID   int64              `json:"lesson_id"`
	Status     int                `json:"status" enum:"0,1,2" doc:"0 incomplete, 1 complete, 2 in progress."`
	Seconds    int64              `json:"seconds" doc:"Time spent on the topic."`
	StartedAt  *time.Time         `json:"started_at"`
	FinishedAt *time.Time         `json:"finished_at"`
	Score      *topics.TopicScore `json:"score,omitempty" doc:"The learner's best score in the topic, points of max; absent when its kind measures none."`
}

// Program returns the program of a course for p (nil: anonymous). It runs
// the same number of queries whatever the size of the course: the
// program's version, with the progress rows for a signed-in caller; when
// the cached program is not current, the course and all its lessons and
// topics; and the access check; each in a fixed number of queries.
func (s *Service) Program(ctx context.Context, t *platform.Tenant, q sqldb.Querier, p *access.Principal, courseID int64) (LearnerProgram, error) {
	prog, _, progress, err := s.program(ctx, t, q, p, courseID)
	if err != nil {
		return LearnerProgram{}, err
	}
	if p != nil {
		prog.Lessons = withProgress(prog.Lessons, progress)
	}
	return prog, nil
}

// program returns the program with the shared lessons (no progress in
// them), the cached part it came from and the caller's progress by topic
// (nil for anonymous callers).
func (s *Service) program(ctx context.Context, t *platform.Tenant, q sqldb.Querier, p *access.Principal,
	courseID int64) (LearnerProgram, *staticProgram, map[int64]topicProgress, error) {
	now := s.now()
	var static *staticProgram
	var progress map[int64]topicProgress
	var cp *courseProgress
	var err error
	if p == nil {
		static, err = s.static(ctx, t, q, courseID, now)
	} else {
		// The learner's progress comes with the change counter, in one
		// query; it is shown only once access is checked below.
		var version int64
		if version, progress, cp, err = learnerState(ctx, q, p.UserID, courseID); err == nil {
			static, err = s.staticAt(ctx, t, q, courseID, version, now)
		}
	}
	if err != nil {
		return LearnerProgram{}, nil, nil, err
	}
	c := static.course
	if err := readable(ctx, t, q, now, p, c); err != nil {
		return LearnerProgram{}, nil, nil, err
	}
	out := LearnerProgram{ID: c.ID, Title: c.Title, Summary: c.Summary, Description: c.Description, ImagePath: c.ImagePath,
		Language: c.Language, Level: c.Level, Status: string(c.Status), ActiveFrom: c.ActiveFrom, ActiveTo: c.ActiveTo,
		HoursToComplete: c.HoursToComplete, Public: c.Public, Authors: c.Authors, Tags: c.Tags, Lessons: static.lessons}
	if p == nil {
		return out, static, nil, nil
	}
	sum := summarize(static.tree, progress, cp)
	out.Progress = &sum
	return out, static, progress, nil
}

func loadTree(ctx context.Context, q sqldb.Querier, courseID int64, now time.Time) (*tree, error) {
	lessons, err := courses.Lessons(ctx, q, courseID)
	if err != nil {
		return nil, err
	}
	all, err := topics.ForCourse(ctx, q, courseID)
	if err != nil {
		return nil, err
	}
	return newTree(lessons, all, now), nil
}

// renderLessons shows the visible lessons with their topics and content,
// without anyone's progress; off holds the classes of the kinds the tenant
// has switched off (content.Registry.Off).
func (s *Service) renderLessons(t *platform.Tenant, now time.Time, nodes []*lessonNode, off map[string]bool) ([]LearnerLesson, error) {
	out := make([]LearnerLesson, 0, len(nodes))
	for _, n := range nodes {
		pl := LearnerLesson{ID: n.ID, ParentID: n.ParentID, Title: n.Title, Summary: n.Summary, Duration: n.Duration,
			Order: n.Position, ActiveFrom: n.ActiveFrom, ActiveTo: n.ActiveTo, Open: n.open,
			Topics: make([]LearnerTopic, 0, len(n.topics))}
		for _, topic := range n.topics {
			pt, err := s.programTopic(t, now, topic, n.open, off)
			if err != nil {
				return nil, err
			}
			pl.Topics = append(pl.Topics, pt)
		}
		var err error
		if pl.Lessons, err = s.renderLessons(t, now, n.children, off); err != nil {
			return nil, err
		}
		out = append(out, pl)
	}
	return out, nil
}

// programTopic shows a topic, with its content when withContent.
func (s *Service) programTopic(t *platform.Tenant, now time.Time, topic *topics.Topic, withContent bool, off map[string]bool) (LearnerTopic, error) {
	pt := LearnerTopic{ID: topic.ID, LessonID: topic.LessonID, Title: topic.Title, Summary: topic.Summary,
		Order: topic.Position, Preview: topic.Preview, CanSkip: topic.CanSkip, Duration: topic.Duration,
		TopicableType: topic.TopicableType, Kind: "unknown"}
	if s.Kinds == nil {
		return pt, nil
	}
	kind, ok := s.Kinds.ByClass(topic.TopicableType)
	if !ok {
		return pt, nil
	}
	pt.Kind = kind.Name()
	if !withContent {
		return pt, nil
	}
	show := kind.View
	if lv, ok := kind.(content.LearnerViewer); ok {
		show = lv.LearnerView
	}
	env := s.contentEnv(t, now, topic.ID)
	env.Off = off[topic.TopicableType]
	view, err := show(env, topic.Content)
	if err != nil {
		return pt, fmt.Errorf("learning: show topic %d: %w", topic.ID, err)
	}
	pt.Topicable = view
	return pt, nil
}

// switchedOff returns the classes of the kinds tenant t has switched off.
func (s *Service) switchedOff(ctx context.Context, t *platform.Tenant) (map[string]bool, error) {
	if s.Kinds == nil {
		return nil, nil
	}
	return s.Kinds.Off(ctx, t)
}

func (s *Service) contentEnv(t *platform.Tenant, now time.Time, topicID int64) content.Env {
	env := content.Env{Tenant: t, TopicID: topicID, Now: now, FilePrefix: fmt.Sprintf("topics/%d/", topicID)}
	if s.FileURL != nil {
		env.FileURL = func(key string) string { return s.FileURL(t, key) }
	} else {
		env.FileURL = func(string) string { return "" }
	}
	return env
}

func topicStatus(topic *topics.Topic, tp topicProgress) TopicProgress {
	return TopicProgress{TopicID: topic.ID, LessonID: topic.LessonID, Status: tp.Status, Seconds: tp.Seconds,
		StartedAt: tp.StartedAt, FinishedAt: tp.FinishedAt, Score: tp.Score}
}

// Preview returns one preview topic of a published course with its
// content, to anyone. Other topics, and topics of hidden lessons, are not
// found.
func (s *Service) Preview(ctx context.Context, t *platform.Tenant, courseID, topicID int64) (LearnerTopic, error) {
	now := s.now()
	c, err := courses.ByID(ctx, t.DB, courseID)
	if err != nil {
		return LearnerTopic{}, err
	}
	topic, err := topics.ByID(ctx, t.DB, topicID)
	if err != nil {
		return LearnerTopic{}, err
	}
	if c.Status != courses.Published || topic.CourseID != c.ID || !topic.Preview {
		return LearnerTopic{}, errTopicMissing
	}
	tr, err := loadTree(ctx, t.DB, c.ID, now)
	if err != nil {
		return LearnerTopic{}, err
	}
	if _, ok := tr.topics[topic.ID]; !ok {
		return LearnerTopic{}, apperr.New(apperr.NotFound, "Topic not found.")
	}
	off, err := s.switchedOff(ctx, t)
	if err != nil {
		return LearnerTopic{}, err
	}
	return s.programTopic(t, now, &topic, true, off)
}
