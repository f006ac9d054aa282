package courses

import (
	"context"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/platform"
)

// AdminLesson is a lesson of the admin program with its topics and
// nested lessons.
type AdminLesson struct {
	LessonView
	Topics  []AdminTopic  `json:"topics"`
	Lessons []AdminLesson `json:"lessons"`
}

// AdminProgram is a course with the tree of its lessons and topics, as authors
// see it: inactive lessons and topics included, content as stored.
type AdminProgram struct {
	CourseView
	Lessons []AdminLesson `json:"lessons"`
}

// AdminProgram returns the program of a course the caller may read in the
// admin API. It runs a fixed number of queries whatever the course's size.
func (s *Service) AdminProgram(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64) (AdminProgram, error) {
	c, err := ByID(ctx, t.DB, courseID)
	if err != nil {
		return AdminProgram{}, err
	}
	if err := allow(CanRead(p, c) || CanEdit(p, c)); err != nil {
		return AdminProgram{}, err
	}
	view, err := s.view(ctx, t, t.DB, c)
	if err != nil {
		return AdminProgram{}, err
	}
	lessons, err := Lessons(ctx, t.DB, courseID)
	if err != nil {
		return AdminProgram{}, err
	}
	topics := map[int64][]AdminTopic{}
	if s.Topics != nil {
		list, err := s.Topics.AdminTopics(ctx, t.DB, courseID)
		if err != nil {
			return AdminProgram{}, err
		}
		for _, tp := range list {
			topics[tp.LessonID] = append(topics[tp.LessonID], tp)
		}
	}
	return AdminProgram{CourseView: view, Lessons: lessonTree(lessons, topics)}, nil
}

// lessonTree nests lessons under their parents, keeping their order, and
// hangs each lesson's topics on it. A lesson whose parent is missing is
// shown at the top rather than lost.
func lessonTree(lessons []Lesson, topics map[int64][]AdminTopic) []AdminLesson {
	known := map[int64]bool{}
	children := map[int64][]Lesson{}
	for _, l := range lessons {
		known[l.ID] = true
	}
	var roots []Lesson
	for _, l := range lessons {
		if l.ParentID == nil || !known[*l.ParentID] || *l.ParentID == l.ID {
			roots = append(roots, l)
			continue
		}
		children[*l.ParentID] = append(children[*l.ParentID], l)
	}
	seen := map[int64]bool{}
	var build func(ls []Lesson) []AdminLesson
	build = func(ls []Lesson) []AdminLesson {
		out := make([]AdminLesson, 0, len(ls))
		for _, l := range ls {
			if seen[l.ID] {
				continue
			}
			seen[l.ID] = true
			out = append(out, AdminLesson{LessonView: lessonView(l), Topics: nonNil(topics[l.ID]),
				Lessons: build(children[l.ID])})
		}
		return out
	}
	return build(roots)
}
