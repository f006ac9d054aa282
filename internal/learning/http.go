package learning

import (
	"context"
	"net/http"
	"reflect"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
)

type courseInput struct {
	Course int64 `path:"course" doc:"Course id."`
}

type previewInput struct {
	Course  int64 `path:"course" doc:"Course id."`
	TopicID int64 `path:"topic_id" doc:"Topic id."`
}

type listInput struct {
	Status  string `query:"status" enum:"planned,started,finished" doc:"Only courses in this state."`
	OrderBy string `query:"order_by" enum:"id,title,started_at,finished_at,deadline,percent" doc:"Sort key (default id)."`
	Order   string `query:"order" enum:"asc,desc" doc:"Sort direction (default asc)."`
}

func (in listInput) filter() ListFilter {
	return ListFilter{Status: in.Status, OrderBy: in.OrderBy, Desc: in.Order == "desc"}
}

type pageInput struct {
	httpx.PageQuery
	Status  string `query:"status" enum:"planned,started,finished" doc:"Only courses in this state."`
	OrderBy string `query:"order_by" enum:"id,title,started_at,finished_at,deadline,percent" doc:"Sort key (default id)."`
	Order   string `query:"order" enum:"asc,desc" doc:"Sort direction (default asc)."`
}

func (in pageInput) filter() ListFilter {
	return listInput{Status: in.Status, OrderBy: in.OrderBy, Order: in.Order}.filter()
}

type progressCourseInput struct {
	CourseID int64 `path:"course_id" doc:"Course id."`
}

type writeInput struct {
	CourseID int64 `path:"course_id" doc:"Course id."`
	Body     struct {
		Progress []ProgressWrite `json:"progress" minItems:"1" maxItems:"1000" doc:"Statuses of topics of the course."`
	}
}

type topicInput struct {
	TopicID int64 `path:"topic_id" doc:"Topic id."`
}

type grantInput struct {
	TopicID   int64  `path:"topic_id" doc:"Topic id."`
	ContentID string `query:"content_id" pattern:"^[1-9][0-9]{0,18}$" doc:"H5P content the topic plays in a layout's H5PFrame; empty: the H5P topic's own content (422 when the topic plays no such content)."`
}

type statementInput struct {
	TopicID int64          `path:"topic_id" doc:"Topic id."`
	Body    map[string]any `doc:"An xAPI statement, or {statement: <xAPI statement>}."`
}

var tags = []string{"learning"}

