package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/lms-platform/lms/client"
)

// teachLesson is a lesson of the edit page's program, with what its
// move buttons need.
type teachLesson struct {
	ID    int64
	Title string
	// URL is the lesson's address under its course; NewTopic its "Add
	// topic" page.
	URL, NewTopic string
	First, Last   bool
	Topics        []teachTopic
	Lessons       []*teachLesson
}

type teachTopic struct {
	ID    int64
	Title string
	// KindLabel names the kind in the page's language; URL is the topic's
	// page.
	KindLabel, URL string
	First, Last    bool
}

// teachProgram turns the API's program into the edit page's lessons.
func teachProgram(course int64, lessons []client.AdminLesson, words teachWords) []*teachLesson {
	out := make([]*teachLesson, len(lessons))
	base := courseEditURL(course)
	for i, l := range lessons {
		lid := strconv.FormatInt(l.ID, 10)
		tl := &teachLesson{ID: l.ID, Title: l.Title, First: i == 0,
			Last: i == len(lessons)-1, URL: base + "/lessons/" + lid, NewTopic: base + "/topics/new?lesson=" + lid}
		tl.Topics = make([]teachTopic, len(l.Topics))
		for j, t := range l.Topics {
			kind := kindOfClass(t.TopicableType)
			tl.Topics[j] = teachTopic{ID: t.ID, Title: t.Title, KindLabel: words.S("kind_" + kind),
				URL: base + "/topics/" + strconv.FormatInt(t.ID, 10), First: j == 0, Last: j == len(l.Topics)-1}
		}
		tl.Lessons = teachProgram(course, l.Lessons, words)
		out[i] = tl
	}
	return out
}

// kindOfClass names a topicable class by its kind.
func kindOfClass(class string) string {
	for _, k := range topicKinds {
		if k.Class == class {
			return k.Name
		}
	}
	return "unknown"
}

func (h *Handler) teachAddLesson(w http.ResponseWriter, r *http.Request) {
	course, a := h.courseAuthor(w, r)
	if a == nil {
		return
	}
	title := strings.TrimSpace(r.PostFormValue("title"))
	_, err := a.api.PostAdminLessons(r.Context(), client.CreateLessonInputBody{CourseID: course, Title: title})
	if msg, ok := fieldErrors(err, map[string]string{}); ok {
		h.errorPage(w, r, http.StatusUnprocessableEntity, a.t.S("add_lesson"), msg)
		return
	}
	if err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, courseEditURL(course)+"?notice=saved#program", http.StatusSeeOther)
}

func (h *Handler) teachCloneLesson(w http.ResponseWriter, r *http.Request) {
	course, ok := h.pathID(w, r, "course")
	if !ok {
		return
	}
	lesson, ok := h.pathID(w, r, "lesson")
	if !ok {
		return
	}
	a := h.authorOf(w, r)
	if a == nil {
		return
	}
	if _, err := a.api.PostAdminLessonsIDClone(r.Context(), lesson); err != nil {
		h.apiFailed(w, r, err)
		return
	}
	http.Redirect(w, r, courseEditURL(course)+"?notice=lesson_cloned#program", http.StatusSeeOther)
}

// teachMove moves a lesson among its siblings, or a topic within its
// lesson: dir=up or down (the buttons), or to=N, the new 1-based position
// (drag and drop). The API keeps a plain position per item, so the
// siblings whose position changes are renumbered 1, 2, 3...
func (h *Handler) teachMove(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		course, ok := h.pathID(w, r, "course")
		if !ok {
			return
		}
		item, ok := h.pathID(w, r, what)
		if !ok {
			return
		}
		a := h.authorOf(w, r)
		if a == nil {
			return
		}
		ctx := r.Context()
		prog, err := a.api.GetAdminCoursesIDProgram(ctx, course)
		if err != nil {
			h.apiFailed(w, r, err)
			return
		}
		siblings, orders := siblingsOf(prog.Lessons, what, item)
		if siblings == nil {
			h.notFound(w, r)
			return
		}
		from := slicesIndex(siblings, item)
		to := from
		switch r.PostFormValue("dir") {
		case "up":
			to--
		case "down":
			to++
		default:
			if n, err := strconv.Atoi(r.PostFormValue("to")); err == nil {
				to = n - 1
			}
		}
		to = max(0, min(to, len(siblings)-1))
		moved := append(append([]int64{}, siblings[:from]...), siblings[from+1:]...)
		moved = append(moved[:to], append([]int64{item}, moved[to:]...)...)
		for i, id := range moved {
			pos := int64(i + 1)
			if orders[id] == pos {
				continue
			}
			if what == "lesson" {
				_, err = a.api.PatchAdminLessonsID(ctx, id, client.PatchLessonInputBody{Order: &pos})
			} else {
				_, err = a.api.PatchAdminTopicsID(ctx, id, client.PatchAdminTopicsIDBody{Order: &pos})
			}
			if err != nil {
				h.apiFailed(w, r, err)
				return
			}
		}
		if r.Header.Get("X-Requested-With") == "fetch" {
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		http.Redirect(w, r, courseEditURL(course)+"?notice=moved#"+what+"-"+strconv.FormatInt(item, 10), http.StatusSeeOther)
	}
}

