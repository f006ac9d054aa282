package lti

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/topics"
)

var (
	toolTags  = []string{"LTI"}
	adminTags = []string{"LTI administration"}
)

// Paths of the tool role other parties are given.
const (
	JWKSPath   = "/api/lti/jwks"
	LoginPath  = "/api/lti/tool/login"
	LaunchPath = "/api/lti/tool/launch"
)

type loginQuery struct {
	Issuer        string `query:"iss" maxLength:"500" doc:"The platform's issuer."`
	LoginHint     string `query:"login_hint" maxLength:"2000" doc:"Opaque to the tool; sent back to the platform."`
	TargetLinkURI string `query:"target_link_uri" maxLength:"2000"`
	MessageHint   string `query:"lti_message_hint" maxLength:"2000"`
	DeploymentID  string `query:"lti_deployment_id" maxLength:"255"`
	ClientID      string `query:"client_id" maxLength:"200"`
}

type formInput struct {
	ContentType string `header:"Content-Type" hidden:"true"`
	RawBody     []byte `contentType:"application/x-www-form-urlencoded"`
}

// form parses a form post; other bodies are refused.
func (in *formInput) form() (url.Values, error) {
	if !strings.HasPrefix(in.ContentType, "application/x-www-form-urlencoded") {
		return nil, apperr.New(apperr.UnsupportedMedia, "Send the fields as application/x-www-form-urlencoded.")
	}
	v, err := url.ParseQuery(string(in.RawBody))
	if err != nil {
		return nil, apperr.New(apperr.BadRequest, "The form is not valid.")
	}
	return v, nil
}

type exchangeInput struct {
	Body struct {
		Code string `json:"code" minLength:"1" maxLength:"100" doc:"The one-time code of the launch redirect."`
	}
}

type jwksOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         JWKS
}

// ToolURLs are what an admin pastes into the other platform's tool
// registration.
type ToolURLs struct {
	JWKSURL   string `json:"jwks_url" doc:"Public keyset URL of this tool (the tenant's key)."`
	LoginURL  string `json:"login_url" doc:"OpenID Connect login initiation URL."`
	LaunchURL string `json:"launch_url" doc:"Redirection URI and target link URI of launches."`
}

type registrationInput struct {
	Body RegistrationInput
}

type registrationIDInput struct {
	ID int64 `path:"id"`
}

type registrationUpdateInput struct {
	ID   int64 `path:"id"`
	Body RegistrationInput
}

