package courses

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The admin lesson operations. Lessons belong to one course for good and
// nest through their parent, within that course.

// LessonChange is a create or an update of a lesson. Nil fields (and
// unset optionals) keep what the lesson has: on create, the defaults.
type LessonChange struct {
	CourseID *int64
	ParentID Optional[int64]
	Title    *string
	Summary  *string
	Duration *string
	// Position defaults to after the last lesson of the same parent.
	Position   *int
	Active     *bool
	ActiveFrom Optional[time.Time]
	ActiveTo   Optional[time.Time]
}

// apply writes the change's own fields into l and notes every broken rule
// in p; the course and the parent are checked against the database.
func (in LessonChange) apply(l *Lesson, p problems) {
	if in.Title != nil {
		l.Title = strings.TrimSpace(*in.Title)
	}
	switch {
	case l.Title == "":
		p.add("title", "The title field is required.")
	case utf8.RuneCountInString(l.Title) > maxTitleLength:
		p.add("title", fmt.Sprintf("The title may not be greater than %d characters.", maxTitleLength))
	}
	text(p, "summary", in.Summary, &l.Summary, maxSummaryLength)
	text(p, "duration", in.Duration, &l.Duration, maxDurationLength)
	if in.Position != nil {
		if *in.Position < 0 {
			p.add("order", "The order must be at least 0.")
		}
		l.Position = *in.Position
	}
	if in.Active != nil {
		l.Active = *in.Active
	}
	l.ActiveFrom = utc(in.ActiveFrom.or(l.ActiveFrom))
	l.ActiveTo = utc(in.ActiveTo.or(l.ActiveTo))
	window(p, l.ActiveFrom, l.ActiveTo)
}

// canAuthor reports whether p may author anything at all; finer checks
// follow on the course.
func canAuthor(p *access.Principal) bool { return CanList(p) }

// lessonCourse loads the lesson and its course, and checks that p may
// edit (edit) or read it.
func lessonCourse(ctx context.Context, q sqldb.Querier, p *access.Principal, id int64, edit bool) (Lesson, Course, error) {
	l, err := LessonByID(ctx, q, id)
	if err != nil {
		return l, Course{}, err
	}
	c, err := ByID(ctx, q, l.CourseID)
	if err != nil {
		return l, c, err
	}
	ok := CanEdit(p, c)
	if !edit {
		ok = ok || CanRead(p, c)
	}
	return l, c, allow(ok)
}

// checkParent notes a parent that is not a lesson of the course, or that
// would put the lesson inside itself.
func checkParent(ctx context.Context, q sqldb.Querier, p problems, l Lesson) error {
	if l.ParentID == nil {
		return nil
	}
	lessons, err := Lessons(ctx, q, l.CourseID)
	if err != nil {
		return err
	}
	parent := map[int64]*int64{}
	for _, x := range lessons {
		parent[x.ID] = x.ParentID
	}
	if _, ok := parent[*l.ParentID]; !ok {
		p.add("parent_lesson_id", "The parent lesson must be a lesson of the same course.")
		return nil
	}
	// Walk up from the new parent; meeting the lesson means a cycle.
	for id, steps := l.ParentID, 0; id != nil && steps <= len(lessons); id, steps = parent[*id], steps+1 {
		if l.ID != 0 && *id == l.ID {
			p.add("parent_lesson_id", "A lesson cannot be nested inside itself.")
			return nil
		}
	}
	return nil
}

// nextPosition is after the last lesson of the parent (nil: the top).
func nextPosition(ctx context.Context, q sqldb.Querier, courseID int64, parentID *int64) (int, error) {
	var a sqldb.Args
	query := `SELECT COALESCE(MAX(position), 0) + 1 FROM lessons WHERE course_id = ` + a.Add(courseID)
	if parentID == nil {
		query += ` AND parent_id IS NULL`
	} else {
		query += ` AND parent_id = ` + a.Add(*parentID)
	}
	var n int
	if err := q.QueryRowContext(ctx, query, a...).Scan(&n); err != nil {
		return 0, fmt.Errorf("courses: next lesson position: %w", err)
	}
	return n, nil
}

