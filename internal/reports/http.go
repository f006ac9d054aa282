package reports

import (
	"context"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
)

// FilterQuery selects and orders the learners of a list or an export.
type FilterQuery struct {
	GroupID int64  `query:"group_id" minimum:"0" doc:"Only the members of this group and of its subgroups. Who may not list groups (tutors) names a group assigned to the course or a subgroup of one; any other group gets 422."`
	Status  string `query:"status" enum:"planned,started,finished" doc:"Only the learners in this state."`
	Search  string `query:"search" maxLength:"255" doc:"Part of the learner's name or e-mail."`
	OrderBy string `query:"order_by" enum:"name,email,user_id,status,percent,score,seconds,started_at,finished_at,last_activity" default:"name"`
	Order   string `query:"order" enum:"asc,desc" default:"asc"`
}

func (q FilterQuery) filter() Filter {
	return Filter{GroupID: q.GroupID, Status: q.Status, Search: q.Search, OrderBy: q.OrderBy, Desc: q.Order == "desc"}
}

type listInput struct {
	ID int64 `path:"id" doc:"Course id."`
	httpx.PageQuery
	FilterQuery
	WithTopics bool `query:"with_topics" doc:"Add each learner's progress in every visible topic (topics)."`
}

type summaryInput struct {
	ID      int64 `path:"id" doc:"Course id."`
	GroupID int64 `query:"group_id" minimum:"0" doc:"Only the members of this group and of its subgroups. Who may not list groups (tutors) names a group assigned to the course or a subgroup of one; any other group gets 422."`
}

type exportInput struct {
	ID int64 `path:"id" doc:"Course id."`
	FilterQuery
}

type learnerInput struct {
	ID     int64 `path:"id" doc:"Course id."`
	UserID int64 `path:"user_id" doc:"The learner's user id."`
}

type topicInput struct {
	ID      int64 `path:"id" doc:"Course id."`
	UserID  int64 `path:"user_id" doc:"The learner's user id."`
	TopicID int64 `path:"topic_id" doc:"A visible topic of the course."`
}

// csvOutput is a CSV file to download.
type csvOutput struct {
	ContentType        string `header:"Content-Type"`
	ContentDisposition string `header:"Content-Disposition"`
	CacheControl       string `header:"Cache-Control"`
	Body               []byte
}

func csvFile(name string, body []byte) *csvOutput {
	return &csvOutput{ContentType: "text/csv; charset=utf-8", ContentDisposition: `attachment; filename="` + name + `"`,
		CacheControl: "no-store", Body: body}
}

var tags = []string{"gradebook"}

const who = " Admins read every course (course_read with user_read); tutors the courses they author " +
	"(course_read_authored with user_read_course-authored); others get 403. Scoped tokens need reports:read " +
	"(progress:read is only the caller's own progress)."