// ToolRoutes registers the tool role: the public protocol routes of the
// spec's LTI table, the tenant's key set, and the admin routes of
// registrations.
func ToolRoutes(api huma.API, s *Tool, front func(platform.Record) string) {
	login := func(ctx context.Context, in LoginRequest) (*httpx.Redirect, error) {
		in.LaunchURL = httpx.Origin(ctx) + LaunchPath
		to, err := s.Login(ctx, httpx.TenantFrom(ctx), in)
		if err != nil {
			return nil, err
		}
		return httpx.RedirectTo(http.StatusFound, to), nil
	}
	const loginDoc = "OIDC third-party initiated login. Requires `iss`, `login_hint` and `target_link_uri`; " +
		"`lti_message_hint`, `lti_deployment_id` and `client_id` are optional (`client_id` is required when the issuer " +
		"has several registrations). Answers 302 to the platform's authentication URL with a fresh `state` and `nonce`, " +
		"kept server-side for 10 minutes and used once. Refusals answer 400 (`invalid_login`, `unknown_platform`, " +
		"`client_id_required`) or 403 (`unknown_deployment`) with the code in `error`."
	// The protocol routes are sign-ins of browsers sent by another platform,
	// never made with a scoped token; the key set is public.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: LoginPath, Tags: toolTags, Status: http.StatusFound,
		Scope:  httpx.NoTokens,
		Errors: []int{400, 403}, Summary: "OIDC login initiation from an external platform", Description: loginDoc},
		func(ctx context.Context, in *loginQuery) (*httpx.Redirect, error) {
			return login(ctx, LoginRequest{Issuer: in.Issuer, LoginHint: in.LoginHint, TargetLinkURI: in.TargetLinkURI,
				MessageHint: in.MessageHint, DeploymentID: in.DeploymentID, ClientID: in.ClientID})
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: LoginPath, Tags: toolTags, Status: http.StatusFound,
		Scope:   httpx.NoTokens,
		MaxBody: 16 << 10, Errors: []int{400, 403, 415}, Summary: "OIDC login initiation from an external platform (form post)",
		Description: loginDoc + " The fields come as an application/x-www-form-urlencoded form."},
		func(ctx context.Context, in *formInput) (*httpx.Redirect, error) {
			f, err := in.form()
			if err != nil {
				return nil, err
			}
			return login(ctx, LoginRequest{Issuer: f.Get("iss"), LoginHint: f.Get("login_hint"),
				TargetLinkURI: f.Get("target_link_uri"), MessageHint: f.Get("lti_message_hint"),
				DeploymentID: f.Get("lti_deployment_id"), ClientID: f.Get("client_id")})
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: LaunchPath, Tags: toolTags, Status: http.StatusSeeOther,
		Scope:   httpx.NoTokens,
		MaxBody: 64 << 10, Credentials: true, Errors: []int{400, 401, 403, 404, 415, 422, 503},
		Summary: "LTI resource link launch: the platform's signed id_token (form post of id_token and state)",
		Description: "Checks, in this order, each refusal naming its check in `error`: the `state` of the login " +
			"(401 `invalid_state`: unknown, used or expired), the JWT (401 `invalid_token`), its algorithm (401 " +
			"`invalid_alg`: RS256 only), its key (401 `unknown_key` after fetching the platform's key set again, " +
			"`jwks_unavailable`), its signature (401 `invalid_signature`), `iss` (401 `invalid_issuer`), `aud`/`azp` (401 " +
			"`invalid_audience`), `exp` (401 `expired`) and `iat` (401 `invalid_iat`) with one minute of tolerance, the " +
			"`nonce` (401 `invalid_nonce`, `replayed_nonce`), the deployment id (403 `unknown_deployment`), the message type " +
			"(422 `invalid_message_type`: LtiResourceLinkRequest), the version (422 `invalid_version`: 1.3.0) and the " +
			"required claims (422 `missing_claim`: sub, roles, resource_link.id, target_link_uri). A refused launch leaves " +
			"nothing behind. An accepted one matches the user by (issuer, sub), never by e-mail, creating it on first " +
			"launch; Instructor and its sub-roles map to tutor, every other role to student, none to admin. The course is " +
			"the custom parameter `topic_id`'s course or `course_id`, else the registration's course; it must be one of " +
			"the registration's `course_ids` (403 `course_not_allowed`, nothing created), and the user gains access to it. The launch is recorded (with its AGS endpoint: when the registration has a `token_url`, a " +
			"learner who finishes the launched topic, or the launched course when the launch named no topic, gets a " +
			"completed score of 1/1 posted back on the launch's line item, found or made in its container when it " +
			"named none) and the browser is sent (303) to the frontend's " +
			"/lti/launch?code=…&course=… with a one-time code valid for one minute."},
		func(ctx context.Context, in *formInput) (*httpx.Redirect, error) {
			f, err := in.form()
			if err != nil {
				return nil, err
			}
			t := httpx.TenantFrom(ctx)
			landing, err := s.Launch(ctx, t, f.Get("id_token"), f.Get("state"))
			if err != nil {
				return nil, err
			}
			q := url.Values{"code": {landing.Code}}
			if landing.CourseID != 0 {
				q.Set("course", strconv.FormatInt(landing.CourseID, 10))
			}
			return httpx.RedirectTo(http.StatusSeeOther, front(t.Record)+"/lti/launch?"+q.Encode()), nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/lti/tool/exchange", Tags: toolTags,
		Scope: httpx.NoTokens,
		Limit: &httpx.RateLimit{Limit: 30, Per: httpx.PerIP}, MaxBody: 4 << 10, Credentials: true, Errors: []int{401},
		Summary: "Exchange the one-time code of a launch for an access token",
		Description: "The code is valid once, for one minute after the launch. An unknown, used or expired code " +
			"answers 401 with `error` `invalid_code`. The token is a regular access token of the launched user. " +
			"30 calls a minute per IP, counted whatever they answer (429 with Retry-After beyond)."},
		func(ctx context.Context, in *exchangeInput) (*httpx.Response[auth.Issued], error) {
			out, err := s.Exchange(ctx, httpx.TenantFrom(ctx), in.Body.Code)
			if err != nil {
				return nil, err
			}
			return auth.LoginResponse(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: JWKSPath, Tags: toolTags,
		Scope:   httpx.AnyToken,
		Summary: "The tenant's public key set (JWKS, not in the envelope)",
		Description: "The key our LTI messages are signed with, in both roles: id_tokens of launches from this " +
			"platform, and client assertions of this tool. Each tenant has its own key."},
		func(ctx context.Context, _ *struct{}) (*jwksOutput, error) {
			return &jwksOutput{CacheControl: "public, max-age=3600", Body: TenantJWKS(httpx.TenantFrom(ctx))}, nil
		})
	adminRoutes(api, s)
}

func requireAdmin(ctx context.Context) error {
	if !httpx.PrincipalFrom(ctx).HasRole(access.Admin) {
		return apperr.New(apperr.Forbidden, "This action is unauthorized.")
	}
	return nil
}

