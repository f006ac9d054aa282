package reports

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/learning"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

// GradebookLearner is one learner's progress in a course, as the gradebook lists it.
type GradebookLearner struct {
	GradebookLearnerSummary
	// Topics is filled only when asked for (with_topics).
	Topics []GradebookCell `json:"topics,omitempty" doc:"With with_topics=true: the learner's progress in every visible topic, in program order (the topics of GET .../progress/summary)."`
}

// GradebookLearnerSummary is a learner's progress in the course as a whole.
type GradebookLearnerSummary struct {
	UserID         int64      `json:"user_id"`
	Name           string     `json:"name"`
	Email          string     `json:"email"`
	Status         string     `json:"status" enum:"planned,started,finished" doc:"planned: not started yet; started; finished: every visible topic complete."`
	Percent        int        `json:"percent" doc:"finished_topics of total_topics, rounded down."`
	FinishedTopics int        `json:"finished_topics"`
	TotalTopics    int        `json:"total_topics" doc:"Visible topics of the course."`
	Score          *float64   `json:"score" doc:"Points of the scored topics as a percent of their maximum, to one decimal; null when no topic keeps a score."`
	ScoreRaw       *float64   `json:"score_raw" doc:"Points over the scored topics; null when none."`
	ScoreMax       *float64   `json:"score_max" doc:"Maximum points of the scored topics; null when none."`
	Seconds        int64      `json:"seconds" doc:"Time spent on the course's visible topics."`
	StartedAt      *time.Time `json:"started_at"`
	FinishedAt     *time.Time `json:"finished_at"`
	Deadline       *time.Time `json:"deadline"`
	LastActivityAt *time.Time `json:"last_activity_at" doc:"The latest change of the learner's progress in a visible topic."`
}

// GradebookCell is a learner's progress in one topic, as a gradebook row shows it.
type GradebookCell struct {
	TopicID        int64              `json:"topic_id"`
	Status         int                `json:"status" enum:"0,1,2" doc:"0 incomplete, 1 complete, 2 in progress."`
	Seconds        int64              `json:"seconds"`
	Score          *topics.TopicScore `json:"score,omitempty" doc:"The best score, points of max; absent when none."`
	LastActivityAt *time.Time         `json:"last_activity_at"`
}

// Filter selects and orders the learners of a course.
type Filter struct {
	GroupID    int64
	Status     string
	Search     string
	OrderBy    string
	Desc       bool
	WithTopics bool
}

// learners is the gradebook of a course for p, filtered and ordered, with
// the program's topics.
func (s *Service) learners(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64,
	f Filter) (courses.Course, learning.Gradebook, []GradebookLearner, error) {
	c, err := course(ctx, t, p, courseID)
	if err != nil {
		return c, learning.Gradebook{}, nil, err
	}
	if err := checkGroup(ctx, t, p, c.ID, f.GroupID); err != nil {
		return c, learning.Gradebook{}, nil, err
	}
	gb, err := s.Progress.Gradebook(ctx, t, c.ID, nil)
	if err != nil {
		return c, gb, nil, err
	}
	ids, err := learnerIDs(ctx, t, c.ID, s.now(), gb, f.GroupID)
	if err != nil {
		return c, gb, nil, err
	}
	refs, _, err := accounts.FindRefs(ctx, t.DB, accounts.RefFilter{IDs: ids, Search: f.Search, SearchEmail: true})
	if err != nil {
		return c, gb, nil, err
	}
	out := make([]GradebookLearner, 0, len(refs))
	for _, ref := range refs {
		l := learnerOf(ref, gb.Rows[ref.ID], len(gb.Topics))
		if f.Status == "" || l.Status == f.Status {
			out = append(out, GradebookLearner{GradebookLearnerSummary: l})
		}
	}
	sortLearners(out, f.OrderBy, f.Desc)
	return c, gb, out, nil
}

