package scorm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"strconv"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/content"
	"github.com/lms-platform/lms/internal/httpx"
)

// uploadBody is the raw multipart body of an upload: it is read only
// after the caller is known to be allowed, and stops at the cap.
type uploadBody struct {
	contentType string
	r           io.Reader
}

func (b *uploadBody) Resolve(ctx huma.Context) []error {
	b.contentType = ctx.Header("Content-Type")
	b.r = ctx.BodyReader()
	return nil
}

type uploadInput struct {
	Upload uploadBody
}

type packageInput struct {
	Package int64 `path:"package" doc:"Package id (from POST /api/admin/scorm/upload)."`
}

type tracksInput struct {
	Course int64 `path:"course" doc:"Course id."`
	UserID int64 `query:"user_id" minimum:"0" doc:"Another learner's tracks: for admins and the course's tutors."`
}

type launchInput struct {
	SCO  int64 `path:"sco" doc:"SCO id (from the topic's sco_id, or a package's scos)."`
	Body struct {
		TopicID int64 `json:"topic_id" minimum:"1" doc:"The SCORM topic the SCO is played in; its progress records the SCO."`
	}
}

type tokenInput struct {
	SCO   int64  `path:"sco" doc:"SCO id; the tracking token must be for it."`
	Token string `header:"X-Lms-Tracking-Token" hidden:"true"`
}

// commitInput reads the body itself (CommitInput, see readCommit): huma
// would name an unexpected member under the remnants of the previous one
// when the members' names hold dots, as CMI elements do.
type commitInput struct {
	SCO     int64  `path:"sco" doc:"SCO id; the tracking token must be for it."`
	Token   string `header:"X-Lms-Tracking-Token" hidden:"true"`
	RawBody []byte
}

type navigateInput struct {
	SCO   int64  `path:"sco" doc:"SCO id; the tracking token must be for it."`
	Token string `header:"X-Lms-Tracking-Token" hidden:"true"`
	Body  struct {
		Action string `json:"action" enum:"continue,previous,choice,exit" doc:"Flow to the next or previous SCO, a choice from the table of contents, or exit (the SCO terminated without a request)."`
		Target string `json:"target,omitempty" maxLength:"4000" doc:"The identifier of the chosen item (choice)."`
	}
}

type playerInput struct {
	SCO     int64 `path:"sco" doc:"SCO id."`
	RawBody []byte
}

type contentInput struct {
	Package   int64  `path:"package" doc:"Package id."`
	Expires   int64  `path:"expires" doc:"Unix time the link expires at."`
	Signature string `path:"signature" maxLength:"128" doc:"HMAC of the package and expiry."`
	Path      string `path:"path" doc:"File path in the package."`
}

type runtimeInput struct {
	File string `path:"file" enum:"scorm-again.min.js,player.js" doc:"Runtime script."`
}

type rawOutput struct {
	Body func(huma.Context)
}

// route is a SCORM route; scope is what a scoped token needs: uploads
// author courses; launches and track lists are the learner's progress;
// the tracking routes, the player page and the package files carry their
// own authority (tracking token, signed links), so any token may call
// them, as signed file links.
func route(method, path string, scope httpx.Scope, summary, description string, who httpx.Who, errs ...int) httpx.Route {
	return httpx.Route{Method: method, Path: path, Scope: scope, Summary: summary, Description: description, Tags: []string{"scorm"},
		Who: who, Errors: errs}
}