func adminRoutes(api huma.API, s *Tool) {
	const base = "/api/admin/lti/registrations"
	// Registrations are settings of the tenant: settings scopes.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/lti/tool", Tags: adminTags, Who: httpx.User,
		Scope:   "settings:read",
		Summary: "This tool's URLs to paste into another platform's LTI 1.3 tool registration (admin)",
		Description: "The URLs are on the host the call was made to, which selects the tenant: call it on the " +
			"tenant's public host."},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[ToolURLs], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			o := httpx.Origin(ctx)
			return httpx.OK(ToolURLs{JWKSURL: o + JWKSPath, LoginURL: o + LoginPath, LaunchURL: o + LaunchPath})
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: base, Tags: adminTags, Who: httpx.User,
		Scope:   "settings:read",
		Summary: "List the platforms registered to launch this tool (admin)"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]Registration], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			out, err := Registrations(ctx, httpx.TenantFrom(ctx).DB)
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: base, Tags: adminTags, Who: httpx.User, Status: 201,
		Scope:   "settings:write",
		MaxBody: 16 << 10, Errors: []int{422},
		Summary: "Register a platform that may launch this tool (admin)",
		Description: "One registration per (issuer, client_id); a second one answers 422 on client_id. URLs must be " +
			"absolute http(s); the key set is fetched through the outbound-fetch guard (no private addresses unless " +
			"the deployment allows them)."},
		func(ctx context.Context, in *registrationInput) (*httpx.Response[Registration], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			r, err := SaveRegistration(ctx, httpx.TenantFrom(ctx).DB, s.Clock.Now(), 0, in.Body)
			if err != nil {
				return nil, err
			}
			return httpx.Created(r, "Platform registered.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPut, Path: base + "/{id}", Tags: adminTags, Who: httpx.User,
		Scope:   "settings:write",
		MaxBody: 16 << 10, Errors: []int{422}, Summary: "Replace a platform registration (admin)"},
		func(ctx context.Context, in *registrationUpdateInput) (*httpx.Response[Registration], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			r, err := SaveRegistration(ctx, httpx.TenantFrom(ctx).DB, s.Clock.Now(), in.ID, in.Body)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(r, "Registration saved.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodDelete, Path: base + "/{id}", Tags: adminTags, Who: httpx.User,
		Scope:   "settings:write",
		Summary: "Delete a platform registration (admin); users it created stay"},
		func(ctx context.Context, in *registrationIDInput) (*httpx.Response[*httpx.Empty], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			if err := DeleteRegistration(ctx, httpx.TenantFrom(ctx).DB, in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Registration deleted.")
		})
}

type launchTopicInput struct {
	Topic int64 `path:"topic" doc:"Id of an lti topic."`
}

type authorizeQuery struct {
	Scope        string `query:"scope" maxLength:"200"`
	ResponseType string `query:"response_type" maxLength:"50"`
	ResponseMode string `query:"response_mode" maxLength:"50"`
	Prompt       string `query:"prompt" maxLength:"50"`
	ClientID     string `query:"client_id" maxLength:"200"`
	RedirectURI  string `query:"redirect_uri" maxLength:"1000"`
	LoginHint    string `query:"login_hint" maxLength:"200"`
	State        string `query:"state" maxLength:"2000"`
	Nonce        string `query:"nonce" maxLength:"500"`
	MessageHint  string `query:"lti_message_hint" maxLength:"200"`
	Cookie       string `header:"Cookie" hidden:"true"`
}

type authorizeFormInput struct {
	ContentType string `header:"Content-Type" hidden:"true"`
	Cookie      string `header:"Cookie" hidden:"true"`
	RawBody     []byte `contentType:"application/x-www-form-urlencoded"`
}

// cookies reads a Cookie header by name; malformed cookies are skipped.
func cookies(header string) map[string]string {
	out := map[string]string{}
	for _, c := range (&http.Request{Header: http.Header{"Cookie": {header}}}).Cookies() {
		out[c.Name] = c.Value
	}
	return out
}

type htmlOutput struct {
	ContentType  string `header:"Content-Type"`
	CacheControl string `header:"Cache-Control"`
	SetCookie    string `header:"Set-Cookie"`
	Body         []byte
}

// launchOutput is the answer of a launch or deep linking request: the
// tool's login URL, and the cookie that binds its login hint to the
// browser.
type launchOutput struct {
	SetCookie    string `header:"Set-Cookie" doc:"The hint's one-time cookie for our authorization endpoint (httpOnly, two minutes)."`
	CacheControl string `header:"Cache-Control"`
	Body         httpx.Envelope[ToolLaunch]
}

func launchAnswer(ctx context.Context, out ToolLaunch, c HintCookie) *launchOutput {
	return &launchOutput{SetCookie: hintCookie(ctx, c.Name, c.Value, int(HintLifetime/time.Second)).String(),
		CacheControl: "no-store", Body: httpx.Envelope[ToolLaunch]{Success: true, Data: out}}
}

// hintCookie is a hint's cookie for our authorization endpoint only
// (maxAge < 0 drops it). The tool sends the browser back to us from its
// own site, by a redirect or a form post, in a window or a frame: over
// https the cookie is SameSite=None (and Secure) so that all of them carry
// it; over http, where browsers refuse SameSite=None, it is Lax, which a
// top-level redirect (GET) still carries.
func hintCookie(ctx context.Context, name, value string, maxAge int) *http.Cookie {
	c := &http.Cookie{Name: name, Value: value, Path: AuthorizePath, MaxAge: maxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode}
	if strings.HasPrefix(httpx.Origin(ctx), "https://") {
		c.Secure, c.SameSite = true, http.SameSiteNoneMode
	}
	return c
}

type toolInput struct {
	Body ToolInput
}

type toolUpdateInput struct {
	ID   int64 `path:"id"`
	Body ToolInput
}

// AuthorizePath is our OIDC authorization endpoint (platform role).
const AuthorizePath = "/api/lti/authorize"

// PlatformURLs are what an admin pastes into an external tool's
// configuration.
type PlatformURLs struct {
	Issuer           string `json:"issuer" doc:"Our issuer (iss of our id_tokens): the tenant's origin."`
	AuthorizationURL string `json:"authorization_url" doc:"OIDC authentication request URL."`
	JWKSURL          string `json:"jwks_url" doc:"Public keyset URL of this platform (the tenant's key)."`
	TokenURL         string `json:"token_url" doc:"OAuth 2 token URL of the grade services (AGS), for the tool's client assertions."`
}

// PlatformRoutes registers the platform role: launches of lti topics,
// our authorization endpoint, and the admin routes of external tools.
func PlatformRoutes(api huma.API, s *Platform) {
	serviceRoutes(api, s)
	// Launching a tool is learning a course's topic: courses:read.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/lti/launches/{topic}", Tags: toolTags, Who: httpx.User,
		Scope:   "courses:read",
		Errors:  []int{409},
		Summary: "Launch the external tool of an lti topic: the tool's OIDC login URL with a two-minute, single-use login hint",
		Description: "For learners who may record progress in the topic (access to the course, topic active, lesson open) " +
			"and the course's editors. Send the browser to `url`; the tool sends it back to our authorization endpoint, " +
			"which answers the signed launch. The hint is bound to the caller, the topic and the browser: the answer " +
			"sets a one-time httpOnly cookie for " + AuthorizePath + " (two minutes; SameSite=None and Secure over " +
			"https, Lax over http), and the authorization endpoint answers the hint only with it. A client that calls " +
			"this route server-side must hand the cookie on to the browser (the reference frontend does). A topic " +
			"whose tool was removed answers 409."},
		func(ctx context.Context, in *launchTopicInput) (*launchOutput, error) {
			out, cookie, err := s.Launch(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), httpx.PrincipalFrom(ctx), in.Topic)
			if err != nil {
				return nil, err
			}
			return launchAnswer(ctx, out, cookie), nil
		})
	// A platform sign-in of the browser, never made with a scoped token.
	const authorizeDoc = "The tool's authentication request: `client_id` of a registered tool and `redirect_uri` registered " +
		"for it, else 400 (`unauthorized_client`, `invalid_redirect_uri`) here, never redirected. Every other refusal is " +
		"an OAuth error response posted (form_post) to the redirect URI with `error`, `error_description` and `state`: " +
		"`invalid_scope` (`scope` must hold openid), `unsupported_response_type` (`response_type` id_token), " +
		"`invalid_request` (`response_mode` form_post, `nonce` and `login_hint` required; an `lti_message_hint` other " +
		"than the launch's) and `login_required` (the `login_hint` of POST /api/lti/launches/{topic} or POST " +
		"/api/lti/deep-links is unknown, used, expired, of another tool, or the browser does not send the hint's " +
		"cookie, set by that call's answer). A refused request leaves the hint unused. Answers an HTML page that posts " +
		"`id_token` and `state` to the redirect URI, and drops the hint's cookie. The id_token is signed (RS256) with " +
		"the tenant's key and carries the message type, version, deployment id, target link, resource link (the topic), " +
		"roles (Instructor for the course's editors, else Learner), context (the course), custom parameters, launch " +
		"presentation, the AGS endpoint, and name and e-mail only as the tool's privacy settings allow (claims without " +
		"a value are left out)."
	authorize := func(ctx context.Context, in AuthRequest) (*htmlOutput, error) {
		out, err := s.Authorize(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), in)
		if err != nil {
			return nil, err
		}
		page := &htmlOutput{ContentType: "text/html; charset=utf-8", CacheControl: "no-store", Body: out.Page}
		if out.UsedCookie != "" {
			page.SetCookie = hintCookie(ctx, out.UsedCookie, "", -1).String()
		}
		return page, nil
	}
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: AuthorizePath, Tags: toolTags, Credentials: true,
		Scope:       httpx.NoTokens,
		Errors:      []int{400},
		Summary:     "OIDC authorization endpoint of launches from this platform: an auto-submitting form with the signed id_token",
		Description: authorizeDoc},
		func(ctx context.Context, in *authorizeQuery) (*htmlOutput, error) {
			return authorize(ctx, AuthRequest{Scope: in.Scope, ResponseType: in.ResponseType, ResponseMode: in.ResponseMode,
				Prompt: in.Prompt, ClientID: in.ClientID, RedirectURI: in.RedirectURI, LoginHint: in.LoginHint, State: in.State,
				Nonce: in.Nonce, MessageHint: in.MessageHint, Cookies: cookies(in.Cookie)})
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: AuthorizePath, Tags: toolTags, Credentials: true,
		Scope:   httpx.NoTokens,
		MaxBody: 16 << 10, Errors: []int{400, 415},
		Summary:     "OIDC authorization endpoint of launches from this platform (form post)",
		Description: authorizeDoc + " The fields come as an application/x-www-form-urlencoded form."},
		func(ctx context.Context, in *authorizeFormInput) (*htmlOutput, error) {
			f, err := (&formInput{ContentType: in.ContentType, RawBody: in.RawBody}).form()
			if err != nil {
				return nil, err
			}
			return authorize(ctx, AuthRequest{Scope: f.Get("scope"), ResponseType: f.Get("response_type"),
				ResponseMode: f.Get("response_mode"), Prompt: f.Get("prompt"), ClientID: f.Get("client_id"),
				RedirectURI: f.Get("redirect_uri"), LoginHint: f.Get("login_hint"), State: f.Get("state"), Nonce: f.Get("nonce"),
				MessageHint: f.Get("lti_message_hint"), Cookies: cookies(in.Cookie)})
		})
	deepLinkRoutes(api, s)
	const base = "/api/admin/lti/tools"
	// External tools are settings of the tenant: settings scopes.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/lti/platform", Tags: adminTags, Who: httpx.User,
		Scope:   "settings:read",
		Summary: "This platform's URLs to paste into an external tool's configuration (admin)"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[PlatformURLs], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			o := httpx.Origin(ctx)
			return httpx.OK(PlatformURLs{Issuer: o, AuthorizationURL: o + AuthorizePath, JWKSURL: o + JWKSPath, TokenURL: o + TokenPath})
		})
	// Authors choose a tool for an lti topic or a deep link: its id and
	// name are enough, the registration stays the admins'.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/lti/tool-choices", Tags: adminTags, Who: httpx.User,
		Scope:   "courses:read",
		Summary: "The external tools an author may choose for an lti topic or a deep link: id and name (tutors and admins)"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]ToolChoice], error) {
			if !topics.CanReadKinds(httpx.PrincipalFrom(ctx)) {
				return nil, apperr.New(apperr.Forbidden, "This action is unauthorized.")
			}
			tools, err := Tools(ctx, httpx.TenantFrom(ctx).DB)
			if err != nil {
				return nil, err
			}
			out := make([]ToolChoice, len(tools))
			for i, tl := range tools {
				out[i] = ToolChoice{ID: tl.ID, Name: tl.Name}
			}
			return httpx.OK(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: base, Tags: adminTags, Who: httpx.User,
		Scope:   "settings:read",
		Summary: "List the external tools lti topics may launch (admin)"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]ExternalTool], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			out, err := Tools(ctx, httpx.TenantFrom(ctx).DB)
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: base, Tags: adminTags, Who: httpx.User, Status: 201,
		Scope:   "settings:write",
		MaxBody: 16 << 10, Errors: []int{422},
		Summary:     "Add an external tool (admin); answers its generated client_id and deployment_id to give the tool",
		Description: "Give the tool's key as `jwks_url` or `public_key` (PEM), not both."},
		func(ctx context.Context, in *toolInput) (*httpx.Response[ExternalTool], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			tl, err := SaveTool(ctx, httpx.TenantFrom(ctx).DB, s.Clock.Now(), 0, in.Body)
			if err != nil {
				return nil, err
			}
			return httpx.Created(tl, "Tool added.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPut, Path: base + "/{id}", Tags: adminTags, Who: httpx.User,
		Scope:   "settings:write",
		MaxBody: 16 << 10, Errors: []int{422}, Summary: "Replace an external tool's settings (admin); its client_id stays"},
		func(ctx context.Context, in *toolUpdateInput) (*httpx.Response[ExternalTool], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			tl, err := SaveTool(ctx, httpx.TenantFrom(ctx).DB, s.Clock.Now(), in.ID, in.Body)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(tl, "Tool saved.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodDelete, Path: base + "/{id}", Tags: adminTags, Who: httpx.User,
		Scope:   "settings:write",
		Summary: "Remove an external tool (admin); its topics stay and answer 409 on launch"},
		func(ctx context.Context, in *registrationIDInput) (*httpx.Response[*httpx.Empty], error) {
			if err := requireAdmin(ctx); err != nil {
				return nil, err
			}
			if err := DeleteTool(ctx, httpx.TenantFrom(ctx).DB, in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Tool removed.")
		})
}

type deepLinkInput struct {
	Body struct {
		Lesson int64 `json:"lesson" minimum:"1" doc:"The lesson the tool's content items become lti topics of."`
		Tool   int64 `json:"tool" minimum:"1" doc:"The external tool to ask."`
	}
}

// deepLinkRoutes registers Deep Linking, platform role: the author's
// request and the tool's answer.
func deepLinkRoutes(api huma.API, s *Platform) {
	// Asking a tool for content makes topics (courses:write); the tool's
	// signed answer comes back through the browser, with no token of ours.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/lti/deep-links", Tags: toolTags, Who: httpx.User,
		Scope:   "courses:write",
		MaxBody: 4 << 10, Errors: []int{422},
		Summary: "Ask an external tool for content for a lesson (LTI Deep Linking): the tool's OIDC login URL",
		Description: "For those who may edit the lesson's course. Send the browser to `url` (a two-minute, single-use " +
			"login hint bound to the caller, the tool and the lesson, and to the browser by a cookie the answer sets, " +
			"as for POST /api/lti/launches/{topic}); our authorization endpoint then answers an " +
			"LtiDeepLinkingRequest (role Instructor, deep_linking_settings with our return URL, accept_types " +
			"ltiResourceLink, accept_multiple, accept_lineitem, and data the tool must send back), and the tool posts its content items " +
			"to " + DeepLinkReturnPath + " within an hour."},
		func(ctx context.Context, in *deepLinkInput) (*launchOutput, error) {
			out, cookie, err := s.DeepLink(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), httpx.PrincipalFrom(ctx), in.Body.Lesson, in.Body.Tool)
			if err != nil {
				return nil, err
			}
			return launchAnswer(ctx, out, cookie), nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: DeepLinkReturnPath, Tags: toolTags, MaxBody: 64 << 10,
		Scope:       httpx.NoTokens,
		Credentials: true, Errors: []int{400, 401, 403, 415, 422},
		Summary: "Deep Linking return: the tool's signed content items (form post of JWT) become lti topics of the lesson",
		Description: "Checks, each refusal naming its check in `error`: the JWT (401 `invalid_token`), RS256 (401 " +
			"`invalid_alg`), `iss` a registered tool's client_id (401 `invalid_issuer`), its key (401 `unknown_key`, " +
			"`jwks_unavailable`) and signature (401 `invalid_signature`), `aud` our issuer (401 `invalid_audience`), " +
			"`exp` (401 `expired`), `iat` (401 `invalid_iat`), the message type LtiDeepLinkingResponse (422 `invalid_message_type`), the version " +
			"(422 `invalid_version`), the tool's deployment id (403 `unknown_deployment`), and the data of our request, " +
			"used once (401 `invalid_data`). Each content item of type ltiResourceLink (at most 20; url absolute " +
			"http(s)) becomes an lti topic of the request's lesson with its title, url and custom parameters, made as " +
			"the author who asked; an item's `lineItem` {label?, scoreMaximum (> 0), resourceId?, tag?} becomes the line " +
			"item of the topic's resource link (422 without a scoreMaximum). Answers a short HTML page."},
		func(ctx context.Context, in *formInput) (*htmlOutput, error) {
			f, err := in.form()
			if err != nil {
				return nil, err
			}
			made, err := s.DeepLinkReturn(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), f.Get("JWT"))
			if err != nil {
				return nil, err
			}
			return &htmlOutput{ContentType: "text/html; charset=utf-8", CacheControl: "no-store", Body: linkedPage(made)}, nil
		})
}