// CreateLesson adds a lesson to a course the caller may edit.
func (s *Service) CreateLesson(ctx context.Context, t *platform.Tenant, p *access.Principal, in LessonChange) (LessonView, error) {
	if err := allow(canAuthor(p)); err != nil {
		return LessonView{}, err
	}
	now := s.now()
	var out LessonView
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		pr := problems{}
		l := Lesson{Active: true}
		in.apply(&l, pr)
		l.ParentID = in.ParentID.or(nil)
		if in.CourseID == nil {
			pr.add("course_id", "The course id field is required.")
		} else {
			c, err := ByID(ctx, tx, *in.CourseID)
			if apperr.Is(err, apperr.NotFound) {
				pr.add("course_id", "The selected course does not exist.")
			} else if err != nil {
				return err
			} else if !CanEdit(p, c) {
				return errUnauthorized
			} else {
				l.CourseID = c.ID
				if err := checkParent(ctx, tx, pr, l); err != nil {
					return err
				}
			}
		}
		if err := pr.err(); err != nil {
			return err
		}
		if in.Position == nil {
			n, err := nextPosition(ctx, tx, l.CourseID, l.ParentID)
			if err != nil {
				return err
			}
			l.Position = n
		}
		id, err := insertLesson(ctx, tx, now, l)
		if err != nil {
			return err
		}
		if l, err = LessonByID(ctx, tx, id); err != nil {
			return err
		}
		out = lessonView(l)
		return ContentChanged(ctx, tx, now, l.CourseID)
	})
	return out, err
}

func insertLesson(ctx context.Context, tx *sqldb.Tx, now time.Time, l Lesson) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `INSERT INTO lessons (course_id, parent_id, title, summary, duration, position, active,
		active_from, active_to, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
		l.CourseID, l.ParentID, l.Title, l.Summary, l.Duration, l.Position, l.Active, l.ActiveFrom, l.ActiveTo, now).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("courses: create lesson: %w", err)
	}
	return id, nil
}

// Lesson returns one lesson of a course the caller may read.
func (s *Service) Lesson(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (LessonView, error) {
	l, _, err := lessonCourse(ctx, t.DB, p, id, false)
	if err != nil {
		return LessonView{}, err
	}
	return lessonView(l), nil
}

// UpdateLesson changes a lesson. Its course cannot change.
func (s *Service) UpdateLesson(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64, in LessonChange) (LessonView, error) {
	now := s.now()
	var out LessonView
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		l, _, err := lessonCourse(ctx, tx, p, id, true)
		if err != nil {
			return err
		}
		pr := problems{}
		oldParent := l.ParentID
		in.apply(&l, pr)
		l.ParentID = in.ParentID.or(l.ParentID)
		if in.CourseID != nil && *in.CourseID != l.CourseID {
			pr.add("course_id", "A lesson cannot move to another course.")
		}
		if err := checkParent(ctx, tx, pr, l); err != nil {
			return err
		}
		if err := pr.err(); err != nil {
			return err
		}
		if in.Position == nil && !sqldb.SameID(oldParent, l.ParentID) {
			if l.Position, err = nextPosition(ctx, tx, l.CourseID, l.ParentID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE lessons SET parent_id = $1, title = $2, summary = $3, duration = $4,
			position = $5, active = $6, active_from = $7, active_to = $8, updated_at = $9 WHERE id = $10`,
			l.ParentID, l.Title, l.Summary, l.Duration, l.Position, l.Active, l.ActiveFrom, l.ActiveTo, now, l.ID); err != nil {
			return fmt.Errorf("courses: update lesson %d: %w", l.ID, err)
		}
		if l, err = LessonByID(ctx, tx, id); err != nil {
			return err
		}
		out = lessonView(l)
		return ContentChanged(ctx, tx, now, l.CourseID)
	})
	return out, err
}