// learnerIDs are the learners of a course: those assigned to it now and
// those with progress in it (whose access may have ended), within the
// group and its subgroups when group is not 0.
func learnerIDs(ctx context.Context, t *platform.Tenant, courseID int64, now time.Time, gb learning.Gradebook,
	group int64) ([]int64, error) {
	ids, err := courses.Learners(ctx, t.DB, courseID, now)
	if err != nil {
		return nil, err
	}
	for id := range gb.Rows {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if group == 0 {
		return ids, nil
	}
	members, err := accounts.MembersWithin(ctx, t.DB, []int64{group})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(ids, func(id int64) bool {
		_, found := slices.BinarySearch(members, id)
		return !found
	}), nil
}

// checkGroup refuses a group filter that would tell a caller who may not
// list groups (a tutor) who belongs to a group they have no business
// with: such a caller filters by the groups assigned to the course and
// their subgroups only, whose members hold access through them. Those
// who list groups (admins) filter by any.
func checkGroup(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID, group int64) error {
	if group == 0 || p.Has(access.GroupList) {
		return nil
	}
	assigned, err := courses.AssignedGroups(ctx, t.DB, courseID)
	if err != nil {
		return err
	}
	line, err := accounts.GroupAndAncestors(ctx, t.DB, group)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(line, func(id int64) bool { return slices.Contains(assigned, id) }) {
		return nil
	}
	return apperr.Field("group_id", "The group_id must name a group assigned to this course, or a subgroup of one.")
}

func learnerOf(ref accounts.Ref, r *learning.GradebookRow, total int) GradebookLearnerSummary {
	l := GradebookLearnerSummary{UserID: ref.ID, Name: ref.Name(), Email: ref.Email, Status: learning.Planned, TotalTopics: total}
	if r == nil {
		return l
	}
	l.Status, l.Percent, l.FinishedTopics, l.Seconds = r.Status, r.Percent, r.FinishedTopics, r.Seconds
	l.StartedAt, l.FinishedAt, l.Deadline, l.LastActivityAt = r.StartedAt, r.FinishedAt, r.Deadline, r.LastActivity
	if r.ScoreMax > 0 {
		raw, outOf := r.ScoreRaw, r.ScoreMax
		pct := math.Round(raw/outOf*1000) / 10
		l.ScoreRaw, l.ScoreMax, l.Score = &raw, &outOf, &pct
	}
	return l
}

var statusOrder = map[string]int{learning.Planned: 0, learning.Started: 1, learning.Finished: 2}

// sortLearners orders by the key, then by name and id so that pages are
// stable; a missing score or time sorts before any.
func sortLearners(ls []GradebookLearner, by string, desc bool) {
	key := func(a, b GradebookLearner) int {
		switch by {
		case "email":
			return strings.Compare(strings.ToLower(a.Email), strings.ToLower(b.Email))
		case "user_id":
			return cmp.Compare(a.UserID, b.UserID)
		case "status":
			return cmp.Compare(statusOrder[a.Status], statusOrder[b.Status])
		case "percent":
			return cmp.Compare(a.Percent, b.Percent)
		case "score":
			return comparePtr(a.Score, b.Score, cmp.Compare[float64])
		case "seconds":
			return cmp.Compare(a.Seconds, b.Seconds)
		case "started_at":
			return comparePtr(a.StartedAt, b.StartedAt, time.Time.Compare)
		case "finished_at":
			return comparePtr(a.FinishedAt, b.FinishedAt, time.Time.Compare)
		case "last_activity":
			return comparePtr(a.LastActivityAt, b.LastActivityAt, time.Time.Compare)
		}
		return 0
	}
	slices.SortStableFunc(ls, func(a, b GradebookLearner) int {
		c := key(a, b)
		if c == 0 {
			c = cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), cmp.Compare(a.UserID, b.UserID))
		}
		if desc {
			return -c
		}
		return c
	})
}

func comparePtr[T any](a, b *T, compare func(T, T) int) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	return compare(*a, *b)
}

// List answers one page of a course's learners, with their topics when
// f.WithTopics; total counts every learner f selects.
func (s *Service) List(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64, f Filter,
	offset, limit int) ([]GradebookLearner, int64, error) {
	c, gb, all, err := s.learners(ctx, t, p, courseID, f)
	if err != nil {
		return nil, 0, err
	}
	total := int64(len(all))
	page := all[min(offset, len(all)):min(offset+limit, len(all))]
	if f.WithTopics {
		if err := s.withCells(ctx, t, c.ID, gb, page); err != nil {
			return nil, 0, err
		}
	}
	return page, total, nil
}