type tokenOutput struct {
	CacheControl string `header:"Cache-Control"`
	Body         ServiceToken
}

type agsInput struct {
	Topic          int64  `path:"topic"`
	Authorization  string `header:"Authorization" hidden:"true"`
	ResourceLinkID string `query:"resource_link_id" maxLength:"255" doc:"Only the line items bound to this resource link (the topic's id)."`
	ResourceID     string `query:"resource_id" maxLength:"255" doc:"Only the line items of this resourceId."`
	Tag            string `query:"tag" maxLength:"255" doc:"Only the line items of this tag."`
	Limit          int    `query:"limit" minimum:"1" maximum:"1000" doc:"Page size (default 100); the next page is in the Link header (rel=\"next\")."`
	After          int64  `query:"after" minimum:"0" doc:"Paging cursor of the Link header's next page."`
}

type agsBodyInput struct {
	Topic         int64  `path:"topic"`
	Authorization string `header:"Authorization" hidden:"true"`
	RawBody       []byte `contentType:"application/vnd.ims.lis.v2.lineitem+json"`
}

type lineItemInput struct {
	Topic         int64  `path:"topic"`
	LineItem      int64  `path:"lineitem"`
	Authorization string `header:"Authorization" hidden:"true"`
}

type lineItemBodyInput struct {
	Topic         int64  `path:"topic"`
	LineItem      int64  `path:"lineitem"`
	Authorization string `header:"Authorization" hidden:"true"`
	RawBody       []byte `contentType:"application/vnd.ims.lis.v2.lineitem+json"`
}