// Routes registers the learner routes of the spec's "Courses for
// learners" table that this package serves.
func Routes(api huma.API, s *Service) {
	httpx.Handle(api, httpx.Route{Method: http.MethodGet,
		Path: "/api/courses/{course}/program", Tags: tags, Who: httpx.Anyone,
		Scope:   "courses:read",
		Summary: "The program of a course: lessons and topics with content, and the caller's progress",
		Description: "A signed-in learner's program is kept for their next reads and sent gzip-encoded " +
			"(Content-Encoding: gzip) when the request's Accept-Encoding accepts gzip."},
		func(ctx context.Context, in *courseInput) (*rawJSON, error) {
			t := httpx.TenantFrom(ctx)
			body, err := s.ProgramJSON(ctx, t, t.DB, httpx.PrincipalFrom(ctx), in.Course)
			if err != nil {
				return nil, err
			}
			b, encoding := body.Encoded(ctx)
			return &rawJSON{ContentType: "application/json", ContentEncoding: encoding, Vary: "Accept-Encoding", Body: b}, nil
		})
	describeAs[httpx.Envelope[LearnerProgram]](api, http.MethodGet, "/api/courses/{course}/program")
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/courses/{course}/preview/{topic_id}", Tags: tags,
		Scope: "courses:read",
		Who:   httpx.Anyone, Summary: "A preview topic of a published course, with its content"},
		func(ctx context.Context, in *previewInput) (*httpx.Response[LearnerTopic], error) {
			return ok(s.Preview(ctx, httpx.TenantFrom(ctx), in.Course, in.TopicID))
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/courses/progress", Tags: tags, Who: httpx.User,
		Scope:   "progress:read",
		Summary: "The caller's courses (assigned or started) with their progress"},
		func(ctx context.Context, in *listInput) (*httpx.Response[[]ProgressItem], error) {
			return ok(s.ProgressList(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx).UserID, in.filter()))
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/courses/progress/paginated", Tags: tags,
		Scope: "progress:read",
		Who:   httpx.User, Summary: "The caller's courses with their progress, a page at a time"},
		func(ctx context.Context, in *pageInput) (*httpx.PageResponse[ProgressItem], error) {
			items, err := s.ProgressList(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx).UserID, in.filter())
			if err != nil {
				return nil, err
			}
			total := int64(len(items))
			from := min(in.Offset(), len(items))
			return httpx.Paged(items[from:min(from+in.PerPage, len(items))], in.PageQuery, total)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/courses/progress/{course_id}", Tags: tags,
		Scope: "progress:read",
		Who:   httpx.User, Summary: "The caller's progress in one course, topic by topic"},
		func(ctx context.Context, in *progressCourseInput) (*httpx.Response[CourseProgress], error) {
			return ok(s.CourseProgress(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.CourseID))
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPatch, Path: "/api/courses/progress/{course_id}", Tags: tags,
		Scope: "progress:write",
		Who:   httpx.User, Summary: "Write the caller's statuses of topics of a course (idempotent)"},
		func(ctx context.Context, in *writeInput) (*httpx.Response[CourseProgress], error) {
			return ok(s.Record(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.CourseID, in.Body.Progress))
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPut, Path: "/api/courses/progress/{topic_id}/ping", Tags: tags,
		Scope: "progress:write",
		Who:   httpx.User, Summary: "Record time on a topic: adds the caller's seconds since their previous ping of any topic, at most 60"},
		func(ctx context.Context, in *topicInput) (*httpx.Response[TopicPing], error) {
			return ok(s.Ping(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID))
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/courses/progress/{topic_id}/h5p", Tags: tags,
		Scope: "progress:write",
		Who:   httpx.User, Status: http.StatusCreated, Summary: "Store an xAPI statement of an H5P topic"},
		func(ctx context.Context, in *statementInput) (*httpx.Response[H5PStatement], error) {
			return ok(s.StoreStatement(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.Body))
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/courses/progress/{topic_id}/h5p/grant", Tags: tags,
		Scope: "progress:write",
		Who:   httpx.User, Status: http.StatusCreated, Summary: "Issue the caller's play grant of an H5P topic's content",
		Description: "For learners who may record progress in the topic. The grant (2 hours) lets the H5P embed page, played on the " +
			"frontend's content origin, load the play model, files and libraries of this one content and keep the caller's own state " +
			"and result of it; every other route refuses it. An H5P topic's grant plays its content; a layout topic's, with " +
			"content_id, one of the H5P contents its H5PFrames play."},
		func(ctx context.Context, in *grantInput) (*httpx.Response[H5PPlayGrant], error) {
			return ok(s.H5PGrant(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.ContentID))
		})
}

// rawJSON is a response body encoded by the handler (see ProgramJSON).
type rawJSON struct {
	ContentType     string `header:"Content-Type"`
	ContentEncoding string `header:"Content-Encoding" doc:"gzip when the request accepted it and the answer is a signed-in learner's program kept for the next reads; absent otherwise."`
	Vary            string `header:"Vary"`
	Body            []byte
}

// describeAs documents the success response of an operation answering
// rawJSON as the JSON of T, which is what it writes.
func describeAs[T any](api huma.API, method, path string) {
	item := api.OpenAPI().Paths[path]
	var op *huma.Operation
	switch method {
	case http.MethodGet:
		op = item.Get
	}
	if op == nil {
		return
	}
	schema := api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[T](), true, "")
	for status, res := range op.Responses {
		if strings.HasPrefix(status, "2") {
			res.Content = map[string]*huma.MediaType{"application/json": {Schema: schema}}
		}
	}
}

func ok[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}
