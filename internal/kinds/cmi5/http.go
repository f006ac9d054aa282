package cmi5

import (
	"bytes"
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
	"github.com/lms-platform/lms/internal/httpx"
)

// MaxUpload caps an uploaded package, as for H5P packages.
const MaxUpload = h5ppackage.DefaultMaxTotalSize

type importInput struct {
	ContentType string `header:"Content-Type" hidden:"true"`
	RawBody     []byte `contentType:"multipart/form-data"`
}

type launchInput struct {
	Topic int64 `path:"topic" doc:"The cmi5 topic."`
	Body  *LaunchInput
}

type fetchInput struct {
	Code string `query:"code" maxLength:"128" doc:"The one-time code of the launch's fetch URL."`
}

type contentInput struct {
	Package int64  `path:"package"`
	Token   string `path:"token" doc:"Expiry and signature of the launch's link."`
	Path    string `path:"path" doc:"The file in the package."`
}

type rawOutput struct {
	Body func(huma.Context)
}

// Routes registers the package upload, the launch, the fetch URL and the
// package files AUs are played from.
func Routes(api huma.API, s *Service) {
	// The package upload is authoring (courses:write), a launch is the
	// learner's progress; the fetch URL and the package files carry their own
	// authority, so any scoped token may call them.
	imp := httpx.Route{Method: http.MethodPost, Path: "/api/admin/cmi5", Tags: []string{"cmi5"}, Who: httpx.User, Status: http.StatusCreated,
		Scope:   "courses:write",
		Summary: "Upload a cmi5 course package",
		Description: "Multipart form with the file field package: a zip with cmi5.xml at its root, or a bare cmi5.xml whose AU URLs are absolute. " +
			"The course structure is checked against CourseStructure.xsd and the cmi5 rules (unique ids, AU URLs present in the zip and free of launch " +
			"parameters, moveOn, masteryScore 0 to 1, launchMethod, nested blocks); each problem answers 422 under errors.package naming where it is. " +
			"The answer lists the AUs with the ids a cmi5 topic's au names. For authors of courses.",
		MaxBody: MaxUpload + 1<<20, Errors: []int{http.StatusUnprocessableEntity, http.StatusRequestEntityTooLarge}}
	httpx.Handle(api, imp, func(ctx context.Context, in *importInput) (*httpx.Response[Cmi5Package], error) {
		up, err := readUpload(in.ContentType, in.RawBody)
		if err != nil {
			return nil, err
		}
		pkg, err := s.Import(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), up)
		if err != nil {
			return nil, err
		}
		return httpx.Created(pkg, "Package imported.")
	})
	item := api.OpenAPI().Paths["/api/admin/cmi5"]
	item.Post.RequestBody = &huma.RequestBody{Required: true, Content: map[string]*huma.MediaType{"multipart/form-data": {Schema: &huma.Schema{
		Type: "object", Required: []string{"package"},
		Properties: map[string]*huma.Schema{"package": {Type: "string", Format: "binary", Description: "The cmi5 package (.zip) or cmi5.xml."}},
	}}}}

	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/cmi5/launch/{topic}", Tags: []string{"cmi5"}, Who: httpx.User,
		Scope:   "progress:write",
		Summary: "Launch the AU of a cmi5 topic",
		Description: "Per cmi5 section 8: reuses the learner's registration in the course (made on first launch), abandons the registration's " +
			"sessions that did not terminate, writes LMS.LaunchData (launchMode, launchParameters, masteryScore, moveOn, returnURL, contextTemplate " +
			"with the session id) and the learner preferences, stores the launched statement and answers the launch URL with endpoint, fetch, " +
			"actor, registration and activityId. Open it in a frame, or in its own window when launch_method is OwnWindow. " +
			"For learners who may record progress in the topic, and the course's editors.",
		Errors: []int{http.StatusUnprocessableEntity}},
		func(ctx context.Context, in *launchInput) (*httpx.Response[AuLaunch], error) {
			var body LaunchInput
			if in.Body != nil {
				body = *in.Body
			}
			l, err := s.Launch(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Topic, body, httpx.Origin(ctx))
			if err != nil {
				return nil, err
			}
			return httpx.OK(l)
		})

	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/cmi5/fetch", Tags: []string{"cmi5"}, Credentials: true,
		Scope:   httpx.AnyToken,
		Limit:   &httpx.RateLimit{Limit: 60, Per: httpx.PerIP, Name: "cmi5-fetch"},
		Summary: "The one-time fetch URL of a launch",
		Description: "Answers {\"auth-token\": ...} once, for `Authorization: Basic <token>` on the LRS; then, and for unknown codes, " +
			"{\"error-code\", \"error-text\"} as cmi5 section 8.2.3 defines (1: already used or expired, 2: invalid, 3: failure), " +
			"with status 200 too (section 8.2.1). Not an envelope. 60 calls a minute per IP."},
		func(ctx context.Context, in *fetchInput) (*rawOutput, error) {
			body, _ := json.Marshal(s.Fetch(ctx, httpx.TenantFrom(ctx), in.Code))
			return &rawOutput{Body: func(hc huma.Context) {
				hc.SetHeader("Content-Type", "application/json")
				hc.SetHeader("Cache-Control", "no-store")
				hc.SetStatus(http.StatusOK)
				hc.BodyWriter().Write(body)
			}}, nil
		})

	waiveRoute(api, s)
	abandonRoute(api, s)

	const content = "/api/cmi5/content/{package}/{token}/{path...}"
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: content, Tags: []string{"cmi5"},
		Scope:       httpx.AnyToken,
		Summary:     "A file of a cmi5 package, for the AU a launch plays",
		Description: "The launch URL's signed link (token: expiry and signature); files relative to the AU resolve below it."},
		func(ctx context.Context, in *contentInput) (*rawOutput, error) {
			return s.serveFile(ctx, in)
		})
	httpx.DocumentAs(api, http.MethodGet, content, "/api/cmi5/content/{package}/{token}/{path}", "")
}

