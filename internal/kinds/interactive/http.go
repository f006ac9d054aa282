package interactive

import (
	"context"
	"net/http"
	"reflect"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/topics"
)

type uploadInput struct {
	Upload topics.Upload
}

type packageInput struct {
	ID int64 `path:"id" doc:"Package id."`
}

type playInput struct {
	Grant string `path:"grant" maxLength:"128" doc:"The signed grant of the topic's play_url."`
	Path  string `path:"path" doc:"Path of a file of the app; empty: redirect to the entry page."`
}

type startInput struct {
	Grant string `path:"grant" maxLength:"128" doc:"The signed grant of the topic's play_url."`
}

type playOutput struct {
	Body func(huma.Context)
}

type progressInput struct {
	Topic int64 `path:"topic" doc:"Interactive topic id."`
	Body  AppProgressInput
}

type reportInput struct {
	Topic     int64 `query:"topic" minimum:"1" doc:"The topic whose app was played (the policy's report-uri names it)."`
	CSPReport reportBody
}

type reportsInput struct {
	httpx.PageQuery
	TopicID int64 `path:"topic_id" doc:"Interactive topic id."`
}

// Protocol documents the postMessage protocol between an app and the page.
const Protocol = "The app posts to window.parent (target origin '*': the page's origin is not the app's to know) " +
	"{type: 'lms-interactive:step', step: '<step id>'} when the learner reaches a step, {type: 'lms-interactive:complete'} when it is done, " +
	"and {type: 'lms-interactive:score', score: <0..100>}; an inline app may post {type: 'lms-interactive:resize', height: <pixels>}, the height of its content, " +
	"which the page gives its frame within 240 to 2000 px (the bounds of the topic's height). Once the frame has loaded and the page's open report is answered, the page sends the app " +
	"{type: 'lms-interactive:init', startStep: '<step id>', endStep: '<step id>', steps: [{id, title}]}: the played range's steps in order " +
	"(the progress answer's range) with its first and last. The page accepts messages only from the app's frame window (whose origin is opaque, 'null'), drops any " +
	"of another shape, and forwards them to POST /api/interactive/progress/{topic} (event step, complete or score; open when shown). " +
	"The server decides completion by the topic's rule."

// route is an interactive route; scope is what a scoped token needs:
// packages are course material; an app's reports are the learner's
// progress; played files and CSP reports carry no authority of a token
// (signed links; browsers' reports), so any token may call them.
func route(method, path string, scope httpx.Scope, summary, description string, who httpx.Who, errors ...int) httpx.Route {
	return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Description: description, Tags: []string{"interactive"},
		Who: who, Errors: errors}
}