// Export answers every learner f selects with their topics, and the
// topics.
func (s *Service) Export(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64, f Filter) ([]GradebookTopic, []GradebookLearner, error) {
	c, gb, all, err := s.learners(ctx, t, p, courseID, f)
	if err != nil {
		return nil, nil, err
	}
	if err := s.withCells(ctx, t, c.ID, gb, all); err != nil {
		return nil, nil, err
	}
	return topicsOf(gb), all, nil
}

// withCells fills in the topics of each learner of ls, in one read.
func (s *Service) withCells(ctx context.Context, t *platform.Tenant, courseID int64, gb learning.Gradebook, ls []GradebookLearner) error {
	ids := make([]int64, len(ls))
	for i, l := range ls {
		ids[i] = l.UserID
	}
	cells, err := s.Progress.GradebookCells(ctx, t, courseID, ids)
	if err != nil {
		return err
	}
	for i := range ls {
		ls[i].Topics = make([]GradebookCell, len(gb.Topics))
		for j, topic := range gb.Topics {
			c := cells[ls[i].UserID][topic.ID]
			ls[i].Topics[j] = GradebookCell{TopicID: topic.ID, Status: c.Status, Seconds: c.Seconds, Score: c.Score,
				LastActivityAt: c.LastActivity}
		}
	}
	return nil
}

// GradebookTopic is a visible topic of a course, in program order.
type GradebookTopic struct {
	ID          int64  `json:"id"`
	LessonID    int64  `json:"lesson_id"`
	LessonTitle string `json:"lesson_title"`
	Title       string `json:"title"`
	Kind        string `json:"kind" doc:"The topic's kind (scorm, quiz, ...), unknown when none is registered for it."`
}

// CompletionDay counts the learners who finished on one day (UTC).
type CompletionDay struct {
	Date     string `json:"date" doc:"A day, YYYY-MM-DD (UTC)."`
	Finished int    `json:"finished" doc:"Learners who finished the course that day."`
	Total    int    `json:"total" doc:"Learners who had finished it by the end of that day."`
}

// GradebookSummary is a course's gradebook in figures.
type GradebookSummary struct {
	CourseID       int64            `json:"course_id"`
	Title          string           `json:"title"`
	Learners       int              `json:"learners" doc:"Learners selected (group_id): assigned now, or with progress."`
	Planned        int              `json:"planned"`
	Started        int              `json:"started"`
	Finished       int              `json:"finished"`
	AveragePercent int              `json:"average_percent" doc:"Mean percent of the learners, rounded down; 0 without learners."`
	Topics         []GradebookTopic `json:"topics" doc:"Visible topics in program order: the columns of the gradebook."`
	CompletionDay  []CompletionDay  `json:"completions" doc:"Days on which learners finished the course, in order, with the running total: the completion chart."`
}

// GradebookSummary answers the figures of a course's gradebook.
func (s *Service) Summary(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64, f Filter) (GradebookSummary, error) {
	c, gb, all, err := s.learners(ctx, t, p, courseID, f)
	if err != nil {
		return GradebookSummary{}, err
	}
	out := GradebookSummary{CourseID: c.ID, Title: c.Title, Learners: len(all), Topics: topicsOf(gb), CompletionDay: []CompletionDay{}}
	sum := 0
	var finished []time.Time
	for _, l := range all {
		sum += l.Percent
		switch l.Status {
		case learning.Planned:
			out.Planned++
		case learning.Started:
			out.Started++
		default:
			out.Finished++
			if l.FinishedAt != nil {
				finished = append(finished, *l.FinishedAt)
			}
		}
	}
	if len(all) > 0 {
		out.AveragePercent = sum / len(all)
	}
	slices.SortFunc(finished, time.Time.Compare)
	for i, at := range finished {
		day := at.UTC().Format(time.DateOnly)
		if n := len(out.CompletionDay); n > 0 && out.CompletionDay[n-1].Date == day {
			out.CompletionDay[n-1].Finished++
			out.CompletionDay[n-1].Total = i + 1
			continue
		}
		out.CompletionDay = append(out.CompletionDay, CompletionDay{Date: day, Finished: 1, Total: i + 1})
	}
	return out, nil
}