// readUpload takes the file field package of a multipart form.
func readUpload(contentType string, body []byte) (Upload, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return Upload{}, apperr.New(apperr.UnsupportedMedia, "Send the package as multipart/form-data in the field package.")
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Upload{}, apperr.New(apperr.BadRequest, "The multipart body cannot be read.")
		}
		if part.FormName() != "package" {
			continue
		}
		data, err := io.ReadAll(io.LimitReader(part, MaxUpload+1))
		if err != nil {
			return Upload{}, apperr.New(apperr.BadRequest, "The multipart body cannot be read.")
		}
		if len(data) > MaxUpload {
			return Upload{}, apperr.New(apperr.TooLarge, fmt.Sprintf("The package is larger than %d bytes.", MaxUpload))
		}
		return Upload{Name: part.FileName(), Data: data}, nil
	}
	return Upload{}, apperr.Field("package", "The package file (field package) is required.")
}

func (s *Service) serveFile(ctx context.Context, in *contentInput) (*rawOutput, error) {
	t := httpx.TenantFrom(ctx)
	expiresText, sig, _ := strings.Cut(in.Token, ".")
	expires, err := strconv.ParseInt(expiresText, 10, 64)
	if err != nil || !hmac.Equal([]byte(sig), []byte(contentSignature(t, in.Package, expires))) {
		return nil, apperr.New(apperr.Forbidden, "Invalid signature.")
	}
	if s.Clock.Now().Unix() >= expires {
		return nil, apperr.New(apperr.Forbidden, "This link has expired.")
	}
	pkg, err := packageByID(ctx, t.DB, in.Package)
	if err != nil {
		return nil, err
	}
	if pkg.filePrefix == "" {
		return nil, apperr.New(apperr.NotFound, "File not found.")
	}
	rc, info, err := t.Blob.Get(ctx, pkg.filePrefix+in.Path)
	if errors.Is(err, blob.ErrNotFound) || errors.Is(err, blob.ErrInvalidKey) {
		return nil, apperr.New(apperr.NotFound, "File not found.")
	}
	if err != nil {
		return nil, fmt.Errorf("cmi5: open %s: %w", in.Path, err)
	}
	return &rawOutput{Body: func(hc huma.Context) {
		defer rc.Close()
		r, w := humago.Unwrap(hc)
		h := w.Header()
		ct := info.ContentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Cache-Control", "private, max-age=3600")
		if rs, ok := rc.(io.ReadSeeker); ok {
			http.ServeContent(w, r, "", info.ModTime, rs)
			return
		}
		h.Set("Content-Length", strconv.FormatInt(info.Size, 10))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = io.Copy(w, rc)
		}
	}}, nil
}