// DeleteLesson removes a lesson with its nested lessons and their topics.
func (s *Service) DeleteLesson(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) error {
	return t.Tx(ctx, func(tx *sqldb.Tx) error {
		l, _, err := lessonCourse(ctx, tx, p, id, true)
		if err != nil {
			return err
		}
		if err := s.removeTopicFiles(ctx, tx, l.CourseID, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM lessons WHERE id = $1`, id); err != nil {
			return fmt.Errorf("courses: delete lesson %d: %w", id, err)
		}
		return ContentChanged(ctx, tx, s.now(), l.CourseID)
	})
}

// CloneLesson copies a lesson, its nested lessons and (through
// Topics) their topics, and puts the copy after the last lesson of
// the same parent.
func (s *Service) CloneLesson(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (LessonView, error) {
	now := s.now()
	var out LessonView
	err := t.Tx(ctx, func(tx *sqldb.Tx) error {
		root, _, err := lessonCourse(ctx, tx, p, id, true)
		if err != nil {
			return err
		}
		lessons, err := Lessons(ctx, tx, root.CourseID)
		if err != nil {
			return err
		}
		children := map[int64][]Lesson{}
		for _, l := range lessons {
			if l.ParentID != nil {
				children[*l.ParentID] = append(children[*l.ParentID], l)
			}
		}
		copyRoot := root
		if copyRoot.Position, err = nextPosition(ctx, tx, root.CourseID, root.ParentID); err != nil {
			return err
		}
		var clone func(l Lesson, parent *int64, depth int) (int64, error)
		clone = func(l Lesson, parent *int64, depth int) (int64, error) {
			if depth > len(lessons) {
				return 0, fmt.Errorf("courses: clone lesson %d: nesting loops", root.ID)
			}
			from := l.ID
			l.ParentID = parent
			newID, err := insertLesson(ctx, tx, now, l)
			if err != nil {
				return 0, err
			}
			if s.Topics != nil {
				if err := s.Topics.CloneLessonTopics(ctx, tx, t, from, newID); err != nil {
					return 0, fmt.Errorf("courses: clone topics of lesson %d: %w", from, err)
				}
			}
			for _, child := range children[from] {
				if _, err := clone(child, &newID, depth+1); err != nil {
					return 0, err
				}
			}
			return newID, nil
		}
		newID, err := clone(copyRoot, root.ParentID, 0)
		if err != nil {
			return err
		}
		l, err := LessonByID(ctx, tx, newID)
		if err != nil {
			return err
		}
		out = lessonView(l)
		return ContentChanged(ctx, tx, now, l.CourseID)
	})
	return out, err
}

// LessonFilter selects lessons for the admin list.
type LessonFilter struct {
	CourseID int64
	Title    string
	Offset   int
	Limit    int
}

// ListLessons returns a page of lessons, of one course or of every course
// the caller may read, by course then position.
func (s *Service) ListLessons(ctx context.Context, t *platform.Tenant, p *access.Principal, f LessonFilter) ([]LessonView, int64, error) {
	if err := allow(canAuthor(p)); err != nil {
		return nil, 0, err
	}
	var a sqldb.Args
	var where []string
	if f.CourseID != 0 {
		c, err := ByID(ctx, t.DB, f.CourseID)
		if err != nil {
			return nil, 0, err
		}
		if err := allow(CanRead(p, c) || CanEdit(p, c)); err != nil {
			return nil, 0, err
		}
		where = append(where, `course_id = `+a.Add(f.CourseID))
	} else if !ListAll(p) {
		where = append(where, `course_id IN (SELECT course_id FROM course_authors WHERE user_id = `+a.Add(p.UserID)+`)`)
	}
	if strings.TrimSpace(f.Title) != "" {
		where = append(where, `LOWER(title) LIKE LOWER(`+a.Add(sqldb.Contains(f.Title))+`) ESCAPE '\'`)
	}
	cond := sqldb.Where(where)
	var total int64
	if err := t.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM lessons`+cond, a...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("courses: count lessons: %w", err)
	}
	rows, err := t.DB.QueryContext(ctx, `SELECT `+lessonColumns+` FROM lessons`+cond+
		` ORDER BY course_id, position, id LIMIT `+a.Add(f.Limit)+` OFFSET `+a.Add(f.Offset), a...)
	if err != nil {
		return nil, 0, fmt.Errorf("courses: list lessons: %w", err)
	}
	defer rows.Close()
	out := []LessonView{}
	for rows.Next() {
		l, err := scanLesson(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, lessonView(l))
	}
	return out, total, rows.Err()
}

// CourseRef is a course as lesson forms list one.
type CourseRef struct {
	ID    int64  `json:"id"`
	Title string `json:"title"`
}

// LessonRef is a lesson as lesson forms list one.
type LessonRef struct {
	ID       int64  `json:"id"`
	CourseID int64  `json:"course_id"`
	ParentID *int64 `json:"parent_lesson_id"`
	Title    string `json:"title"`
}

// LessonForm is what a lesson form offers: the courses the caller may
// edit and, when editing, the lessons that may be the parent.
type LessonForm struct {
	Courses []CourseRef `json:"courses"`
	Lessons []LessonRef `json:"lessons"`
}

// LessonEditForm is a lesson with what its form offers.
type LessonEditForm struct {
	Lesson LessonView `json:"lesson"`
	LessonForm
}

// CreateLessonForm returns the choices of a new lesson's form; with a
// course id, the lessons of that course as parents.
func (s *Service) CreateLessonForm(ctx context.Context, t *platform.Tenant, p *access.Principal, courseID int64) (LessonForm, error) {
	if err := allow(canAuthor(p)); err != nil {
		return LessonForm{}, err
	}
	form := LessonForm{Lessons: []LessonRef{}}
	var err error
	if form.Courses, err = editableCourses(ctx, t.DB, p); err != nil {
		return form, err
	}
	if courseID != 0 {
		c, err := ByID(ctx, t.DB, courseID)
		if err != nil {
			return form, err
		}
		if err := allow(CanEdit(p, c)); err != nil {
			return form, err
		}
		form.Lessons, err = parentChoices(ctx, t.DB, courseID, 0)
		return form, err
	}
	return form, nil
}

// EditLessonForm returns a lesson with the choices of its form: the
// lessons of its course outside its own subtree.
func (s *Service) EditLessonForm(ctx context.Context, t *platform.Tenant, p *access.Principal, id int64) (LessonEditForm, error) {
	l, _, err := lessonCourse(ctx, t.DB, p, id, true)
	if err != nil {
		return LessonEditForm{}, err
	}
	form := LessonEditForm{Lesson: lessonView(l)}
	if form.Courses, err = editableCourses(ctx, t.DB, p); err != nil {
		return form, err
	}
	form.Lessons, err = parentChoices(ctx, t.DB, l.CourseID, l.ID)
	return form, err
}

func editableCourses(ctx context.Context, q sqldb.Querier, p *access.Principal) ([]CourseRef, error) {
	var a sqldb.Args
	query := `SELECT id, title FROM courses`
	if !isAdmin(p) {
		query += ` WHERE id IN (SELECT course_id FROM course_authors WHERE user_id = ` + a.Add(p.UserID) + `)`
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY LOWER(title), id`, a...)
	if err != nil {
		return nil, fmt.Errorf("courses: list editable courses: %w", err)
	}
	defer rows.Close()
	out := []CourseRef{}
	for rows.Next() {
		var c CourseRef
		if err := rows.Scan(&c.ID, &c.Title); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// parentChoices lists the lessons of the course except the subtree of
// the lesson exclude (0: none).
func parentChoices(ctx context.Context, q sqldb.Querier, courseID, exclude int64) ([]LessonRef, error) {
	lessons, err := Lessons(ctx, q, courseID)
	if err != nil {
		return nil, err
	}
	parent := map[int64]*int64{}
	for _, l := range lessons {
		parent[l.ID] = l.ParentID
	}
	inside := func(id int64) bool {
		for cur, steps := &id, 0; cur != nil && steps <= len(lessons); cur, steps = parent[*cur], steps+1 {
			if *cur == exclude {
				return true
			}
		}
		return false
	}
	out := []LessonRef{}
	for _, l := range lessons {
		if exclude != 0 && inside(l.ID) {
			continue
		}
		out = append(out, LessonRef{ID: l.ID, CourseID: l.CourseID, ParentID: l.ParentID, Title: l.Title})
	}
	return out, nil
}