func topicsOf(gb learning.Gradebook) []GradebookTopic {
	out := make([]GradebookTopic, len(gb.Topics))
	for i, topic := range gb.Topics {
		out[i] = GradebookTopic{ID: topic.ID, LessonID: topic.LessonID, LessonTitle: topic.LessonTitle, Title: topic.Title, Kind: topic.Kind}
	}
	return out
}

// GradebookTopicDetail is one learner's progress in one topic, with the tracks its
// kind kept.
type GradebookTopicDetail struct {
	GradebookTopic
	Status         int                `json:"status" enum:"0,1,2" doc:"0 incomplete, 1 complete, 2 in progress."`
	Seconds        int64              `json:"seconds"`
	Score          *topics.TopicScore `json:"score,omitempty" doc:"The best score, points of max; absent when none."`
	StartedAt      *time.Time         `json:"started_at"`
	FinishedAt     *time.Time         `json:"finished_at"`
	LastActivityAt *time.Time         `json:"last_activity_at"`
	LearnerTracks  LearnerTracks      `json:"tracks"`
}

// GradebookDetail is one learner's progress in a course, topic by topic.
type GradebookDetail struct {
	CourseID    int64  `json:"course_id"`
	CourseTitle string `json:"course_title"`
	GradebookLearnerSummary
	Topics []GradebookTopicDetail `json:"topics" doc:"Every visible topic in program order."`
}

var errNotLearner = apperr.New(apperr.NotFound, "The user is not a learner of this course.")

// GradebookDetail answers one learner's progress in a course with their tracks.
func (s *Service) Detail(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID, userID int64) (GradebookDetail, error) {
	c, err := course(ctx, t, p, courseID)
	if err != nil {
		return GradebookDetail{}, err
	}
	gb, err := s.Progress.Gradebook(ctx, t, c.ID, []int64{userID})
	if err != nil {
		return GradebookDetail{}, err
	}
	if gb.Rows[userID] == nil {
		ok, err := courses.Assigned(ctx, t.DB, s.now(), userID, c.ID)
		if err != nil {
			return GradebookDetail{}, err
		}
		if !ok {
			return GradebookDetail{}, errNotLearner
		}
	}
	refs, err := accounts.Refs(ctx, t.DB, []int64{userID})
	if err != nil {
		return GradebookDetail{}, err
	}
	ref, ok := refs[userID]
	if !ok {
		return GradebookDetail{}, errNotLearner
	}
	out := GradebookDetail{CourseID: c.ID, CourseTitle: c.Title, GradebookLearnerSummary: learnerOf(ref, gb.Rows[userID], len(gb.Topics)),
		Topics: make([]GradebookTopicDetail, len(gb.Topics))}
	cells, err := s.Progress.GradebookCells(ctx, t, c.ID, []int64{userID})
	if err != nil {
		return GradebookDetail{}, err
	}
	tracks, err := s.tracks(ctx, t, userID, gb)
	if err != nil {
		return GradebookDetail{}, err
	}
	for i, topic := range topicsOf(gb) {
		cell := cells[userID][topic.ID]
		out.Topics[i] = GradebookTopicDetail{GradebookTopic: topic, Status: cell.Status, Seconds: cell.Seconds, Score: cell.Score,
			StartedAt: cell.StartedAt, FinishedAt: cell.FinishedAt, LastActivityAt: cell.LastActivity, LearnerTracks: *tracks[topic.ID]}
	}
	return out, nil
}

func (s *Service) tracks(ctx context.Context, t *platform.Tenant, userID int64, gb learning.Gradebook) (map[int64]*LearnerTracks, error) {
	ids := make([]int64, len(gb.Topics))
	out := make(map[int64]*LearnerTracks, len(gb.Topics))
	for i, topic := range gb.Topics {
		ids[i] = topic.ID
		out[topic.ID] = &LearnerTracks{}
	}
	for _, source := range s.Tracks {
		if err := source(ctx, t, userID, ids, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}
