package courses

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

// Inputs of the routes. Bodies are checked by their schema first (types,
// lengths, unknown fields), then by the service's rules.

// Schema describes an Optional as its value's schema, nullable.
func (Optional[T]) Schema(r huma.Registry) *huma.Schema {
	s := *huma.SchemaFromType(r, reflect.TypeFor[T]())
	s.Nullable = true
	return &s
}

type idInput struct {
	ID int64 `path:"id" doc:"Course id."`
}

type courseInput struct {
	Course int64 `path:"course" doc:"Course id."`
}

// CourseFields holds the course fields of request bodies besides the
// title; all may be left out. (Huma flattens only exported embedded
// types.)
type CourseFields struct {
	Summary         *string             `json:"summary,omitempty" maxLength:"5000"`
	Description     *string             `json:"description,omitempty" maxLength:"100000"`
	Language        *string             `json:"language,omitempty" maxLength:"16" doc:"A language code such as en or pt-BR."`
	Level           *string             `json:"level,omitempty" maxLength:"32" doc:"beginner, intermediate, advanced, expert, or empty for none."`
	Status          *string             `json:"status,omitempty" maxLength:"32" doc:"draft (default), published, archived or published_unactivated. A change records CourseStatusChanged; becoming active (published, inside its window) records CoursedPublished."`
	ActiveFrom      Optional[time.Time] `json:"active_from,omitempty" doc:"When learners may start; null: at once."`
	ActiveTo        Optional[time.Time] `json:"active_to,omitempty" doc:"When the course closes; after active_from. null: never."`
	HoursToComplete Optional[int]       `json:"hours_to_complete,omitempty" doc:"Hours a learner has from the start; at least 1. null: no limit."`
	Public          *bool               `json:"public,omitempty" doc:"Whether anyone may learn it without an assignment."`
	Findable        *bool               `json:"findable,omitempty" doc:"Whether it is listed in the public catalogue (default true)."`
	Categories      []int64             `json:"categories,omitempty" maxItems:"1000" doc:"Category ids; replaces the course's."`
	Tags            []string            `json:"tags,omitempty" maxItems:"100" doc:"Tags of at most 64 characters; replaces the course's."`
	Authors         []int64             `json:"authors,omitempty" maxItems:"100" doc:"User ids of tutors or admins; replaces the course's. A tutor always stays an author of what it edits."`
}

// courseBody is a course with its title required (create, PUT).
type courseBody struct {
	Title string `json:"title" maxLength:"255"`
	CourseFields
}

// coursePatch is a partial change of a course (PATCH, POST with form).
type coursePatch struct {
	Title *string `json:"title,omitempty" maxLength:"255"`
	CourseFields
}

func (b CourseFields) change(title *string) CourseChange {
	return CourseChange{Title: title, Summary: b.Summary, Description: b.Description, Language: b.Language,
		Level: b.Level, Status: b.Status, ActiveFrom: b.ActiveFrom, ActiveTo: b.ActiveTo,
		HoursToComplete: b.HoursToComplete, Public: b.Public, Findable: b.Findable, Categories: b.Categories,
		Tags: b.Tags, Authors: b.Authors}
}

type createCourseInput struct {
	Body courseBody
}

type putCourseInput struct {
	ID   int64 `path:"id"`
	Body courseBody
}

type patchCourseInput struct {
	ID   int64 `path:"id"`
	Body coursePatch
}

// formCourseInput is read whole, under the route's body cap, and parsed
// here: JSON or multipart form data with an optional image file.
type formCourseInput struct {
	Course      int64  `path:"id"`
	ContentType string `header:"Content-Type" hidden:"true"`
	RawBody     []byte `contentType:"multipart/form-data"`
}

type listCoursesInput struct {
	httpx.PageQuery
	Title      string `query:"title" maxLength:"255" doc:"Part of the title."`
	Status     string `query:"status" enum:"draft,published,archived,published_unactivated"`
	CategoryID int64  `query:"category_id"`
	Tag        string `query:"tag" maxLength:"64"`
	AuthorID   int64  `query:"author_id"`
	OrderBy    string `query:"order_by" enum:"id,title,created_at,position" default:"id"`
	Order      string `query:"order" enum:"asc,desc" default:"asc"`
}

