package liascript

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	kind "github.com/lms-platform/lms/internal/content/liascript"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/topics"
)

type uploadInput struct {
	Upload topics.Upload
}

type progressInput struct {
	Topic int64 `path:"topic" doc:"LiaScript topic id."`
	Body  LiaProgressInput
}

type previewInput struct {
	ID int64 `path:"id" doc:"LiaScript course id (from POST /api/admin/liascript or a topic's course)."`
}

func route(method, path, summary, description string, errors ...int) httpx.Route {
	return httpx.Route{Method: method, Path: path, Summary: summary, Description: description, Tags: []string{"liascript"},
		Who: httpx.User, Errors: errors}
}

// Routes registers the course upload, the progress route and the preview.
func Routes(api huma.API, s *Service) {
	up := route(http.MethodPost, "/api/admin/liascript", "Upload a LiaScript course",
		"JSON or form data with markdown (the course's Markdown), or multipart with file: an .md, or a .zip holding the course's .md "+
			"at its root (the only one, or course.md or README.md) with the assets it links by relative path. The header comment "+
			"(author, email, version, language, narrator, logo, comment, import, script) and the structure (sections, quizzes) are parsed "+
			"and stored. Imports and scripts are never fetched by the server: the learner's browser loads them, as far as the player page's "+
			"Content-Security-Policy allows. Markdown up to 4 MiB, archives up to 128 MiB (checked before extraction). For tutors and admins.",
		http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity)
	up.Status, up.MaxBody = http.StatusCreated, kind.MaxUpload+1<<20
	httpx.Handle(api, up, func(ctx context.Context, in *uploadInput) (*httpx.Response[LiaCourseView], error) {
		v, err := s.Upload(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Upload)
		if err != nil {
			return nil, err
		}
		return httpx.Created(v, "Course uploaded.")
	})
	if item := api.OpenAPI().Paths[up.Path]; item != nil && item.Post != nil {
		str := func(doc string) *huma.Schema { return &huma.Schema{Type: huma.TypeString, Description: doc} }
		item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
			"application/json": {Schema: &huma.Schema{Type: huma.TypeObject, Required: []string{"markdown"},
				Properties: map[string]*huma.Schema{"markdown": str("The course's Markdown.")}}},
			"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Properties: map[string]*huma.Schema{
				"markdown": str("The course's Markdown."),
				"file":     {Type: huma.TypeString, Format: "binary", Description: "An .md, or a .zip with the .md and its assets."}}}},
		}}
	}

	pr := route(http.MethodPost, "/api/liascript/progress/{topic}", "Record section visits and quiz results in a LiaScript topic",
		"Indexes count from 0 in document order (the topic's structure lists the sections and the number of quizzes). Visits and solved "+
			"quizzes add up; the topic completes by its rule: all (every section visited and every quiz solved), sections, or quizzes. "+
			"120 per minute per user.", http.StatusUnprocessableEntity)
	pr.Limit, pr.MaxBody = &httpx.RateLimit{Limit: 120, Per: httpx.PerUserOrIP}, 64<<10
	httpx.Handle(api, pr, func(ctx context.Context, in *progressInput) (*httpx.Response[LiaProgressView], error) {
		v, err := s.Record(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.Body)
		if err != nil {
			return nil, err
		}
		return httpx.OK(v)
	})

	pv := route(http.MethodPost, "/api/liascript/{id}/preview", "Preview a LiaScript course",
		"For tutors and admins: the course's structure and a signed link to its Markdown for the player, recording no progress. 60 per minute per IP.")
	pv.Limit = &httpx.RateLimit{Limit: 60, Per: httpx.PerIP}
	httpx.Handle(api, pv, func(ctx context.Context, in *previewInput) (*httpx.Response[LiaCourseView], error) {
		v, err := s.Preview(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return httpx.OK(v)
	})
}