func slicesIndex(ids []int64, id int64) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}

// siblingsOf finds the lesson or topic id in the program and returns its
// siblings' ids in order with their stored positions.
func siblingsOf(lessons []client.AdminLesson, what string, id int64) ([]int64, map[int64]int64) {
	ids, orders := []int64{}, map[int64]int64{}
	found := false
	for _, l := range lessons {
		if what == "lesson" {
			ids = append(ids, l.ID)
			orders[l.ID] = l.Order
			found = found || l.ID == id
			continue
		}
		var tids []int64
		torders := map[int64]int64{}
		hit := false
		for _, t := range l.Topics {
			tids = append(tids, t.ID)
			torders[t.ID] = t.Order
			hit = hit || t.ID == id
		}
		if hit {
			return tids, torders
		}
	}
	if found {
		return ids, orders
	}
	for _, l := range lessons {
		if s, o := siblingsOf(l.Lessons, what, id); s != nil {
			return s, o
		}
	}
	return nil, nil
}

type deleteData struct {
	teachPage
	Question string
	Name     string
	Action   string
	Back     string
}

// teachDeletePage asks before deleting a course, lesson or topic.
func (h *Handler) teachDeletePage(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		course, ok := h.pathID(w, r, "course")
		if !ok {
			return
		}
		item := course
		if what != "course" {
			if item, ok = h.pathID(w, r, what); !ok {
				return
			}
		}
		a := h.authorOf(w, r)
		if a == nil {
			return
		}
		ctx := r.Context()
		var name string
		var err error
		switch what {
		case "course":
			var c *client.CourseView
			if c, err = a.api.GetAdminCoursesID(ctx, item); err == nil {
				name = c.Title
			}
		case "lesson":
			var l *client.LessonView
			if l, err = a.api.GetAdminLessonsID(ctx, item); err == nil {
				name = l.Title
			}
		default:
			var t *client.View
			if t, err = a.api.GetAdminTopicsID(ctx, item); err == nil {
				name = t.Title
			}
		}
		if err != nil {
			h.apiFailed(w, r, err)
			return
		}
		back := courseEditURL(course)
		if what == "course" {
			back = "/teach/courses"
		}
		h.teachRender(w, r, a, http.StatusOK, "teach-delete", a.t.S("delete_"+what+"_q"), deleteData{teachPage: a.page(r),
			Question: a.t.S("delete_" + what + "_q"), Name: name, Action: r.URL.Path, Back: back})
	}
}

// teachDelete deletes after the confirmation page's form.
func (h *Handler) teachDelete(what string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		course, ok := h.pathID(w, r, "course")
		if !ok {
			return
		}
		item := course
		if what != "course" {
			if item, ok = h.pathID(w, r, what); !ok {
				return
			}
		}
		a := h.authorOf(w, r)
		if a == nil {
			return
		}
		var err error
		switch what {
		case "course":
			err = a.api.DeleteAdminCoursesID(r.Context(), item)
		case "lesson":
			err = a.api.DeleteAdminLessonsID(r.Context(), item)
		default:
			err = a.api.DeleteAdminTopicsID(r.Context(), item)
		}
		if err != nil {
			h.apiFailed(w, r, err)
			return
		}
		if what == "course" {
			http.Redirect(w, r, "/teach/courses?notice=deleted", http.StatusSeeOther)
			return
		}
		http.Redirect(w, r, courseEditURL(course)+"?notice=deleted#program", http.StatusSeeOther)
	}
}

// teachLessonsArgs draw a level of the edit page's program.
type teachLessonsArgs struct {
	Lessons []*teachLesson
	W       programWords
	CSRF    string
}

// programWords are the words the program repeats for every lesson and
// topic, looked up once per page: a course of hundreds of topics renders
// in a few milliseconds.
type programWords struct {
	Up, Down, Clone, Delete, NoTopics, AddTopic string
}

func newProgramWords(t teachWords) programWords {
	return programWords{Up: t.S("move_up"), Down: t.S("move_down"), Clone: t.S("clone"), Delete: t.S("delete"),
		NoTopics: t.S("no_topics"), AddTopic: t.S("add_topic")}
}