func (in listCoursesInput) filter() CourseFilter {
	return CourseFilter{Title: in.Title, Status: in.Status, CategoryID: in.CategoryID, Tag: in.Tag, AuthorID: in.AuthorID,
		OrderBy: in.OrderBy, Desc: in.Order == "desc", Offset: in.Offset(), Limit: in.PerPage}
}

type categoryCoursesInput struct {
	httpx.PageQuery
	CategoryID int64  `path:"category_id"`
	Title      string `query:"title" maxLength:"255" doc:"Part of the title."`
}

type sortInput struct {
	Body struct {
		Courses []int64 `json:"courses" maxItems:"10000" doc:"Course ids in their new order; positions become 1, 2, 3, ..."`
	}
}

type assignableInput struct {
	httpx.PageQuery
	Search   string `query:"search" maxLength:"255" doc:"Part of the e-mail or full name."`
	CourseID int64  `query:"course_id" doc:"Leave out the users assigned to this course directly."`
}

type grantBody struct {
	ID      int64      `json:"id"`
	EndDate *time.Time `json:"end_date,omitempty" nullable:"true" doc:"When the access ends; null: never."`
}

type assignInput struct {
	ID   int64 `path:"id"`
	Body struct {
		Users  []grantBody `json:"users,omitempty" maxItems:"1000"`
		Groups []grantBody `json:"groups,omitempty" maxItems:"1000"`
	}
}

type unassignInput struct {
	ID   int64 `path:"id"`
	Body struct {
		Users  []int64 `json:"users,omitempty" maxItems:"1000"`
		Groups []int64 `json:"groups,omitempty" maxItems:"1000"`
	}
}

func grants(in []grantBody) []Grant {
	out := make([]Grant, len(in))
	for i, g := range in {
		out[i] = Grant(g)
	}
	return out
}

type tutorCourseInput struct {
	ID     int64 `path:"id" doc:"User id of the tutor."`
	Course int64 `path:"course"`
}

// LessonFields holds the lesson fields of request bodies besides the
// title and course.
type LessonFields struct {
	ParentID   Optional[int64]     `json:"parent_lesson_id,omitempty" doc:"A lesson of the same course to nest under; null: the top."`
	Summary    *string             `json:"summary,omitempty" maxLength:"5000"`
	Duration   *string             `json:"duration,omitempty" maxLength:"64"`
	Order      *int                `json:"order,omitempty" minimum:"0" doc:"Position among its siblings; default after the last."`
	Active     *bool               `json:"active,omitempty" doc:"Inactive lessons are hidden from learners (default true)."`
	ActiveFrom Optional[time.Time] `json:"active_from,omitempty"`
	ActiveTo   Optional[time.Time] `json:"active_to,omitempty"`
}

func (b LessonFields) change(courseID *int64, title *string) LessonChange {
	return LessonChange{CourseID: courseID, ParentID: b.ParentID, Title: title, Summary: b.Summary, Duration: b.Duration,
		Position: b.Order, Active: b.Active, ActiveFrom: b.ActiveFrom, ActiveTo: b.ActiveTo}
}

type createLessonInput struct {
	Body struct {
		CourseID int64  `json:"course_id"`
		Title    string `json:"title" maxLength:"255"`
		LessonFields
	}
}

type putLessonInput struct {
	ID   int64 `path:"id"`
	Body struct {
		CourseID *int64 `json:"course_id,omitempty" doc:"Must be the lesson's course; lessons do not move between courses."`
		Title    string `json:"title" maxLength:"255"`
		LessonFields
	}
}

type patchLessonInput struct {
	ID   int64 `path:"id"`
	Body struct {
		CourseID *int64  `json:"course_id,omitempty" doc:"Must be the lesson's course; lessons do not move between courses."`
		Title    *string `json:"title,omitempty" maxLength:"255"`
		LessonFields
	}
}

type listLessonsInput struct {
	httpx.PageQuery
	CourseID int64  `query:"course_id" doc:"Only the lessons of this course."`
	Title    string `query:"title" maxLength:"255" doc:"Part of the title."`
}

type lessonFormInput struct {
	CourseID int64 `query:"course_id" doc:"Also list this course's lessons as parents."`
}

