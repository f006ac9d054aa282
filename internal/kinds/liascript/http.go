package liascript

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
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

type playInput struct {
	Grant string `path:"grant" maxLength:"128" doc:"The signed grant of a play_url."`
	Path  string `path:"path" doc:"A file of the course by its relative path (course.md is its Markdown)."`
}

type pageInput struct {
	Grant string `path:"grant" maxLength:"128" doc:"The signed grant of a play_url."`
}

type runtimeInput struct {
	Version string `path:"version" doc:"The runtime's version (the page links the installed one; any is served)."`
	File    string `path:"file" doc:"A file of LiaScript's runtime, or lms-liascript.js."`
}

type fileOutput struct {
	Body func(huma.Context)
}

type previewInput struct {
	ID int64 `path:"id" doc:"LiaScript course id (from POST /api/admin/liascript or a topic's course)."`
}

// route is a LiaScript route; scope is what a scoped token needs:
// LiaScript courses are course material (a preview renders without
// saving: courses:read); their progress is the learner's; the player's
// files carry their own authority (player links), so any token may call
// them.
func route(method, path string, scope httpx.Scope, summary, description string, errors ...int) httpx.Route {
	return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Description: description, Tags: []string{"liascript"},
		Who: httpx.User, Errors: errors}
}

// Bridge documents the player page's messages to the page that frames it.
const Bridge = "The player page posts to its parent (target origin '*': its own origin is opaque) {type: 'lms-liascript:visit', section: i} " +
	"when a section is shown and {type: 'lms-liascript:quiz', quiz: i, solved: true} when a quiz is solved, indexes from 0 in document " +
	"order as in the course's structure. The parent accepts messages only from the player's frame window, checks their shapes and sends " +
	"them to POST /api/liascript/progress/{topic}."

// file answers with a body written by serve, once everything that may
// fail with an envelope has been checked.
func file(serve func(w http.ResponseWriter, r *http.Request) error) *fileOutput {
	return &fileOutput{Body: func(hc huma.Context) {
		r, w := humago.Unwrap(hc)
		if err := serve(w, r); err != nil {
			httpx.WriteError(w, r, err)
		}
	}}
}

// Routes registers the course upload, the progress route and the preview.
func Routes(api huma.API, s *Service) {
	up := route(http.MethodPost, "/api/admin/liascript", "courses:write", "Upload a LiaScript course",
		"JSON or form data with markdown (the course's Markdown), or multipart with file: an .md, or a .zip holding the course's .md "+
			"at its root (the only one, or course.md or README.md) with the assets it links by relative path. The header comment "+
			"(author, email, version, language, narrator, logo, comment, import, script) and the structure (sections, quizzes) are parsed "+
			"and stored. Imports and scripts are never fetched by the server: the learner's browser loads them, as far as the player page's "+
			"Content-Security-Policy allows. Markdown up to 4 MiB, archives up to 128 MiB (checked before extraction). For tutors and admins.",
		http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity)
	up.Status, up.MaxBody = http.StatusCreated, MaxUpload+1<<20
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

	pr := route(http.MethodPost, "/api/liascript/progress/{topic}", "progress:write", "Record section visits and quiz results in a LiaScript topic",
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

	const play = "/api/liascript/play/{grant}/{path...}"
	open := func(ctx context.Context, grant, path string) (*fileOutput, error) {
		t := httpx.TenantFrom(ctx)
		pl, err := s.Open(ctx, t, grant)
		if err != nil {
			return nil, err
		}
		return file(func(w http.ResponseWriter, r *http.Request) error { return s.Serve(ctx, t, pl, path, w, r) }), nil
	}
	pf := route(http.MethodGet, play, httpx.AnyToken, "Serve a file of a LiaScript course under its player link",
		"The grant in the path is signed and expires (a topic's or a preview's play_url carries it). course.md is the course's Markdown; "+
			"the files of an uploaded .zip are served by their relative paths, so the links of the course resolve. Every answer carries the "+
			"player's Content-Security-Policy (see the player page).")
	pf.Who = httpx.Anyone
	httpx.Handle(api, pf, func(ctx context.Context, in *playInput) (*fileOutput, error) { return open(ctx, in.Grant, in.Path) })
	httpx.DocumentAs(api, http.MethodGet, play, "/api/liascript/play/{grant}/{path}", "")
	const page = "/api/liascript/play/{grant}/{$}"
	pp := route(http.MethodGet, page, httpx.AnyToken, "The player page of a LiaScript topic or preview (its play_url)",
		"LiaScript's own runtime (the npm package @liascript/editor, pinned), fed the course's Markdown from this link, with the LMS's "+
			"bridge script. The page runs sandboxed with an opaque origin (Content-Security-Policy sandbox without allow-same-origin): "+
			"it reads no cookie, storage or credentials of ours. The course's imports and scripts are loaded by the browser over https: "+
			"(the server never fetches them); a topic's violations are reported to /api/csp-report?topic=<id>. "+Bridge)
	pp.Who = httpx.Anyone
	httpx.Handle(api, pp, func(ctx context.Context, in *pageInput) (*fileOutput, error) { return open(ctx, in.Grant, "") })
	httpx.DocumentAs(api, http.MethodGet, page, "/api/liascript/play/{grant}/", "get-api-liascript-play-grant-page")

	rt := route(http.MethodGet, RuntimePath+"{version}/{file...}", httpx.AnyToken, "Serve a file of LiaScript's runtime",
		"The files of the pinned npm package @liascript/editor (installed by make build), and lms-liascript.js, the player's bridge "+
			"script. Public, the same for every tenant, served to any origin (the sandboxed player loads them from an opaque origin). "+
			"503 while the runtime is not installed.")
	rt.Who = httpx.Anyone
	httpx.Handle(api, rt, func(ctx context.Context, in *runtimeInput) (*fileOutput, error) {
		return file(func(w http.ResponseWriter, r *http.Request) error { return s.serveRuntime(in.File, w, r) }), nil
	})
	httpx.DocumentAs(api, http.MethodGet, RuntimePath+"{version}/{file...}", RuntimePath+"{version}/{file}", "")

	pv := route(http.MethodPost, "/api/liascript/{id}/preview", "courses:read", "Preview a LiaScript course",
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