// Routes registers the SCORM routes: the admin upload, the learner's
// tracks and launch, then the tracking routes that only a tracking token
// opens, the player page and the package files.
func Routes(api huma.API, s *Service) {
	up := route(http.MethodPost, "/api/admin/scorm/upload", "courses:write", "Upload a SCORM package",
		"Multipart form data, field package: a .zip with imsmanifest.xml at its root (SCORM 1.2, or 2004 2nd, 3rd or 4th edition). "+
			"The archive is checked before anything is extracted (no absolute or .. paths, no links, at most 20,000 entries and 2 GiB unpacked, "+
			"no zip bombs) and the manifest is validated: every problem answers 422 with a message naming it (errors.package lists them all). "+
			"Tolerated defects (an item naming a missing resource, listed files absent from the package) are answered as warnings. "+
			"Answers the package id, version, title and its SCOs (id, identifier, title, launch URL): a topic is then created with "+
			"package (this id) and sco. For admins and tutors.", httpx.User, http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge)
	up.Status = http.StatusCreated
	up.MaxBody = MaxUpload + 1<<20
	httpx.Handle(api, up, func(ctx context.Context, in *uploadInput) (*httpx.Response[ScormPackage], error) {
		p := httpx.PrincipalFrom(ctx)
		if !CanUpload(p) {
			return nil, errUnauthorized
		}
		f, done, err := spoolPackage(in.Upload)
		if err != nil {
			return nil, err
		}
		defer done()
		pkg, err := s.Upload(ctx, httpx.TenantFrom(ctx), p, f)
		if err != nil {
			return nil, err
		}
		return httpx.Created(pkg, "Package uploaded.")
	})
	describeUpload(api)
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/scorm/{package}", "courses:write", "Delete an uploaded SCORM package no topic plays",
		"Removes the package's files, its SCOs and the tracks left on them. 409 (error package_in_use, details.topics listing "+
			"their ids) while a topic plays it. Admins delete any package; tutors the packages they uploaded.", httpx.User,
		http.StatusConflict),
		func(ctx context.Context, in *packageInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.DeletePackage(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Package); err != nil {
				return nil, err
			}
			return httpx.Done("Package deleted.")
		})

	httpx.Handle(api, route(http.MethodGet, "/api/courses/{course}/scorm", "progress:read", "List my SCORM tracks in a course",
		"One entry per topic and SCO the caller launched: status, score, time and last access. Admins and the course's tutors read "+
			"another learner's tracks with user_id.", httpx.User),
		func(ctx context.Context, in *tracksInput) (*httpx.Response[[]Track], error) {
			return answer(s.Tracks(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Course, in.UserID))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/scorm/launch/{sco}", "progress:write", "Launch a SCO of a SCORM topic",
		"Opens a session of the SCO for the caller and answers the player URL and a tracking token bound to tenant, user, topic and SCO "+
			"(12 hours). The token is sent as X-Lms-Tracking-Token and opens only that SCO's tracking routes; the player page takes it "+
			"as form field token (POST), so that it never appears in a URL. The attempt is resumed (entry resume, stored data back) after "+
			"exit=suspend, and a new attempt starts clean after an attempt that ended with a normal exit. 1.2 prerequisites and the "+
			"2004 sequencing rules the player implements are checked (403 names what is missing). Learners launch where they may record "+
			"progress; the course's editors may always try a topic (their sessions record nothing in progress).",
		httpx.User, http.StatusUnprocessableEntity),
		func(ctx context.Context, in *launchInput) (*httpx.Response[ScoLaunch], error) {
			return answer(s.Launch(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.SCO, in.Body.TopicID))
		})

	httpx.Handle(api, route(http.MethodGet, "/api/scorm/tracks/{sco}", httpx.AnyToken, "Read back the stored track of a SCO session",
		"Tracking route (X-Lms-Tracking-Token): the attempt, session, last commit number, statuses, total time and the whole stored "+
			"CMI data model.", httpx.Anyone),
		func(ctx context.Context, in *tokenInput) (*httpx.Response[Stored], error) {
			t := httpx.TenantFrom(ctx)
			k, err := readTicket(t, in.Token, in.SCO, s.Clock.Now())
			if err != nil {
				return nil, err
			}
			return answer(s.Stored(ctx, t, k))
		})
	commit := route(http.MethodPost, "/api/scorm/tracks/{sco}/commit", httpx.AnyToken, "Commit the CMI data model of a SCO session",
		"Tracking route (X-Lms-Tracking-Token). The body holds the whole model, flattened, and the commit's number in its session (seq). "+
			"Commits are ordered and idempotent: one from an older session or whose seq is not above the stored one changes nothing "+
			"(applied false), so a retried or late commit never overwrites newer data. The SCO's status, score and time are read from "+
			"the model (1.2: lesson_status, with the manifest's masteryscore deciding passed or failed when the SCO did not; 2004: "+
			"completion_status and success_status); completed or passed completes the topic, and the session's time is added to the "+
			"topic's time. Refused (403) after the learner's deadline, as other progress is.", httpx.Anyone, http.StatusUnprocessableEntity)
	commit.MaxBody = 4 << 20
	httpx.Handle(api, commit, func(ctx context.Context, in *commitInput) (*httpx.Response[CommitResult], error) {
		t := httpx.TenantFrom(ctx)
		k, err := readTicket(t, in.Token, in.SCO, s.Clock.Now())
		if err != nil {
			return nil, err
		}
		body, err := readCommit(in.RawBody)
		if err != nil {
			return nil, err
		}
		return answer(s.Commit(ctx, t, k, body))
	})
	describeCommit(api)
	httpx.Handle(api, route(http.MethodPost, "/api/scorm/tracks/{sco}/navigate", httpx.AnyToken, "Go to another SCO of the package",
		"Tracking route (X-Lms-Tracking-Token): continue, previous, a choice from the table of contents, or exit, as the package's "+
			"navigation allows (1.2 prerequisites; 2004 control modes, pre-condition rules and attempt limits). The attempt on the SCO "+
			"ends first: SCORM 2004 exit rules and post-condition rules (exitParent, exitAll, retry, retryAll, continue, previous) "+
			"may replace the request (rule names the one that did; retry starts a new attempt, clean). Answers the launch of the SCO "+
			"it reaches, with its own tracking token, or ended true when none comes next.", httpx.Anyone, http.StatusUnprocessableEntity),
		func(ctx context.Context, in *navigateInput) (*httpx.Response[ScoLaunch], error) {
			t := httpx.TenantFrom(ctx)
			k, err := readTicket(t, in.Token, in.SCO, s.Clock.Now())
			if err != nil {
				return nil, err
			}
			return answer(s.Navigate(ctx, t, k, in.Body.Action, in.Body.Target))
		})

	player := route(http.MethodPost, "/api/scorm/player/{sco}", httpx.AnyToken, "The SCORM player page of a launched session",
		"An HTML page, posted the tracking token as form field token (application/x-www-form-urlencoded): it hosts the SCO in a frame "+
			"on this origin with the SCORM runtime (window.API, window.API_1484_11), loads the stored model before the SCO starts and "+
			"commits to the tracking routes; several SCOs get a table of contents with previous and continue.", httpx.Anyone)
	player.MaxBody = 8 << 10
	httpx.Handle(api, player, func(ctx context.Context, in *playerInput) (*rawOutput, error) {
		t := httpx.TenantFrom(ctx)
		form, err := url.ParseQuery(string(in.RawBody))
		if err != nil {
			return nil, apperr.New(apperr.BadRequest, "Post the tracking token as form field token.")
		}
		k, err := readTicket(t, form.Get("token"), in.SCO, s.Clock.Now())
		if err != nil {
			return nil, err
		}
		page, err := s.Player(ctx, t, k)
		if err != nil {
			return nil, err
		}
		return &rawOutput{Body: func(hc huma.Context) {
			_, w := humago.Unwrap(hc)
			h := w.Header()
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-store")
			// same-origin, not no-referrer: the page's own form posts (the
			// next SCO's player) must carry their Origin, which the web
			// frontend checks; under no-referrer they say "null". The
			// package files keep no-referrer, so their signed links never
			// leave the site.
			h.Set("Referrer-Policy", "same-origin")
			h.Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write(page)
		}}, nil
	})

	const contentPattern = "/api/scorm/content/{package}/{expires}/{signature}/{path...}"
	httpx.Handle(api, route(http.MethodGet, contentPattern, httpx.AnyToken, "Serve a file of a SCORM package through a signed link",
		"The player frames the SCO's launch file here; the signature covers the package and expiry as a path prefix, so the SCO's "+
			"relative links work. Range requests are supported.", httpx.Anyone),
		func(ctx context.Context, in *contentInput) (*rawOutput, error) {
			return &rawOutput{Body: func(hc huma.Context) {
				r, w := humago.Unwrap(hc)
				if err := s.serveContent(w, r, httpx.TenantFrom(ctx), in.Package, in.Expires, in.Signature, in.Path); err != nil {
					httpx.WriteError(w, r, err)
				}
			}}, nil
		})
	httpx.DocumentAs(api, http.MethodGet, contentPattern, "/api/scorm/content/{package}/{expires}/{signature}/{path}", "")
	httpx.Handle(api, route(http.MethodGet, "/api/scorm/runtime/{file}", httpx.AnyToken, "The SCORM runtime scripts of the player page",
		"scorm-again (pinned in package-lock.json) and the player's own script.", httpx.Anyone),
		func(ctx context.Context, in *runtimeInput) (*rawOutput, error) {
			return &rawOutput{Body: func(hc huma.Context) {
				r, w := humago.Unwrap(hc)
				if err := s.runtimeFile(w, r, in.File); err != nil {
					httpx.WriteError(w, r, err)
				}
			}}, nil
		})
	describeToken(api)
}