type catalogueInput struct {
	httpx.PageQuery
	Title      string `query:"title" maxLength:"255" doc:"Part of the title."`
	CategoryID int64  `query:"category_id"`
	Tag        string `query:"tag" maxLength:"64"`
	NoExpired  bool   `query:"no_expired" doc:"Leave out courses whose active_to has passed."`
	OrderBy    string `query:"order_by" enum:"id,title,created_at,position" default:"position"`
	Order      string `query:"order" enum:"asc,desc" default:"asc"`
}

type authoredInput struct {
	httpx.PageQuery
	Title   string `query:"title" maxLength:"255" doc:"Part of the title."`
	Status  string `query:"status" enum:"draft,published,archived,published_unactivated"`
	OrderBy string `query:"order_by" enum:"id,title,created_at,position" default:"id"`
	Order   string `query:"order" enum:"asc,desc" default:"asc"`
}

type tutorInput struct {
	ID int64 `path:"id" doc:"User id of the tutor."`
}

type tutorsInput struct {
	httpx.PageQuery
	Search string `query:"search" maxLength:"255" doc:"Part of the name."`
}

// formBody caps the update with form data: the image and the fields.
const formBody = MaxImageSize + 1<<20

var (
	courseTags  = []string{"courses"}
	lessonTags  = []string{"lessons"}
	tutorTags   = []string{"tutors"}
	learnerTags = []string{"catalogue"}
)

// Routes registers the admin course, lesson and tutor routes and the
// public catalogue, in the order of the spec's tables. Each names its
// scope: courses:read for reads (form data and the catalogue too),
// courses:write for writes (the interface's Topics section).
func Routes(api huma.API, s *Service) {
	courseRoutes(api, s)
	accessRoutes(api, s)
	lessonRoutes(api, s)
	tutorRoutes(api, s)
	catalogueRoutes(api, s)
}

func courseRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: courseTags, Who: httpx.User}
	}
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses", "courses:read", "List courses: title, status, category_id, tag, author_id, order_by (id, title, created_at, position), order, pages (course_list; tutors see the courses they author)"),
		func(ctx context.Context, in *listCoursesInput) (*httpx.PageResponse[CourseView], error) {
			return paged(s.ListCourses(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.filter()))(in.PageQuery)
		})
	create := route(http.MethodPost, "/api/admin/courses", "courses:write", "Create a course; the creator becomes an author unless an admin names the authors (course_create)")
	create.Status = http.StatusCreated
	httpx.Handle(api, create,
		func(ctx context.Context, in *createCourseInput) (*httpx.Response[CourseView], error) {
			v, err := s.CreateCourse(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Body.change(&in.Body.Title))
			if err != nil {
				return nil, err
			}
			return httpx.Created(v, "Course created.")
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/create", "courses:read", "Form data of a new course: statuses, levels, categories, tutors (course_create)"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[CourseForm], error) {
			return answer(s.CreateForm(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/{id}", "courses:read", "A course (course_read, or course_read_authored for an author)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[CourseView], error) {
			return answer(s.Course(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/{id}/edit", "courses:read", "A course with the form data of its edit form (course_update, or course_update_authored for an author)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[CourseEditForm], error) {
			return answer(s.EditForm(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/courses/{id}", "courses:write", "Update a course: title required, the other fields as given (course_update, or course_update_authored for an author)"),
		func(ctx context.Context, in *putCourseInput) (*httpx.Response[CourseView], error) {
			return updated(s.UpdateCourse(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.change(&in.Body.Title)))
		})
	httpx.Handle(api, route(http.MethodPatch, "/api/admin/courses/{id}", "courses:write", "Change some fields of a course; null clears active_from, active_to, hours_to_complete (course_update, or course_update_authored for an author)"),
		func(ctx context.Context, in *patchCourseInput) (*httpx.Response[CourseView], error) {
			return updated(s.UpdateCourse(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.change(in.Body.Title)))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/courses/{id}", "courses:write", "Delete a course with its lessons, topics, assignments and files (course_delete, or course_delete_authored for an author)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeleteCourse(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Course deleted.")
		})
	form := route(http.MethodPost, "/api/admin/courses/{id}", "courses:write", "Update a course with form data: the fields of PATCH as JSON or multipart/form-data (lists as repeated fields, categories[] too), with an optional image file (PNG, JPEG, GIF or WebP, at most 5 MiB) (course_update, or course_update_authored for an author)")
	form.MaxBody = formBody
	httpx.Handle(api, form,
		func(ctx context.Context, in *formCourseInput) (*httpx.Response[CourseView], error) {
			change, err := parseCourseForm(in.ContentType, in.RawBody)
			if err != nil {
				return nil, err
			}
			return updated(s.UpdateCourse(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Course, change))
		})
	describeCourseForm(api, form.Path)
	httpx.Handle(api, route(http.MethodPost, "/api/admin/courses/sort", "courses:write", "Order courses: body {courses: [ids in their new order]} sets positions 1, 2, 3, ... (course_update, or course_update_authored for each course named)"),
		func(ctx context.Context, in *sortInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.SortCourses(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Body.Courses); err != nil {
				return nil, err
			}
			return httpx.Done("Courses sorted.")
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/{course}/program", "courses:read", "The course with its tree of lessons and topics, inactive ones included, content as stored (course_read, or course_read_authored for an author)"),
		func(ctx context.Context, in *courseInput) (*httpx.Response[AdminProgram], error) {
			return answer(s.AdminProgram(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Course))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/search/tags", "courses:read", "Distinct tags of the courses the caller may list, with counts (course_list)"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]TagCount], error) {
			return answer(s.Tags(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/search/{category_id}", "courses:read", "Courses of a category, with title search and pages (course_list; tutors see the courses they author)"),
		func(ctx context.Context, in *categoryCoursesInput) (*httpx.PageResponse[CourseView], error) {
			f := CourseFilter{CategoryID: in.CategoryID, Title: in.Title, OrderBy: "position", Offset: in.Offset(), Limit: in.PerPage}
			return paged(s.ListCourses(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), f))(in.PageQuery)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/users/assignable", "courses:read", "Active users that can be assigned to courses: search, course_id leaves out those assigned to it, pages (course_list with user_list or user_list_course-authored)"),
		func(ctx context.Context, in *assignableInput) (*httpx.PageResponse[UserRef], error) {
			f := AssignableFilter{Search: in.Search, CourseID: in.CourseID, Offset: in.Offset(), Limit: in.PerPage}
			return paged(s.AssignableUsers(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), f))(in.PageQuery)
		})
}

func accessRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: courseTags, Who: httpx.User}
	}
	httpx.Handle(api, route(http.MethodGet, "/api/admin/courses/{id}/access", "courses:read", "Users and groups assigned to a course, with their end dates (course_read, or an author)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[Assignments], error) {
			return answer(s.Assignments(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/courses/{id}/access", "courses:write", "Assign users and groups {users: [{id, end_date?}], groups: [{id, end_date?}]}; members of subgroups inherit a group's access. Events CourseAssigned per new user, CourseAccessStarted per user gaining access (course_update, or an author)"),
		func(ctx context.Context, in *assignInput) (*httpx.Response[Assignments], error) {
			a, err := s.Assign(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, grants(in.Body.Users), grants(in.Body.Groups))
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(a, "Access assigned.")
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/courses/{id}/access/remove", "courses:write", "Unassign users and groups {users: [ids], groups: [ids]}; ids not assigned are ignored. Events CourseUnassigned per user unassigned, CourseAccessFinished per user losing access (course_update, or an author)"),
		func(ctx context.Context, in *unassignInput) (*httpx.Response[Assignments], error) {
			a, err := s.Unassign(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Body.Users, in.Body.Groups)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(a, "Access removed.")
		})
}

func lessonRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: lessonTags, Who: httpx.User}
	}
	httpx.Handle(api, route(http.MethodGet, "/api/admin/lessons", "courses:read", "List lessons by course and position: course_id, title, pages (course_list; tutors see the lessons of courses they author)"),
		func(ctx context.Context, in *listLessonsInput) (*httpx.PageResponse[LessonView], error) {
			f := LessonFilter{CourseID: in.CourseID, Title: in.Title, Offset: in.Offset(), Limit: in.PerPage}
			return paged(s.ListLessons(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), f))(in.PageQuery)
		})
	create := route(http.MethodPost, "/api/admin/lessons", "courses:write", "Create a lesson in a course the caller may edit; order defaults to after the last lesson of the same parent")
	create.Status = http.StatusCreated
	httpx.Handle(api, create,
		func(ctx context.Context, in *createLessonInput) (*httpx.Response[LessonView], error) {
			b := in.Body
			var courseID *int64
			if b.CourseID != 0 {
				courseID = &b.CourseID
			}
			v, err := s.CreateLesson(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), b.change(courseID, &b.Title))
			if err != nil {
				return nil, err
			}
			return httpx.Created(v, "Lesson created.")
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/lessons/create", "courses:read", "Form data of a new lesson: the courses the caller may edit; with course_id, that course's lessons as parents"),
		func(ctx context.Context, in *lessonFormInput) (*httpx.Response[LessonForm], error) {
			return answer(s.CreateLessonForm(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.CourseID))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/lessons/{id}", "courses:read", "A lesson of a course the caller may read"),
		func(ctx context.Context, in *idInput) (*httpx.Response[LessonView], error) {
			return answer(s.Lesson(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/lessons/{id}/edit", "courses:read", "A lesson with the form data of its edit form: courses, and the lessons that may be its parent"),
		func(ctx context.Context, in *idInput) (*httpx.Response[LessonEditForm], error) {
			return answer(s.EditLessonForm(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/lessons/{id}", "courses:write", "Update a lesson: title required, the other fields as given"),
		func(ctx context.Context, in *putLessonInput) (*httpx.Response[LessonView], error) {
			b := in.Body
			return answer(s.UpdateLesson(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, b.change(b.CourseID, &b.Title)))
		})
	httpx.Handle(api, route(http.MethodPatch, "/api/admin/lessons/{id}", "courses:write", "Change some fields of a lesson; parent_lesson_id null moves it to the top"),
		func(ctx context.Context, in *patchLessonInput) (*httpx.Response[LessonView], error) {
			b := in.Body
			return answer(s.UpdateLesson(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, b.change(b.CourseID, b.Title)))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/lessons/{id}", "courses:write", "Delete a lesson with its nested lessons and their topics"),
		func(ctx context.Context, in *idInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeleteLesson(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Lesson deleted.")
		})
	clone := route(http.MethodPost, "/api/admin/lessons/{id}/clone", "courses:write", "Clone a lesson with its nested lessons and their topics, after the last lesson of the same parent")
	clone.Status = http.StatusCreated
	httpx.Handle(api, clone,
		func(ctx context.Context, in *idInput) (*httpx.Response[LessonView], error) {
			v, err := s.CloneLesson(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return httpx.Created(v, "Lesson cloned.")
		})
}

func tutorRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: tutorTags, Who: httpx.User}
	}
	httpx.Handle(api, route(http.MethodPost, "/api/admin/tutors/{id}/assign/{course}", "courses:write", "Make a tutor or admin an author of the course; event CourseTutorAssigned unless it already is one (course_update, or an author)"),
		func(ctx context.Context, in *tutorCourseInput) (*httpx.Response[CourseView], error) {
			v, changed, err := s.AssignTutor(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Course)
			if err != nil {
				return nil, err
			}
			if !changed {
				return httpx.OKMessage(v, "The tutor already is an author of the course.")
			}
			return httpx.OKMessage(v, "Tutor assigned.")
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/tutors/{id}/unassign/{course}", "courses:write", "Remove an author from the course; event CourseTutorUnassigned if it was one (course_update, or an author)"),
		func(ctx context.Context, in *tutorCourseInput) (*httpx.Response[CourseView], error) {
			v, changed, err := s.UnassignTutor(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.Course)
			if err != nil {
				return nil, err
			}
			if !changed {
				return httpx.OKMessage(v, "The user is not an author of the course.")
			}
			return httpx.OKMessage(v, "Tutor unassigned.")
		})
}

func catalogueRoutes(api huma.API, s *Service) {
	route := func(method, path string, scope httpx.Scope, summary string) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: learnerTags, Who: httpx.Anyone}
	}
	httpx.Handle(api, route(http.MethodGet, "/api/courses", "courses:read", "The catalogue: published findable courses; title, category_id, tag, no_expired, order_by, order, pages"),
		func(ctx context.Context, in *catalogueInput) (*httpx.PageResponse[CourseView], error) {
			f := CourseFilter{Title: in.Title, CategoryID: in.CategoryID, Tag: in.Tag, OrderBy: in.OrderBy,
				Desc: in.Order == "desc", Offset: in.Offset(), Limit: in.PerPage}
			if in.NoExpired {
				now := s.now()
				f.NotEndedAt = &now
			}
			return paged(s.Catalogue(ctx, httpx.TenantFrom(ctx), f))(in.PageQuery)
		})
	authored := route(http.MethodGet, "/api/courses/authored", "courses:read", "The courses the caller authors, of any status: title, status, order_by, order, pages")
	authored.Who = httpx.User
	httpx.Handle(api, authored,
		func(ctx context.Context, in *authoredInput) (*httpx.PageResponse[CourseView], error) {
			f := CourseFilter{Title: in.Title, Status: in.Status, OrderBy: in.OrderBy, Desc: in.Order == "desc",
				Offset: in.Offset(), Limit: in.PerPage}
			return paged(s.Authored(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), f))(in.PageQuery)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/courses/{course}", "courses:read", "A published course; others are not found, except for callers who may read them in the admin API"),
		func(ctx context.Context, in *courseInput) (*httpx.Response[CourseView], error) {
			return answer(s.PublicCourse(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Course))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/tutors", "courses:read", "Tutors who author at least one published course: search by name, pages"),
		func(ctx context.Context, in *tutorsInput) (*httpx.PageResponse[Tutor], error) {
			f := TutorFilter{Search: in.Search, Offset: in.Offset(), Limit: in.PerPage}
			return paged(s.Tutors(ctx, httpx.TenantFrom(ctx), f))(in.PageQuery)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/tutors/{id}", "courses:read", "A tutor of published courses with its findable published courses"),
		func(ctx context.Context, in *tutorInput) (*httpx.Response[TutorDetail], error) {
			return answer(s.Tutor(ctx, httpx.TenantFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/tags/uniqueTags", "courses:read", "Distinct tags of the catalogue's courses, sorted"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]string], error) {
			return answer(s.UniqueTags(ctx, httpx.TenantFrom(ctx)))
		})
}

// answer wraps a service result in the envelope.
func answer[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}

// updated answers an updated course with its message.
func updated(v CourseView, err error) (*httpx.Response[CourseView], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OKMessage(v, "Course updated.")
}

// paged turns a service page into a handler's answer for the query q.
func paged[T any](items []T, total int64, err error) func(q httpx.PageQuery) (*httpx.PageResponse[T], error) {
	return func(q httpx.PageQuery) (*httpx.PageResponse[T], error) {
		if err != nil {
			return nil, err
		}
		return httpx.Paged(items, q, total)
	}
}

// parseCourseForm reads the change of an update with form data: a JSON
// body like PATCH's, or multipart form data with the same fields as text
// and an optional image file.
func parseCourseForm(contentType string, body []byte) (CourseChange, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return CourseChange{}, apperr.New(apperr.UnsupportedMedia, "Send the course as JSON or multipart/form-data.")
	}
	var patch coursePatch
	switch mt {
	case "application/json":
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&patch); err != nil {
			return CourseChange{}, invalidBody(err)
		}
		return patch.change(patch.Title), nil
	case "multipart/form-data":
		if params["boundary"] == "" {
			return CourseChange{}, apperr.New(apperr.UnsupportedMedia, "The multipart body has no boundary.")
		}
	default:
		return CourseChange{}, apperr.New(apperr.UnsupportedMedia, "Send the course as JSON or multipart/form-data.")
	}
	fields, image, err := readForm(body, params["boundary"])
	if err != nil {
		return CourseChange{}, err
	}
	raw, err := formJSON(fields)
	if err != nil {
		return CourseChange{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&patch); err != nil {
		return CourseChange{}, invalidBody(err)
	}
	change := patch.change(patch.Title)
	change.Image = image
	return change, nil
}

// invalidBody is the 422 for a body that does not decode into a course
// patch: an unknown field or a value of the wrong type.
func invalidBody(err error) error {
	return apperr.Wrap(apperr.Invalid, err, "The given data was invalid: "+strings.TrimPrefix(err.Error(), "json: ")+".")
}

// readForm collects the text fields (by name without a trailing "[]") and
// the image file of a multipart body.
func readForm(body []byte, boundary string) (map[string][]string, []byte, error) {
	r := multipart.NewReader(bytes.NewReader(body), boundary)
	fields := map[string][]string{}
	var image []byte
	for {
		part, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			return fields, image, nil
		}
		if err != nil {
			return nil, nil, apperr.Wrap(apperr.Invalid, err, "The multipart form could not be read.")
		}
		name := strings.TrimSuffix(part.FormName(), "[]")
		data, err := io.ReadAll(io.LimitReader(part, MaxImageSize+1))
		if err != nil {
			return nil, nil, apperr.Wrap(apperr.Invalid, err, "The multipart form could not be read.")
		}
		switch {
		case name == "image":
			if len(data) > MaxImageSize {
				return nil, nil, ErrImageTooLarge
			}
			if part.FileName() != "" || len(data) > 0 {
				image = data
			}
		case name == "_method":
			// Forms that tunnel PUT or PATCH through POST name the method.
		default:
			fields[name] = append(fields[name], string(data))
		}
	}
}

// formJSON turns text form fields into the JSON of a course patch. Empty
// values of dates and hours clear them; booleans take 1/0 and true/false.
func formJSON(fields map[string][]string) ([]byte, error) {
	out := map[string]any{}
	for name, values := range fields {
		last := values[len(values)-1]
		switch name {
		case "categories", "authors":
			ids := []int64{}
			for _, v := range values {
				if strings.TrimSpace(v) == "" {
					continue
				}
				id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				if err != nil {
					return nil, apperr.Field(name, "The "+name+" must be ids.")
				}
				ids = append(ids, id)
			}
			out[name] = ids
		case "tags":
			tags := []string{}
			for _, v := range values {
				if v != "" {
					tags = append(tags, v)
				}
			}
			out[name] = tags
		case "public", "findable":
			b, err := strconv.ParseBool(strings.TrimSpace(last))
			if err != nil {
				return nil, apperr.Field(name, "The "+name+" field must be true or false.")
			}
			out[name] = b
		case "hours_to_complete":
			if strings.TrimSpace(last) == "" {
				out[name] = nil
				continue
			}
			n, err := strconv.Atoi(strings.TrimSpace(last))
			if err != nil {
				return nil, apperr.Field(name, "The hours to complete must be a whole number.")
			}
			out[name] = n
		case "active_from", "active_to":
			if strings.TrimSpace(last) == "" {
				out[name] = nil
				continue
			}
			t, err := time.Parse(time.RFC3339, strings.TrimSpace(last))
			if err != nil {
				return nil, apperr.Field(name, "The "+strings.ReplaceAll(name, "_", " ")+" must be a date and time (RFC 3339).")
			}
			out[name] = t
		default:
			out[name] = last
		}
	}
	return json.Marshal(out)
}

// describeCourseForm documents both bodies of the update with form data,
// which the handler reads raw so that its size cap holds.
func describeCourseForm(api huma.API, path string) {
	item := api.OpenAPI().Paths[path]
	if item == nil || item.Post == nil {
		return
	}
	patch := huma.SchemaFromType(api.OpenAPI().Components.Schemas, reflect.TypeFor[coursePatch]())
	multipartSchema := &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{
		"image":             {Type: huma.TypeString, Format: "binary", Description: "A PNG, JPEG, GIF or WebP image of at most 5 MiB."},
		"title":             {Type: huma.TypeString},
		"summary":           {Type: huma.TypeString},
		"description":       {Type: huma.TypeString},
		"language":          {Type: huma.TypeString},
		"level":             {Type: huma.TypeString},
		"status":            {Type: huma.TypeString},
		"active_from":       {Type: huma.TypeString, Format: "date-time", Description: "Empty clears it."},
		"active_to":         {Type: huma.TypeString, Format: "date-time", Description: "Empty clears it."},
		"hours_to_complete": {Type: huma.TypeString, Description: "A whole number; empty clears it."},
		"public":            {Type: huma.TypeBoolean},
		"findable":          {Type: huma.TypeBoolean},
		"categories[]":      {Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeInteger}},
		"tags[]":            {Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeString}},
		"authors[]":         {Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeInteger}},
	}}
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"application/json":    {Schema: patch},
		"multipart/form-data": {Schema: multipartSchema},
	}}
}
