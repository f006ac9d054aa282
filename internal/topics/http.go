package topics

import (
	"context"
	"maps"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/httpx"
)

// Inputs of the routes. Create, update and upload routes read their body
// themselves (rawBody), so they document it by hand (describeForm).

type idInput struct {
	ID int64 `path:"id" doc:"Topic id."`
}

type listInput struct {
	httpx.PageQuery
	LessonID      int64  `query:"lesson_id" doc:"Only topics of this lesson."`
	CourseID      int64  `query:"course_id" doc:"Only topics of this course."`
	TopicableType string `query:"topicable_type" maxLength:"512" doc:"Only topics of this content class."`
	Title         string `query:"title" maxLength:"255" doc:"Part of the title, any case."`
}

type createInput struct {
	Upload rawBody
}

type updateInput struct {
	ID     int64 `path:"id" doc:"Topic id."`
	Upload rawBody
}

type formUpdateInput struct {
	Topic  int64 `path:"id" doc:"Topic id."`
	Upload rawBody
}

type cloneInput struct {
	ID   int64 `path:"id" doc:"Topic id."`
	Body *struct {
		LessonID *int64 `json:"lesson_id,omitempty" doc:"Lesson to clone into, of a course the caller may edit; default: the topic's own lesson."`
	} `required:"false"`
}

type resourcesInput struct {
	TopicID int64 `path:"topic_id" doc:"Topic id."`
}

type addResourceInput struct {
	TopicID int64 `path:"topic_id" doc:"Topic id."`
	Upload  rawBody
}

type resourceInput struct {
	TopicID    int64 `path:"topic_id" doc:"Topic id."`
	ResourceID int64 `path:"resource_id" doc:"Resource id."`
}

type renameInput struct {
	TopicID    int64 `path:"topic_id" doc:"Topic id."`
	ResourceID int64 `path:"resource_id" doc:"Resource id."`
	Body       struct {
		Name string `json:"name" minLength:"1" maxLength:"255" doc:"Name the attachment is shown with."`
	}
}

type submitInput struct {
	Topic  int64 `path:"topic" doc:"Topic id."`
	Upload rawBody
}

type submissionsInput struct {
	httpx.PageQuery
	Topic int64 `path:"topic" doc:"Topic id."`
}

type downloadInput struct {
	Topic int64 `path:"topic" doc:"Topic id."`
	ID    int64 `path:"id" doc:"Submission id."`
}

type downloadOutput struct {
	Body func(huma.Context)
}

// route is a topic route; scope is what a scoped token needs:
// courses:read for reads, courses:write for writes, and progress:write
// for a learner's submission.
func route(method, path string, scope httpx.Scope, summary string) httpx.Route {
	return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Tags: []string{"topics"}, Who: httpx.User}
}

