package device

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/tokens"
)

type deviceCodeInput struct {
	Body struct {
		ClientName string   `json:"client_name" minLength:"1" maxLength:"100" doc:"What is asking, as the approving user will see it (for example \"lmsctl on build-server\"); it also names the token."`
		Scopes     []string `json:"scopes" minItems:"1" maxItems:"64" doc:"The scopes the device asks for; the approving user may grant these or fewer."`
	}
}

type deviceTokenInput struct {
	Body struct {
		DeviceCode string `json:"device_code" minLength:"1" maxLength:"100" doc:"The device_code of POST /api/auth/device/code."`
	}
}

type userCodeInput struct {
	UserCode string `path:"user_code" maxLength:"16" doc:"The code the user typed, XXXX-XXXX (case and dash do not matter)."`
}

type deviceApproveInput struct {
	UserCode string `path:"user_code" maxLength:"16" doc:"The code the user typed, XXXX-XXXX (case and dash do not matter)."`
	Body     *struct {
		Scopes []string `json:"scopes,omitempty" maxItems:"64" doc:"Grant only these of the scopes asked for; omitted: all of them."`
	} `required:"false"`
}

var (
	tags = []string{"device login"}
	// One counter for show, approve and deny: guessing codes costs as
	// much as deciding them.
	requestLimit = &httpx.RateLimit{Limit: 5, Per: httpx.PerUser, Name: "device-requests"}
)

const pollDescription = "Answers the token once the request is approved, exactly once. Until then it fails with 400 and " +
	"a machine-readable code in the envelope's `error` field (RFC 8628 section 3.5):\n\n" +
	"- `authorization_pending`: nobody has decided yet; poll again after `interval` seconds.\n" +
	"- `slow_down`: polled sooner than the interval; the interval grows by 5 seconds.\n" +
	"- `access_denied`: the user denied the request.\n" +
	"- `expired_token`: the codes expired (10 minutes) or the token was never collected in time; start again.\n" +
	"- `invalid_grant`: the device code is unknown or its token was already collected."

// Routes registers the device login routes of the spec's table.
func Routes(api huma.API, s *Service) {
	// Starting and polling a device login are a sign-in, never made with a
	// token; approving creates a token of the caller, so it needs what
	// creating one needs (and stays within its scopes).
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/device/code", Tags: tags, Who: httpx.Anyone,
		Scope: httpx.NoTokens,
		Limit: &httpx.RateLimit{Limit: 10, Per: httpx.PerIP}, MaxBody: 8 << 10, Credentials: true,
		Summary: "Start a device login: a device code to poll with and a user code to approve on the frontend's /device page",
		Description: "The `device_code` is a secret of the device: keep it out of logs and URLs. Show the user " +
			"`verification_uri` and `user_code`, or `verification_uri_complete`, then poll POST /api/auth/device/token " +
			"every `interval` seconds until `expires_in` runs out."},
		func(ctx context.Context, in *deviceCodeInput) (*httpx.Response[DeviceGrant], error) {
			g, err := s.Start(ctx, httpx.TenantFrom(ctx), in.Body.ClientName, in.Body.Scopes, httpx.ClientIP(ctx))
			if err != nil {
				return nil, err
			}
			return httpx.OK(g)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/device/token", Tags: tags, Who: httpx.Anyone,
		Scope: httpx.NoTokens,
		Limit: &httpx.RateLimit{Limit: 60, Per: httpx.PerIP}, MaxBody: 4 << 10, Credentials: true, Errors: []int{400},
		Summary:     "Poll a device login; answers the approved scoped token once",
		Description: pollDescription},
		func(ctx context.Context, in *deviceTokenInput) (*httpx.Response[tokens.Created], error) {
			tok, err := s.Poll(ctx, httpx.TenantFrom(ctx), in.Body.DeviceCode)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(tok, "Signed in. Keep the token secret: it is not shown again.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/device/requests/{user_code}", Tags: tags,
		Scope: "tokens:read",
		Who:   httpx.User, Limit: requestLimit,
		Summary: "What a device request with this user code asks for: client, scopes, time, address and status",
		Description: "Shown to the signed-in user before they approve or deny. A code unknown on this tenant answers 404. " +
			"Show, approve and deny share a limit of 5 calls a minute per user."},
		func(ctx context.Context, in *userCodeInput) (*httpx.Response[DeviceRequest], error) {
			r, err := s.Show(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx).UserID, in.UserCode)
			if err != nil {
				return nil, err
			}
			return httpx.OK(r)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/device/requests/{user_code}/approve", Tags: tags,
		Scope: "tokens:write",
		Who:   httpx.User, Limit: requestLimit, MaxBody: 8 << 10, Errors: []int{409, 422},
		Summary: "Approve a device request: the device receives a scoped token of the caller's account",
		Description: "The token belongs to the approving user and has the scopes asked for, or the subset named in " +
			"`scopes`; naming a scope the device did not ask for answers 403. A caller using a scoped token may approve " +
			"only scopes it holds itself (403). A request already decided or expired answers 409."},
		func(ctx context.Context, in *deviceApproveInput) (*httpx.Response[DeviceRequest], error) {
			var scopes []string
			if in.Body != nil {
				scopes = in.Body.Scopes
			}
			r, err := s.Approve(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.UserCode, scopes)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(r, "Approved. The device is signed in as you.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/device/requests/{user_code}/deny", Tags: tags,
		Scope: "tokens:write",
		Who:   httpx.User, Limit: requestLimit, Errors: []int{409},
		Summary: "Deny a device request: its next poll answers access_denied"},
		func(ctx context.Context, in *userCodeInput) (*httpx.Response[DeviceRequest], error) {
			r, err := s.Deny(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx).UserID, in.UserCode)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(r, "Denied.")
		})
}