func answer[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}

// spoolPackage reads the multipart body to its package field, written to
// a temporary file with the upload cap.
func spoolPackage(b uploadBody) (content.File, func(), error) {
	mt, params, err := mime.ParseMediaType(b.contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return content.File{}, nil, apperr.New(apperr.UnsupportedMedia, "Send multipart/form-data with the field package.")
	}
	mr := multipart.NewReader(b.r, params["boundary"])
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return content.File{}, nil, invalid("The package field (a .zip file) is required.")
		}
		if err != nil {
			return content.File{}, nil, apperr.New(apperr.BadRequest, "The multipart body cannot be read.")
		}
		if part.FormName() != "package" || part.FileName() == "" {
			continue
		}
		tmp, err := os.CreateTemp("", "scorm-upload-*.zip")
		if err != nil {
			return content.File{}, nil, fmt.Errorf("scorm: spool upload: %w", err)
		}
		done := func() { tmp.Close(); os.Remove(tmp.Name()) }
		n, err := io.Copy(tmp, io.LimitReader(part, MaxUpload+1))
		if err != nil {
			done()
			return content.File{}, nil, apperr.New(apperr.BadRequest, "The upload was interrupted.")
		}
		if n > MaxUpload {
			done()
			return content.File{}, nil, apperr.New(apperr.TooLarge, "The package may not be greater than "+strconv.Itoa(MaxUpload>>20)+" MiB.")
		}
		name := part.FileName()
		return content.File{Name: name, Size: n, ContentType: "application/zip", Open: func() (io.ReadCloser, error) {
			return os.Open(tmp.Name())
		}}, done, nil
	}
}