// Routes registers the topic routes in the order of the spec's Topics
// table, then the project submission routes.
func Routes(api huma.API, s *Service) {
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics", "courses:read", "List topics: all for admins, those of authored courses for tutors; filters lesson_id, course_id, topicable_type, title"),
		func(ctx context.Context, in *listInput) (*httpx.PageResponse[View], error) {
			list, total, err := s.List(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), ListQuery{LessonID: in.LessonID,
				CourseID: in.CourseID, TopicableType: in.TopicableType, Title: in.Title, Offset: in.Offset(), Limit: in.PerPage})
			if err != nil {
				return nil, err
			}
			return httpx.Paged(list, in.PageQuery, total)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{id}", "courses:read", "One topic with its content and attachments"),
		func(ctx context.Context, in *idInput) (*httpx.Response[View], error) {
			return answer(s.Get(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/types", "courses:read", "Registered topic content classes with their kinds"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]TypeView], error) {
			return answer(s.Types(httpx.PrincipalFrom(ctx)))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/create", "courses:read", "Form data of a topic create: content classes and defaults"),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[FormView], error) {
			return answer(s.CreateForm(httpx.PrincipalFrom(ctx)))
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{id}/edit", "courses:read", "Form data of a topic edit: the topic, content classes and defaults"),
		func(ctx context.Context, in *idInput) (*httpx.Response[FormView], error) {
			return answer(s.EditForm(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID))
		})
	create := route(http.MethodPost, "/api/admin/topics", "courses:write", "Create a topic of any registered class in a lesson of an editable course (JSON or multipart form data with the file)")
	create.Status = http.StatusCreated
	httpx.Handle(api, create, func(ctx context.Context, in *createInput) (*httpx.Response[View], error) {
		v, err := s.Create(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Upload)
		if err != nil {
			return nil, err
		}
		return httpx.Created(v, "Topic created.")
	})
	describeTopicForm(api, s.Kinds, http.MethodPost, create.Path, true)
	update := func(ctx context.Context, id int64, body rawBody) (*httpx.Response[View], error) {
		v, err := s.Update(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), id, body)
		if err != nil {
			return nil, err
		}
		return httpx.OKMessage(v, "Topic updated.")
	}
	for _, method := range []string{http.MethodPut, http.MethodPatch} {
		httpx.Handle(api, route(method, "/api/admin/topics/{id}", "courses:write", "Update a topic; fields not sent keep their values (JSON or multipart form data)"),
			func(ctx context.Context, in *updateInput) (*httpx.Response[View], error) {
				return update(ctx, in.ID, in.Upload)
			})
		describeTopicForm(api, s.Kinds, method, "/api/admin/topics/{id}", false)
	}
	httpx.Handle(api, route(http.MethodPost, "/api/admin/topics/{id}", "courses:write", "Update a topic with form data (multipart, for new files)"),
		func(ctx context.Context, in *formUpdateInput) (*httpx.Response[View], error) {
			return update(ctx, in.Topic, in.Upload)
		})
	describeTopicForm(api, s.Kinds, http.MethodPost, "/api/admin/topics/{id}", false)
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/topics/{id}", "courses:write", "Delete a topic with its files (idempotent)"),
		func(ctx context.Context, in *idInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.Delete(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Topic deleted.")
		})
	clone := route(http.MethodPost, "/api/admin/topics/{id}/clone", "courses:write", "Clone a topic with copies of its content and attachments, after the last topic of its lesson or of lesson_id")
	clone.Status = http.StatusCreated
	httpx.Handle(api, clone, func(ctx context.Context, in *cloneInput) (*httpx.Response[View], error) {
		var lessonID *int64
		if in.Body != nil {
			lessonID = in.Body.LessonID
		}
		v, err := s.Clone(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID, lessonID)
		if err != nil {
			return nil, err
		}
		return httpx.Created(v, "Topic cloned.")
	})
	resourceRoutes(api, s)
	projectRoutes(api, s)
}

func resourceRoutes(api huma.API, s *Service) {
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{topic_id}/resources", "courses:read", "List a topic's attachments"),
		func(ctx context.Context, in *resourcesInput) (*httpx.Response[[]ResourceView], error) {
			return answer(s.Resources(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID))
		})
	add := func(ctx context.Context, in *addResourceInput) (*httpx.Response[ResourceView], error) {
		v, err := s.AddResource(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.Upload)
		if err != nil {
			return nil, err
		}
		return httpx.Created(v, "Resource added.")
	}
	// The spec's path ends in a slash; both spellings are served. "{$}"
	// keeps the ServeMux from taking the slash as a whole subtree.
	const slashed = "/api/admin/topics/{topic_id}/resources/"
	r := route(http.MethodPost, slashed+"{$}", "courses:write", "Attach a file to a topic: multipart field resource, at most 100 MiB; optional field name")
	r.Status = http.StatusCreated
	httpx.Handle(api, r, add)
	httpx.DocumentAs(api, http.MethodPost, r.Path, slashed, "post-api-admin-topics-topic-id-resources-slash")
	describeUpload(api, http.MethodPost, slashed, "resource", "Any file of at most 100 MiB.", true)
	r.Path = "/api/admin/topics/{topic_id}/resources"
	r.Summary = "Attach a file to a topic (the spec's path without its final slash)"
	httpx.Handle(api, r, add)
	describeUpload(api, http.MethodPost, r.Path, "resource", "Any file of at most 100 MiB.", true)
	httpx.Handle(api, route(http.MethodPatch, "/api/admin/topics/{topic_id}/resources/{resource_id}", "courses:write", "Rename a topic's attachment"),
		func(ctx context.Context, in *renameInput) (*httpx.Response[ResourceView], error) {
			return answer(s.RenameResource(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.ResourceID, in.Body.Name))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/topics/{topic_id}/resources/{resource_id}", "courses:write", "Delete a topic's attachment (idempotent)"),
		func(ctx context.Context, in *resourceInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeleteResource(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.ResourceID); err != nil {
				return nil, err
			}
			return httpx.Done("Resource deleted.")
		})
}

func projectRoutes(api huma.API, s *Service) {
	submit := route(http.MethodPost, "/api/topics/{topic}/project", "progress:write", "Submit work to a project topic: multipart field file, of a type and size the topic accepts")
	submit.Status = http.StatusCreated
	httpx.Handle(api, submit, func(ctx context.Context, in *submitInput) (*httpx.Response[SubmissionView], error) {
		v, err := s.Submit(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.Upload)
		if err != nil {
			return nil, err
		}
		return httpx.Created(v, "Project submitted.")
	})
	describeUpload(api, http.MethodPost, submit.Path, "file", "A file of a type and size the project accepts (see its accept and max_size).", false)
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{topic}/project/submissions", "courses:read", "List a project topic's submissions with their users, newest first"),
		func(ctx context.Context, in *submissionsInput) (*httpx.PageResponse[SubmissionView], error) {
			list, total, err := s.Submissions(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.Offset(), in.PerPage)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(list, in.PageQuery, total)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{topic}/project/submissions/{id}/download", "courses:read", "Download a submission's file"),
		func(ctx context.Context, in *downloadInput) (*downloadOutput, error) {
			rc, info, err := s.SubmissionFile(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.ID)
			if err != nil {
				return nil, err
			}
			return &downloadOutput{Body: func(hc huma.Context) {
				defer rc.Close()
				r, w := humago.Unwrap(hc)
				files.Write(w, r, rc, info, "private, no-store", true)
			}}, nil
		})
}

func answer[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}

// describeTopicForm documents the body of a create or update, which the
// handler reads itself: JSON, or multipart form data with the file.
func describeTopicForm(api huma.API, kinds *content.Registry, method, path string, create bool) {
	op := operation(api, method, path)
	if op == nil {
		return
	}
	one := 1.0
	props := func(file bool) map[string]*huma.Schema {
		str := func(doc string) *huma.Schema { return &huma.Schema{Type: huma.TypeString, Description: doc} }
		boolean := func(doc string) *huma.Schema { return &huma.Schema{Type: huma.TypeBoolean, Description: doc} }
		integer := func(doc string) *huma.Schema { return &huma.Schema{Type: huma.TypeInteger, Description: doc} }
		p := map[string]*huma.Schema{
			"lesson":       integer("Id of the lesson; its course must be editable by the caller."),
			"title":        {Type: huma.TypeString, MaxLength: intPtr(maxTitle), Description: "Topic title."},
			"order":        integer("Position in the lesson; default: after the last topic."),
			"summary":      str("Short summary."),
			"preview":      boolean("Visible without access to the course."),
			"active":       boolean("Visible to learners; default true."),
			"can_skip":     boolean("Learners may skip the topic (canSkip is accepted too)."),
			"duration":     str("Free-text estimated duration."),
			"topicable":    str("Content class, one of GET /api/admin/topics/types."),
			"value":        {Description: "Content value of a generic create: any JSON (in form data, JSON text or plain text)."},
			"html":         str("Rich text: HTML, sanitised."),
			"markdown":     str("Rich text or project instructions: Markdown, rendered to sanitised HTML."),
			"videoSiteUrl": str("Video: URL of a video on a video site, instead of a file."),
			"url":          str("Embedded URL: page URL of an oEmbed provider."),
			"instructions": str("Project: instructions, Markdown."),
			"accept":       str("Project: accepted extensions, a JSON array or separated by commas."),
			"max_size":     integer("Project: largest submission in bytes."),
			"questions": {Type: huma.TypeArray, Description: "Quiz: the questions, each {prompt, options: [{text, correct}], score?} " +
				"(converted to GIFT) or {gift, score?} (one question in GIFT, passed through); score is points, default 1.",
				Items: &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{
					"prompt": str("Multiple-choice question text."),
					"options": {Type: huma.TypeArray, Items: &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{
						"text": str("Option text."), "correct": boolean("A right option.")}}},
					"gift":  str("One question in Moodle's GIFT format."),
					"score": {Type: huma.TypeNumber, Description: "Points for a fully right answer (0 to 1000); default 1."},
					"id":    integer("Keeps an existing question's id on update."),
				}}},
			"maxAttempts":  integer("Quiz: attempts per learner, 0 for no limit."),
			"minPassScore": {Type: huma.TypeNumber, Description: "Quiz: points an attempt needs to pass; without it any ended attempt completes the topic."},
			"review": {Type: huma.TypeString, Enum: []any{"after_end", "after_answer", "never"}, Description: "Quiz: when learners see the review " +
				"(right answers, feedback, points) of a question: after_end (default) once the attempt ended; after_answer as soon as an answer " +
				"is saved, which makes that answer final; never (learners see only the score and the pass). An attempt keeps the setting it started with."},
		}
		for _, k := range kinds.Kinds() {
			if d, ok := k.(content.Described); ok {
				maps.Copy(p, d.Fields())
			}
		}
		// The package field is several kinds': an id in either body, or in a
		// multipart form the package itself.
		p["package"] = &huma.Schema{Type: huma.TypeInteger, Minimum: &one,
			Description: "The id of a package uploaded beforehand: SCORM (POST /api/admin/scorm/upload), cmi5 (POST /api/admin/cmi5) " +
				"or interactive (POST /api/admin/interactive, or a .zip in the file field)."}
		if file {
			p["package"] = &huma.Schema{Description: "The package file itself (SCORM .zip; cmi5 .zip or cmi5.xml; H5P .h5p, " +
				"which H5P topics need unless content_id names existing content), or the id of a package uploaded beforehand: " +
				"SCORM (POST /api/admin/scorm/upload), cmi5 (POST /api/admin/cmi5) or interactive (POST /api/admin/interactive)."}
		}
		if file {
			p["file"] = &huma.Schema{Type: huma.TypeString, Format: "binary",
				Description: "PDF, image, audio or video file; its type follows the extension and must match the content (see GET /api/admin/topics/types for extensions and caps)."}
		}
		return p
	}
	var required []string
	if create {
		required = []string{"lesson", "title", "topicable"}
	}
	op.RequestBody = &huma.RequestBody{Required: create, Content: map[string]*huma.MediaType{
		"application/json": {Schema: &huma.Schema{Type: huma.TypeObject, Required: required, Properties: props(false),
			AdditionalProperties: true, Description: "Type-specific fields beyond those listed are passed to the content kind."}},
		"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Required: required, Properties: props(true),
			AdditionalProperties: true}},
	}}
}

// describeUpload documents a multipart body with one file field.
func describeUpload(api huma.API, method, path, field, doc string, withName bool) {
	op := operation(api, method, path)
	if op == nil {
		return
	}
	props := map[string]*huma.Schema{field: {Type: huma.TypeString, Format: "binary", Description: doc}}
	if withName {
		props["name"] = &huma.Schema{Type: huma.TypeString, MaxLength: intPtr(255), Description: "Name to show; default: the file's name."}
	}
	op.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Required: []string{field}, Properties: props}},
	}}
}

func operation(api huma.API, method, path string) *huma.Operation {
	item := api.OpenAPI().Paths[path]
	if item == nil {
		return nil
	}
	switch method {
	case http.MethodPost:
		return item.Post
	case http.MethodPut:
		return item.Put
	case http.MethodPatch:
		return item.Patch
	}
	return nil
}

func intPtr(n int) *int { return &n }
