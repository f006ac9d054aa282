package learning

import (
	"time"

	"github.com/lms-platform/lms/internal/courses"
	"github.com/lms-platform/lms/internal/topics"
)

// tree is a course's program as learners see it: active lessons whose
// ancestors are active too, nested by parent, with their active topics.
// Hidden lessons hide their whole subtree.
type tree struct {
	roots   []*lessonNode
	lessons map[int64]*lessonNode
	// topics holds the visible topics by id; order lists them in program
	// order. The course is finished when every one of them is complete.
	topics map[int64]*topics.Topic
	order  []*topics.Topic
}

type lessonNode struct {
	courses.Lesson
	// open is false when the lesson's window, or an ancestor's, does not
	// include now: its topics are listed without content.
	open     bool
	children []*lessonNode
	topics   []*topics.Topic
}

// newTree builds the visible program from every lesson (ordered by
// position) and every topic (ordered by lesson, then position) of a course.
func newTree(lessons []courses.Lesson, all []topics.Topic, now time.Time) *tree {
	tr := &tree{lessons: map[int64]*lessonNode{}, topics: map[int64]*topics.Topic{}}
	nodes := make(map[int64]*lessonNode, len(lessons))
	for _, l := range lessons {
		nodes[l.ID] = &lessonNode{Lesson: l}
	}
	for _, l := range lessons {
		n := nodes[l.ID]
		if l.ParentID != nil {
			if parent, ok := nodes[*l.ParentID]; ok {
				parent.children = append(parent.children, n)
				continue
			}
		}
		tr.roots = append(tr.roots, n)
	}
	tr.roots = tr.keep(tr.roots, true, now)
	for i := range all {
		topic := &all[i]
		n, ok := tr.lessons[topic.LessonID]
		if !ok || !topic.Active {
			continue
		}
		n.topics = append(n.topics, topic)
		tr.topics[topic.ID] = topic
	}
	tr.walk(func(n *lessonNode) { tr.order = append(tr.order, n.topics...) })
	return tr
}

// keep drops inactive lessons with their subtrees, records the visible
// ones and works out whether each is open.
func (tr *tree) keep(nodes []*lessonNode, parentOpen bool, now time.Time) []*lessonNode {
	out := nodes[:0]
	for _, n := range nodes {
		if !n.Active {
			continue
		}
		n.open = parentOpen && n.Open(now)
		tr.lessons[n.ID] = n
		n.children = tr.keep(n.children, n.open, now)
		out = append(out, n)
	}
	return out
}

// open reports whether the visible topic's lesson is open, so progress
// may be recorded in it: the program shows the topics of a closed lesson
// without content, and that holds for everyone's own progress, editors'
// too.
func (tr *tree) open(topic *topics.Topic) bool {
	n, ok := tr.lessons[topic.LessonID]
	return ok && n.open
}

// walk visits the visible lessons in program order, parents first.
func (tr *tree) walk(fn func(*lessonNode)) {
	var visit func([]*lessonNode)
	visit = func(nodes []*lessonNode) {
		for _, n := range nodes {
			fn(n)
			visit(n.children)
		}
	}
	visit(tr.roots)
}

// finishedLessons returns the visible lessons that are finished for the
// statuses (topic id → status): all their topics complete and all their
// child lessons finished. They are listed children first, which is the
// order their LessonFinished events are emitted in.
func (tr *tree) finishedLessons(status map[int64]int) []int64 {
	var out []int64
	var visit func(n *lessonNode) bool
	visit = func(n *lessonNode) bool {
		done := true
		for _, c := range n.children {
			if !visit(c) {
				done = false
			}
		}
		for _, t := range n.topics {
			if status[t.ID] != Complete {
				done = false
			}
		}
		if done {
			out = append(out, n.ID)
		}
		return done
	}
	for _, n := range tr.roots {
		visit(n)
	}
	return out
}

// finished reports whether the course is finished for the statuses: it
// has visible topics and all of them are complete.
func (tr *tree) finished(status map[int64]int) bool {
	return len(tr.order) > 0 && tr.completed(status) == len(tr.order)
}

// completed counts the visible topics that are complete.
func (tr *tree) completed(status map[int64]int) int {
	n := 0
	for _, t := range tr.order {
		if status[t.ID] == Complete {
			n++
		}
	}
	return n
}