// describeUpload documents the upload's multipart body, which the handler
// reads itself.
func describeUpload(api huma.API) {
	item := api.OpenAPI().Paths["/api/admin/scorm/upload"]
	if item == nil || item.Post == nil {
		return
	}
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"multipart/form-data": {Schema: &huma.Schema{Type: huma.TypeObject, Required: []string{"package"},
			Properties: map[string]*huma.Schema{"package": {Type: huma.TypeString, Format: "binary",
				Description: "The SCORM package, a .zip file."}}}},
	}}
}

// trackingRoutes are the routes a tracking token opens, by method.
var trackingRoutes = map[string]string{
	"/api/scorm/tracks/{sco}":          http.MethodGet,
	"/api/scorm/tracks/{sco}/commit":   http.MethodPost,
	"/api/scorm/tracks/{sco}/navigate": http.MethodPost,
}

// describeToken documents the tracking token header, which the handlers
// read themselves: huma would answer a request without it 422, where a
// missing token, like an invalid one, is 401 (readTicket).
func describeToken(api huma.API) {
	for path, method := range trackingRoutes {
		item := api.OpenAPI().Paths[path]
		if item == nil {
			continue
		}
		op := item.Get
		if method == http.MethodPost {
			op = item.Post
		}
		if op == nil {
			continue
		}
		op.Parameters = append(op.Parameters, &huma.Param{Name: TokenHeader, In: "header", Required: true,
			Description: "The tracking token of POST /api/scorm/launch/{sco}; without it the answer is 401.",
			Schema:      &huma.Schema{Type: huma.TypeString}})
	}
}

// describeCommit documents the commit's JSON body, which the handler
// reads itself (readCommit).
func describeCommit(api huma.API) {
	item := api.OpenAPI().Paths["/api/scorm/tracks/{sco}/commit"]
	if item == nil || item.Post == nil {
		return
	}
	schema := api.OpenAPI().Components.Schemas.Schema(reflect.TypeFor[CommitInput](), true, "")
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{
		"application/json": {Schema: schema}}}
}

// readCommit reads a commit's body as CommitInput, naming each member
// that is wrong or not allowed as it was sent.
func readCommit(raw []byte) (CommitInput, error) {
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil || members == nil {
		return CommitInput{}, apperr.New(apperr.BadRequest, "The request body is not valid JSON.")
	}
	fields := map[string][]string{}
	var in CommitInput
	for name, v := range members {
		var err error
		switch name {
		case "seq":
			err = json.Unmarshal(v, &in.Seq)
			if err == nil && in.Seq < 1 {
				fields[name] = append(fields[name], "The seq field must be at least 1.")
			}
		case "terminate":
			err = json.Unmarshal(v, &in.Terminate)
		case "cmi":
			err = json.Unmarshal(v, &in.CMI)
			if err == nil && in.CMI == nil {
				err = errors.New("null")
			}
		default:
			fields[name] = append(fields[name], fmt.Sprintf("The %s field is not allowed; the CMI data model goes in cmi.", name))
			continue
		}
		if err != nil {
			fields[name] = append(fields[name], fmt.Sprintf("The %s field is invalid.", name))
		}
	}
	for _, name := range []string{"seq", "cmi"} {
		if _, ok := members[name]; !ok {
			fields[name] = append(fields[name], fmt.Sprintf("The %s field is required.", name))
		}
	}
	if len(fields) > 0 {
		return CommitInput{}, apperr.Validation(fields)
	}
	return in, nil
}