// Routes registers the gradebook routes.
func Routes(api huma.API, s *Service) {
	route := func(path, summary, description string) httpx.Route {
		return httpx.Route{Method: http.MethodGet, Path: path, Scope: "reports:read", Summary: summary,
			Description: description + who, Tags: tags, Who: httpx.User}
	}
	httpx.Handle(api, route("/api/admin/courses/{id}/progress", "A course's learners with their progress, by pages",
		"The learners of a course: the users assigned to it now (directly or through a group) and those with progress "+
			"in it. Each with status, percent, score, time spent and last activity; with_topics adds the progress in every "+
			"visible topic. Filters: group_id (members of the group and its subgroups), status, search (name or e-mail); "+
			"order_by with order; page and per_page (meta as every list)."),
		func(ctx context.Context, in *listInput) (*httpx.PageResponse[GradebookLearner], error) {
			f := in.filter()
			f.WithTopics = in.WithTopics
			items, total, err := s.List(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, f, in.Offset(), in.PerPage)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(items, in.PageQuery, total)
		})
	httpx.Handle(api, route("/api/admin/courses/{id}/progress/summary", "A course's gradebook in figures",
		"How many learners are planned, started and finished, their mean percent, the visible topics in program order "+
			"(the gradebook's columns) and the days on which learners finished, with the running total (the completion "+
			"chart); group_id narrows it to a group."),
		func(ctx context.Context, in *summaryInput) (*httpx.Response[GradebookSummary], error) {
			out, err := s.Summary(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, Filter{GroupID: in.GroupID})
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
	export := route("/api/admin/courses/{id}/progress/export", "A course's gradebook as CSV",
		"Every learner the filters of the list select, in its order, as text/csv (UTF-8 with a byte order mark, "+
			"RFC 4180): the summary columns, then a column per visible topic with the learner's status and score. Cells "+
			"that start with =, +, -, @, tab or carriage return get a leading apostrophe, so spreadsheets do not run them.")
	httpx.Handle(api, export,
		func(ctx context.Context, in *exportInput) (*csvOutput, error) {
			f := in.filter()
			f.WithTopics = true
			ts, items, err := s.Export(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, f)
			if err != nil {
				return nil, err
			}
			return csvFile("course-"+strconv.FormatInt(in.ID, 10)+"-progress.csv", courseCSV(ts, items)), nil
		})
	csvResponse(api, export.Path)
	httpx.Handle(api, route("/api/admin/courses/{id}/progress/{user_id}", "One learner's progress in a course, topic by topic",
		"The learner's summary and every visible topic in program order with status, score, time, dates and the tracks "+
			"its kind kept: SCORM status and score, cmi5 statements, quiz attempts, H5P statements, project files with "+
			"signed download links. 404 when the user is neither assigned to the course nor has progress in it."),
		func(ctx context.Context, in *learnerInput) (*httpx.Response[GradebookDetail], error) {
			out, err := s.Detail(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.UserID)
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
	learnerExport := route("/api/admin/courses/{id}/progress/{user_id}/export", "One learner's progress in a course as CSV",
		"The rows of GET .../progress/{user_id} as text/csv, a topic a row with its tracks summed up in words; escaped "+
			"as the course's export.")
	httpx.Handle(api, learnerExport,
		func(ctx context.Context, in *learnerInput) (*csvOutput, error) {
			out, err := s.Detail(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.UserID)
			if err != nil {
				return nil, err
			}
			name := "course-" + strconv.FormatInt(in.ID, 10) + "-learner-" + strconv.FormatInt(in.UserID, 10) + ".csv"
			return csvFile(name, learnerCSV(out)), nil
		})
	csvResponse(api, learnerExport.Path)
	httpx.Handle(api, route("/api/admin/courses/{id}/progress/{user_id}/topics/{topic_id}", "One learner's work in one topic, in full",
		"The topic's row of GET .../progress/{user_id} and the records its kind kept: quiz_attempts (each attempt with its "+
			"times, score, pass, and every question with the answer given and the right one, in words; essays waiting for a "+
			"grade have earned null and are graded with POST /api/admin/quiz-attempts/{id}/grade), scorm_scos (the runtime "+
			"data of each SCO: completion, success, score, session and total time, exit, location, suspend data length, "+
			"interactions), cmi5_statements and h5p_statements (verb, object, time and result of the latest 500, oldest "+
			"first). Lists of other kinds are empty. 404 when the user is not a learner of the course, or the topic not a "+
			"visible topic of it."),
		func(ctx context.Context, in *topicInput) (*httpx.Response[TopicTrack], error) {
			out, err := s.TopicTrack(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, in.UserID, in.TopicID)
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
}

// csvResponse describes a route's answer as text/csv instead of the bytes
// huma assumes.
func csvResponse(api huma.API, path string) {
	op := httpx.OperationOf(api, http.MethodGet, path)
	ok := op.Responses["200"]
	ok.Content = map[string]*huma.MediaType{"text/csv": {Schema: &huma.Schema{Type: "string"}}}
}
