package courses_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestLessons goes through the typed client: routes and fields are Go
// names, so a renamed one fails to compile.
func TestLessons(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		cs := env.Clients()
		admin, tutor, student, anonymous := cs.Admin, cs.Tutor, cs.Student, cs.Anonymous
		course := func(c *client.Client, title string) int64 {
			t.Helper()
			return apitest.Must(c.PostAdminCourses(ctx, client.CourseBody{Title: title}))(t).ID
		}
		lesson := func(c *client.Client, body client.CreateLessonInputBody) int64 {
			t.Helper()
			return apitest.Must(c.PostAdminLessons(ctx, body))(t).ID
		}
		a, b, mine := course(admin, "A"), course(admin, "B"), course(tutor, "Mine")
		inB := lesson(admin, client.CreateLessonInputBody{CourseID: b, Title: "In B"})
		foreign := foreignCourse(t, env)
		lessons := func() int { return env.Count(t, `SELECT COUNT(*) FROM lessons`) }
		now := env.Clock.Now()

		// refused checks a refusal's status and, when given, that its
		// errors name field.
		refused := func(name string, err error, status int, field string) {
			t.Helper()
			t.Run(name, func(t *testing.T) {
				e := apitest.Refused(t, err, status)
				if field != "" && len(e.Errors[field]) == 0 {
					t.Errorf("no error for %s: %v", field, e)
				}
			})
		}
		create := func(c *client.Client, body client.CreateLessonInputBody) error {
			_, err := c.PostAdminLessons(ctx, body)
			return err
		}
		x := client.CreateLessonInputBody{CourseID: a, Title: "X"}
		refused("anonymous cannot create", create(anonymous, x), 401, "")
		refused("student cannot create", create(student, x), 403, "")
		refused("tutor cannot add to another's course", create(tutor, x), 403, "")
		refused("course required", create(admin, client.CreateLessonInputBody{Title: "X"}), 422, "course_id")
		refused("unknown course", create(admin, client.CreateLessonInputBody{CourseID: 999999, Title: "X"}), 422, "course_id")
		refused("another tenant's course", create(admin, client.CreateLessonInputBody{CourseID: foreign, Title: "X"}), 422, "course_id")
		refused("title required", create(admin, client.CreateLessonInputBody{CourseID: a, Title: " "}), 422, "title")
		refused("parent of another course", create(admin, client.CreateLessonInputBody{CourseID: a, Title: "X",
			ParentLessonID: client.Ptr(inB)}), 422, "parent_lesson_id")
		refused("unknown parent", create(admin, client.CreateLessonInputBody{CourseID: a, Title: "X",
			ParentLessonID: client.Ptr(int64(999999))}), 422, "parent_lesson_id")
		refused("window must be ordered", create(admin, client.CreateLessonInputBody{CourseID: a, Title: "X",
			ActiveFrom: client.Ptr(now), ActiveTo: client.Ptr(now.Add(-time.Hour))}), 422, "active_to")
		if lessons() != 1 {
			t.Fatal("a refused create stored a lesson")
		}

		one := lesson(admin, client.CreateLessonInputBody{CourseID: a, Title: "One", Summary: client.Ptr("First"), Duration: client.Ptr("1h")})
		two := lesson(admin, client.CreateLessonInputBody{CourseID: a, Title: "Two", Active: client.Ptr(false)})
		sub := lesson(admin, client.CreateLessonInputBody{CourseID: a, Title: "One.1", ParentLessonID: client.Ptr(one)})
		deep := lesson(admin, client.CreateLessonInputBody{CourseID: a, Title: "One.1.1", ParentLessonID: client.Ptr(sub),
			Order: client.Ptr(int64(5)), ActiveFrom: client.Ptr(now.Add(time.Hour))})
		get := func(c *client.Client, id int64) (*client.LessonView, error) { return c.GetAdminLessonsID(ctx, id) }
		read := func(id int64) *client.LessonView {
			t.Helper()
			return apitest.Must(get(admin, id))(t)
		}

		if l := read(sub); l.ParentLessonID == nil || *l.ParentLessonID != one || l.Order != 1 || !l.Active {
			t.Errorf("nested lesson goes first among its siblings: %+v", l)
		}
		if l := read(deep); l.Order != 5 || l.ActiveFrom == nil || l.ActiveTo != nil {
			t.Errorf("explicit order and window: %+v", l)
		}
		if l := apitest.Must(tutor.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: mine, Title: "Mine 1"}))(t); l.Order != 1 {
			t.Errorf("tutor adds to its course: %+v", l)
		}
		if l := read(one); l.Title != "One" || l.Summary != "First" || l.Duration != "1h" || l.Order != 1 || l.CourseID != a ||
			l.ParentLessonID != nil {
			t.Errorf("read: %+v", l)
		}
		if l := read(two); l.Order != 2 || l.Active {
			t.Errorf("second lesson goes after the first: %+v", l)
		}
		_, err := get(tutor, one)
		refused("tutor cannot read another's lesson", err, 403, "")
		_, err = get(student, one)
		refused("student cannot read", err, 403, "")
		_, err = get(admin, 999999)
		if e := apitest.Refused(t, err, 404); e.Message != "Lesson not found." {
			t.Errorf("unknown lesson: %v", e)
		}

		list := func(c *client.Client, p client.GetAdminLessonsParams) (*client.Page[client.LessonView], error) {
			return c.GetAdminLessons(ctx, p)
		}
		page := apitest.Must(list(admin, client.GetAdminLessonsParams{CourseID: client.Ptr(a)}))(t)
		if ids := lessonIDs(page.Items); page.Meta.Total != 4 || !reflect.DeepEqual(ids, []int64{one, sub, two, deep}) {
			t.Errorf("list a course: %d %v", page.Meta.Total, ids)
		}
		if page := apitest.Must(list(admin, client.GetAdminLessonsParams{Title: client.Ptr("one.1")}))(t); page.Meta.Total != 2 {
			t.Errorf("title search: %d", page.Meta.Total)
		}
		if page := apitest.Must(list(tutor, client.GetAdminLessonsParams{}))(t); page.Meta.Total != 1 || page.Items[0].Title != "Mine 1" {
			t.Errorf("tutor lists its lessons: %+v", page)
		}
		_, err = list(tutor, client.GetAdminLessonsParams{CourseID: client.Ptr(a)})
		refused("tutor cannot list another's course", err, 403, "")
		_, err = list(admin, client.GetAdminLessonsParams{CourseID: client.Ptr(int64(999999))})
		refused("list an unknown course", err, 404, "")
		_, err = list(student, client.GetAdminLessonsParams{})
		refused("student cannot list", err, 403, "")

		form := apitest.Must(tutor.GetAdminLessonsCreate(ctx, client.GetAdminLessonsCreateParams{}))(t)
		if !reflect.DeepEqual(form.Courses, []client.CourseRef{{ID: mine, Title: "Mine"}}) || len(form.Lessons) != 0 {
			t.Errorf("create form: %+v", form)
		}
		form = apitest.Must(admin.GetAdminLessonsCreate(ctx, client.GetAdminLessonsCreateParams{CourseID: client.Ptr(a)}))(t)
		if form.Courses[0].Title != "A" || form.Lessons[0].ID != one || form.Lessons[3].ID != deep {
			t.Errorf("create form with parents: %+v", form)
		}
		_, err = student.GetAdminLessonsCreate(ctx, client.GetAdminLessonsCreateParams{})
		refused("student gets no form", err, 403, "")
		edit := apitest.Must(admin.GetAdminLessonsIDEdit(ctx, one))(t)
		if edit.Lesson.ID != one || !reflect.DeepEqual(edit.Lessons, []client.LessonRef{{ID: two, CourseID: a, Title: "Two"}}) {
			t.Errorf("edit form leaves out the lesson's subtree: %+v", edit)
		}
		_, err = tutor.GetAdminLessonsIDEdit(ctx, one)
		refused("tutor gets no edit form of another's lesson", err, 403, "")

		patch := func(c *client.Client, id int64, body client.PatchLessonInputBody) (*client.LessonView, error) {
			return c.PatchAdminLessonsID(ctx, id, body)
		}
		_, err = patch(admin, one, client.PatchLessonInputBody{ParentLessonID: client.Ptr(deep)})
		refused("no cycles", err, 422, "parent_lesson_id")
		_, err = patch(admin, one, client.PatchLessonInputBody{ParentLessonID: client.Ptr(one)})
		refused("not its own parent", err, 422, "parent_lesson_id")
		_, err = patch(admin, one, client.PatchLessonInputBody{CourseID: client.Ptr(b)})
		refused("no moving between courses", err, 422, "course_id")
		_, err = patch(admin, one, client.PatchLessonInputBody{ParentLessonID: client.Ptr(inB)})
		refused("no parent from another course", err, 422, "")
		_, err = patch(tutor, one, client.PatchLessonInputBody{Title: client.Ptr("X")})
		refused("tutor cannot change another's lesson", err, 403, "")
		_, err = patch(admin, 999999, client.PatchLessonInputBody{Title: client.Ptr("X")})
		refused("unknown lesson", err, 404, "")
		if l := read(one); l.ParentLessonID != nil || l.Title != "One" {
			t.Errorf("the refused changes stored something: %+v", l)
		}
		if l := apitest.Must(patch(admin, one, client.PatchLessonInputBody{Title: client.Ptr("Uno"), CourseID: client.Ptr(a)}))(t); l.Title != "Uno" ||
			l.Summary != "First" || l.Order != 1 {
			t.Errorf("patch: %+v", l)
		}
		// The body's pointers cannot say null: the move to the top sends
		// its JSON through Call.
		var top client.LessonView
		if err := admin.Call(ctx, "PATCH", "/api/admin/lessons/"+id(sub), map[string]any{"parent_lesson_id": nil}, &top); err != nil ||
			top.ParentLessonID != nil || top.Order != 3 {
			t.Errorf("moving to the top goes last: %+v %v", top, err)
		}
		if l := apitest.Must(patch(admin, sub, client.PatchLessonInputBody{ParentLessonID: client.Ptr(one), Order: client.Ptr(int64(1))}))(t); l.ParentLessonID == nil ||
			*l.ParentLessonID != one || l.Order != 1 {
			t.Errorf("moving back under: %+v", l)
		}
		_, err = admin.PutAdminLessonsID(ctx, two, client.PutLessonInputBody{Summary: client.Ptr("x")})
		refused("put needs a title", err, 422, "")
		if l := apitest.Must(admin.PutAdminLessonsID(ctx, two, client.PutLessonInputBody{Title: "Dos", Active: client.Ptr(true),
			ActiveTo: client.Ptr(now.Add(time.Hour))}))(t); l.Title != "Dos" || !l.Active || l.ActiveTo == nil {
			t.Errorf("put: %+v", l)
		}

		// The admin program shows every lesson and topic, nested.
		topic(t, env, a, one, "Intro", true)
		topic(t, env, a, deep, "Hidden", false)
		p := apitest.Must(admin.GetAdminCoursesIDProgram(ctx, a))(t)
		if len(p.Lessons) != 2 || p.Title != "A" {
			t.Fatalf("admin program: %+v", p)
		}
		first, second := p.Lessons[0], p.Lessons[1]
		if first.Title != "Uno" || len(first.Topics) != 1 || first.Topics[0].Title != "Intro" ||
			!reflect.DeepEqual(first.Topics[0].Content, map[string]any{"html": "<p>Hi</p>"}) ||
			len(first.Lessons) != 1 || first.Lessons[0].Title != "One.1" || len(first.Lessons[0].Lessons) != 1 {
			t.Fatalf("admin program, first lesson: %+v", first)
		}
		if d := first.Lessons[0].Lessons[0]; d.Title != "One.1.1" || len(d.Topics) != 1 || d.Topics[0].Title != "Hidden" || d.Topics[0].Active {
			t.Errorf("admin program, nested lesson: %+v", d)
		}
		if second.Title != "Dos" || second.Topics == nil || len(second.Topics) != 0 {
			t.Errorf("admin program, second lesson: %+v", second)
		}
		_, err = tutor.GetAdminCoursesIDProgram(ctx, a)
		refused("tutor cannot see another's program", err, 403, "")
		_, err = student.GetAdminCoursesIDProgram(ctx, mine)
		refused("student cannot see a program", err, 403, "")
		if p := apitest.Must(tutor.GetAdminCoursesIDProgram(ctx, mine))(t); len(p.Lessons) == 0 || p.Lessons[0].Title != "Mine 1" {
			t.Errorf("tutor sees its program: %+v", p)
		}
		_, err = admin.GetAdminCoursesIDProgram(ctx, 999999)
		refused("unknown program", err, 404, "")

		before := lessons()
		_, err = tutor.PostAdminLessonsIDClone(ctx, one)
		refused("tutor cannot clone another's lesson", err, 403, "")
		_, err = admin.PostAdminLessonsIDClone(ctx, 999999)
		refused("clone unknown", err, 404, "")
		cp := apitest.Must(admin.PostAdminLessonsIDClone(ctx, one))(t)
		if cp.Title != "Uno" || cp.Order != 3 || cp.ParentLessonID != nil || cp.CourseID != a {
			t.Errorf("clone: %+v", cp)
		}
		if n := lessons(); n != before+3 {
			t.Fatalf("clone made %d lessons, want 3", n-before)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM lessons WHERE parent_id = $1`, cp.ID); n != 1 {
			t.Fatalf("the clone has %d children", n)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM topics WHERE course_id = $1 AND lesson_id NOT IN ($2, $3, $4, $5)`,
			a, one, sub, deep, two); n != 2 {
			t.Fatalf("the clone has %d topics, want 2", n)
		}

		refused("tutor cannot delete another's lesson", tutor.DeleteAdminLessonsID(ctx, one), 403, "")
		refused("student cannot delete", student.DeleteAdminLessonsID(ctx, one), 403, "")
		apitest.OK(t, admin.DeleteAdminLessonsID(ctx, one))
		if n := env.Count(t, `SELECT COUNT(*) FROM lessons WHERE id IN ($1, $2, $3)`, one, sub, deep); n != 0 {
			t.Fatalf("%d lessons of the deleted tree remain", n)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM topics WHERE lesson_id IN ($1, $2, $3)`, one, sub, deep); n != 0 {
			t.Fatalf("%d topics of the deleted tree remain", n)
		}
		refused("deleting again", admin.DeleteAdminLessonsID(ctx, one), 404, "")
	})
}

func lessonIDs(ls []client.LessonView) []int64 {
	out := make([]int64, len(ls))
	for i, l := range ls {
		out[i] = l.ID
	}
	return out
}