type resultsInput struct {
	Topic         int64  `path:"topic"`
	LineItem      int64  `path:"lineitem"`
	Authorization string `header:"Authorization" hidden:"true"`
	UserID        string `query:"user_id" maxLength:"255" doc:"Only this learner's result."`
	Limit         int    `query:"limit" minimum:"1" maximum:"1000" doc:"Page size (default 100); the next page is in the Link header (rel=\"next\")."`
	After         int64  `query:"after" minimum:"0" doc:"Paging cursor of the Link header's next page."`
}

type scoreInput struct {
	Topic         int64  `path:"topic"`
	LineItem      int64  `path:"lineitem"`
	Authorization string `header:"Authorization" hidden:"true"`
	RawBody       []byte `contentType:"application/vnd.ims.lis.v1.score+json"`
}

type lineItemsOutput struct {
	ContentType string `header:"Content-Type"`
	Link        string `header:"Link"`
	Body        []LineItem
}

type resultsOutput struct {
	ContentType string `header:"Content-Type"`
	Link        string `header:"Link"`
	Body        []Result
}

type lineItemOutput struct {
	Status      int
	ContentType string `header:"Content-Type"`
	Body        LineItem
}

type noContent struct {
	Status int
}

// nextLink is the Link header of a container page: the next page, if any.
func nextLink(base string, next url.Values) string {
	if next == nil {
		return ""
	}
	return "<" + base + "?" + next.Encode() + `>; rel="next"`
}