// Routes registers the package upload, the player, the progress route and
// the CSP report routes, and publishes the manifest's schema.
func Routes(api huma.API, s *Service) {
	api.OpenAPI().Components.Schemas.Schema(reflect.TypeOf(Manifest{}), true, "")

	up := route(http.MethodPost, "/api/admin/interactive", "courses:write", "Upload an interactive package (a .zip web app), or a new version of one",
		"Multipart form data: file, a .zip with lms-interactive.json at its root (schema Manifest in this description: entry, steps, network), "+
			"and optionally package, the id of a package to add the next version to (versions count from 1 and are all kept; topics pinned "+
			"to a version keep playing it, topics with followLatest play the new one). The archive is checked before anything is extracted: "+
			"no absolute or .. paths, no links, at most 5000 entries, 64 MiB per file, 256 MiB in all; entries with a path segment "+
			"starting with . or _ are left out. Problems answer 422 keyed file, manifest or manifest.<field> (manifest.steps.1.id); "+
			"a package too large answers 413. Tutors and admins upload packages; a new version is for the package's uploader and admins. "+
			"Refused (403) while lms_interactive.enabled is off.", httpx.User, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity)
	up.Status, up.MaxBody = http.StatusCreated, MaxPackage+1<<20
	httpx.Handle(api, up, func(ctx context.Context, in *uploadInput) (*httpx.Response[PackageView], error) {
		v, err := s.Upload(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Upload)
		if err != nil {
			return nil, err
		}
		return httpx.Created(v, "Package uploaded.")
	})
	describeUpload(api, up.Path)
	httpx.Handle(api, route(http.MethodGet, "/api/admin/interactive/{id}", "courses:read", "One interactive package with its versions and current manifest",
		"For tutors and admins.", httpx.User),
		func(ctx context.Context, in *packageInput) (*httpx.Response[PackageView], error) {
			v, err := s.View(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return httpx.OK(v)
		})

	const play = "/api/interactive/play/{grant}/{path...}"
	serve := func(ctx context.Context, grant, file string) (*playOutput, error) {
		t := httpx.TenantFrom(ctx)
		// Everything that may fail with an envelope is checked before the
		// body is written.
		pl, origins, err := s.Open(ctx, t, grant)
		if err != nil {
			return nil, err
		}
		return &playOutput{Body: func(hc huma.Context) {
			r, w := humago.Unwrap(hc)
			if err := s.Serve(ctx, t, pl, origins, file, w, r); err != nil {
				httpx.WriteError(w, r, err)
			}
		}}, nil
	}
	httpx.Handle(api, route(http.MethodGet, play, httpx.AnyToken, "Serve a file of an interactive topic's app",
		"The grant in the path is signed and expires (the topic's play_url carries it, so the app's relative links do too). "+
			"Every answer carries the sandboxing Content-Security-Policy: sandbox without allow-same-origin (an opaque origin: no cookies, "+
			"storage or credentials of ours), connect-src with only the network origins the topic accepted and the tenant allows "+
			"(lms_interactive.allow_network), else 'none', and report-uri /api/csp-report?topic=<id>. 404 while lms_interactive.enabled is off. "+Protocol,
		httpx.Anyone),
		func(ctx context.Context, in *playInput) (*playOutput, error) { return serve(ctx, in.Grant, in.Path) })
	httpx.DocumentAs(api, http.MethodGet, play, "/api/interactive/play/{grant}/{path}", "")
	const start = "/api/interactive/play/{grant}/{$}"
	httpx.Handle(api, route(http.MethodGet, start, httpx.AnyToken, "Start an interactive topic's app (the topic's play_url)",
		"Redirects to the manifest's entry page of the version the topic plays, under the same grant; see the route of its files.", httpx.Anyone),
		func(ctx context.Context, in *startInput) (*playOutput, error) { return serve(ctx, in.Grant, "") })
	httpx.DocumentAs(api, http.MethodGet, start, "/api/interactive/play/{grant}/", "get-api-interactive-play-grant-start")

	pr := route(http.MethodPost, "/api/interactive/progress/{topic}", "progress:write", "Record what an interactive topic's app reported of the caller's activity",
		"The learner's page forwards the app's messages (see below). The server keeps the steps reached, whether the app said it is complete "+
			"and the best score, and completes the topic by its rule: on_open on any report, on_range_end once the range's last step "+
			"(endStep) was reached, on_complete once the app said so, on_score once a score reached passScore. 120 per minute per user. "+Protocol,
		httpx.User, http.StatusUnprocessableEntity)
	pr.Limit, pr.MaxBody = &httpx.RateLimit{Limit: 120, Per: httpx.PerUser}, 4<<10
	httpx.Handle(api, pr, func(ctx context.Context, in *progressInput) (*httpx.Response[AppProgressView], error) {
		v, err := s.Record(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, in.Body)
		if err != nil {
			return nil, err
		}
		return httpx.OK(v)
	})

	rep := route(http.MethodPost, "/api/csp-report", httpx.AnyToken, "Receive a Content-Security-Policy violation report of a played app or LiaScript course",
		"Browsers send it (report-uri of the player's policy) as application/csp-report or application/reports+json, without credentials. "+
			"Reports naming an interactive or LiaScript topic are stored for the tenant, the newest 1000 kept, without query strings; 60 per minute per IP. "+
			"A report naming no such topic answers 404 before it counts against that limit.",
		httpx.Anyone, http.StatusUnprocessableEntity)
	rep.Limit, rep.MaxBody = &httpx.RateLimit{Limit: 60, Per: httpx.PerIP, Admit: s.Reportable}, maxReportBody+1
	httpx.Handle(api, rep, func(ctx context.Context, in *reportInput) (*httpx.Response[*httpx.Empty], error) {
		if err := s.AddReport(ctx, httpx.TenantFrom(ctx), in.Topic, in.CSPReport.r); err != nil {
			return nil, err
		}
		return httpx.Done("CSPReport received.")
	})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/topics/{topic_id}/csp-reports", "courses:read", "List the CSP violation reports of an interactive topic's app or a LiaScript topic's player, newest first",
		"For those who may read the topic.", httpx.User),
		func(ctx context.Context, in *reportsInput) (*httpx.PageResponse[CSPReport], error) {
			list, total, err := s.Reports(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.TopicID, in.Offset(), in.PerPage)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(list, in.PageQuery, total)
		})
}

// describeUpload documents the upload's multipart body.
func describeUpload(api huma.API, path string) {
	item := api.OpenAPI().Paths[path]
	if item == nil || item.Post == nil {
		return
	}
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Required: []string{"file"}, Properties: map[string]*huma.Schema{
			"file":    {Type: huma.TypeString, Format: "binary", Description: "The .zip package, with lms-interactive.json (schema Manifest) at its root."},
			"package": {Type: huma.TypeInteger, Description: "Id of a package this upload is the next version of."},
		}}},
	}}
}