// serviceRoutes registers the token endpoint and the grade services; they
// answer in the formats of OAuth 2 and AGS, not in the envelope.
func serviceRoutes(api huma.API, s *Platform) {
	const agsDoc = " Authorized by a service token of POST /api/lti/token (401 without, 403 without the scope); only the " +
		"tool the topic launches may use it (404 otherwise)."
	// The grade services authenticate tools by their own service tokens:
	// never a scoped token of ours.
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: TokenPath, Tags: toolTags, MaxBody: 16 << 10,
		Scope:       httpx.NoTokens,
		Credentials: true, Errors: []int{400, 401, 415},
		Summary: "OAuth 2 token endpoint of the grade services for tools (client credentials with a JWT client assertion)",
		Description: "Form fields `grant_type` client_credentials, `client_assertion_type` " +
			"urn:ietf:params:oauth:client-assertion-type:jwt-bearer, `client_assertion` (RS256 with the tool's key from " +
			"its key set or public key; iss and sub the tool's client_id, aud this URL or our issuer, exp at most five " +
			"minutes ahead, a `jti` used once: it is kept until the assertion expires) and `scope`: lineitem, lineitem.readonly, score and result.readonly of AGS, as asked, are granted. Answers {access_token, " +
			"token_type, expires_in, scope} (one hour). A bad or replayed assertion answers 401 `invalid_client`; no offered scope 400 " +
			"`invalid_scope`."},
		func(ctx context.Context, in *formInput) (*tokenOutput, error) {
			f, err := in.form()
			if err != nil {
				return nil, err
			}
			fields := map[string]string{}
			for k := range f {
				fields[k] = f.Get(k)
			}
			tok, err := s.Token(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), fields)
			if err != nil {
				return nil, err
			}
			return &tokenOutput{CacheControl: "no-store", Body: tok}, nil
		})
	// Every grade service answers 401 without a service token and 403
	// without its scope (serviceCaller).
	items := "/api/lti/ags/{topic}/lineitems"
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: items, Tags: toolTags,
		Scope:  httpx.NoTokens,
		Errors: []int{401, 403, 404}, Summary: "AGS: the line items container of an lti topic",
		Description: "Scope lineitem or lineitem.readonly. Answers " + mediaLineItems + ", filtered by `resource_link_id`, " +
			"`resource_id` and `tag`, in pages of `limit` (default 100) with the next page in `Link: <…>; rel=\"next\"`." + agsDoc},
		func(ctx context.Context, in *agsInput) (*lineItemsOutput, error) {
			o := httpx.Origin(ctx)
			page, err := s.LineItems(ctx, httpx.TenantFrom(ctx), o, in.Authorization, in.Topic, LineItemFilter{
				ResourceLinkID: in.ResourceLinkID, ResourceID: in.ResourceID, Tag: in.Tag, Limit: in.Limit, After: in.After})
			if err != nil {
				return nil, err
			}
			return &lineItemsOutput{ContentType: mediaLineItems, Link: nextLink(lineItemsURL(o, in.Topic), page.Next), Body: page.Items}, nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: items, Tags: toolTags,
		Scope:  httpx.NoTokens,
		Status: 201, MaxBody: 16 << 10, Errors: []int{400, 401, 403, 404},
		Summary: "AGS: add a line item to an lti topic",
		Description: "Scope lineitem. Body " + mediaLineItem + " {label, scoreMaximum (> 0), resourceId?, tag?, " +
			"resourceLinkId? (the topic's id binds it to the resource link)}; 400 names the broken rule." + agsDoc},
		func(ctx context.Context, in *agsBodyInput) (*lineItemOutput, error) {
			li, err := s.AddLineItem(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), in.Authorization, in.Topic, in.RawBody)
			if err != nil {
				return nil, err
			}
			return &lineItemOutput{Status: 201, ContentType: mediaLineItem, Body: li}, nil
		})
	item := items + "/{lineitem}"
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: item, Tags: toolTags,
		Scope:  httpx.NoTokens,
		Errors: []int{401, 403, 404}, Summary: "AGS: a line item of an lti topic",
		Description: "Scope lineitem or lineitem.readonly. Answers " + mediaLineItem + "." + agsDoc},
		func(ctx context.Context, in *lineItemInput) (*lineItemOutput, error) {
			li, err := s.LineItem(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), in.Authorization, in.Topic, in.LineItem)
			if err != nil {
				return nil, err
			}
			return &lineItemOutput{Status: 200, ContentType: mediaLineItem, Body: li}, nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPut, Path: item, Tags: toolTags,
		Scope:   httpx.NoTokens,
		MaxBody: 16 << 10, Errors: []int{400, 401, 403, 404}, Summary: "AGS: replace a line item of an lti topic",
		Description: "Scope lineitem. Body as for adding one; the label, scoreMaximum, resourceId and tag are replaced, " +
			"the binding to the resource link stays." + agsDoc},
		func(ctx context.Context, in *lineItemBodyInput) (*lineItemOutput, error) {
			li, err := s.UpdateLineItem(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), in.Authorization, in.Topic, in.LineItem, in.RawBody)
			if err != nil {
				return nil, err
			}
			return &lineItemOutput{Status: 200, ContentType: mediaLineItem, Body: li}, nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodDelete, Path: item, Tags: toolTags,
		Scope:  httpx.NoTokens,
		Status: 204, Errors: []int{401, 403, 404}, Summary: "AGS: delete a line item of an lti topic, with its scores",
		Description: "Scope lineitem. The line item of the topic's resource link (the launch's `lineitem` claim) is the " +
			"platform's and answers 403." + agsDoc},
		func(ctx context.Context, in *lineItemInput) (*noContent, error) {
			if err := s.DeleteLineItem(ctx, httpx.TenantFrom(ctx), in.Authorization, in.Topic, in.LineItem); err != nil {
				return nil, err
			}
			return &noContent{Status: http.StatusNoContent}, nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: item + "/results", Tags: toolTags,
		Scope:  httpx.NoTokens,
		Errors: []int{401, 403, 404}, Summary: "AGS: the results of a line item",
		Description: "Scope result.readonly. Answers " + mediaResults + ": per learner with a score, {id, scoreOf, userId, " +
			"resultScore, resultMaximum, comment}, filtered by `user_id`, in pages of `limit` (default 100) with the next " +
			"page in `Link: <…>; rel=\"next\"`." + agsDoc},
		func(ctx context.Context, in *resultsInput) (*resultsOutput, error) {
			o := httpx.Origin(ctx)
			page, err := s.Results(ctx, httpx.TenantFrom(ctx), o, in.Authorization, in.Topic, in.LineItem, in.UserID, in.Limit, in.After)
			if err != nil {
				return nil, err
			}
			return &resultsOutput{ContentType: mediaResults, Link: nextLink(lineItemURL(o, in.Topic, in.LineItem)+"/results", page.Next),
				Body: page.Items}, nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: item + "/scores", Tags: toolTags,
		Scope:  httpx.NoTokens,
		Status: 204, MaxBody: 16 << 10, Errors: []int{400, 401, 403, 404, 422},
		Summary: "AGS: post a learner's score; a completed activity or a fully graded score completes the topic",
		Description: "Scope score. Body " + mediaScore + " {userId (the sub of our launch), scoreGiven?, scoreMaximum " +
			"(required with scoreGiven), comment?, activityProgress (Initialized, Started, InProgress, Submitted, Completed), " +
			"gradingProgress (FullyGraded, Pending, PendingManual, Failed, NotReady), timestamp (ISO 8601 with sub-second " +
			"precision)}; 400 names the broken rule. The score is kept per line item and learner with its timestamp; a " +
			"score whose timestamp is not later than the kept one is ignored (204). The learner must hold access to the " +
			"topic's course (422 otherwise)." + agsDoc},
		func(ctx context.Context, in *scoreInput) (*noContent, error) {
			if err := s.PostScore(ctx, httpx.TenantFrom(ctx), in.Authorization, in.Topic, in.LineItem, in.RawBody); err != nil {
				return nil, err
			}
			return &noContent{Status: http.StatusNoContent}, nil
		})
}
