package social

import (
	"context"
	"net/http"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/auth"
	"github.com/lms-platform/lms/internal/httpx"
)

var tags = []string{"auth"}

type startInput struct {
	Provider string `path:"provider" enum:"google,microsoft" doc:"The provider slot."`
	Next     string `query:"next" maxLength:"500" doc:"A path of the frontend to return to after the sign-in, such as /learn/5."`
	Bind     string `query:"bind" maxLength:"100" doc:"Opaque to the API: a value the frontend ties the sign-in to the browser with (a cookie's), given back at the landing so that a landing link sent to someone else is refused."`
}

type callbackInput struct {
	Provider         string `path:"provider" enum:"google,microsoft"`
	Code             string `query:"code" maxLength:"4096" doc:"The provider's authorization code."`
	State            string `query:"state" maxLength:"2048" doc:"The sealed state of the start."`
	Error            string `query:"error" maxLength:"200" doc:"The provider's error code, when it refused."`
	ErrorDescription string `query:"error_description" maxLength:"2000" hidden:"true"`
}

type completeInput struct {
	Token string `path:"token" maxLength:"4096" doc:"The sealed token the callback sent to the frontend's /auth/social."`
	Body  struct {
		Email     string  `json:"email,omitempty" maxLength:"254" doc:"Used only when the provider gave no address; not verified then."`
		FirstName string  `json:"first_name,omitempty" maxLength:"255" doc:"Used only when the provider gave no given_name."`
		LastName  string  `json:"last_name,omitempty" maxLength:"255" doc:"Used only when the provider gave no family_name."`
		Groups    []int64 `json:"groups,omitempty" maxItems:"100" doc:"Ids of registerable groups a new account joins."`
	} `required:"false"`
}

const providersDoc = "The providers are the slots `google` and `microsoft`, each an OpenID Connect provider found by " +
	"discovery from its `issuer` and configured per tenant by the settings `lms_auth.socialite.<slot>.enabled` " +
	"(public), `.label` (public, the button's name), `.client_id`, `.client_secret`, `.issuer` (Google: " +
	"`https://accounts.google.com`, the default; Microsoft Entra ID: `https://login.microsoftonline.com/<directory " +
	"(tenant) id>/v2.0`) and `.redirect` (the callback address registered at the provider; default this API's " +
	"`/api/auth/social/<slot>/callback` at the address the request came to). A slot that is not enabled or lacks " +
	"client id, secret or issuer answers 404 `provider_not_configured`."

// Routes registers the social login routes of the spec's table. They are
// sign-ins of browsers, never made with a scoped token, and like the other
// login routes they have no rate limiter of the service.
func Routes(api huma.API, s *Service) {
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/social/{provider}", Tags: tags,
		Status: http.StatusFound, Scope: httpx.NoTokens, Errors: []int{404, 422, 503},
		Summary: "Start a social login: redirect the browser to the provider",
		Description: "Answers 302 to the provider's authorization endpoint for the authorization code flow with " +
			"PKCE (S256) and a nonce, scopes `openid email profile`. Nothing is stored: the PKCE verifier, the nonce " +
			"`next` and `bind` travel in the `state` parameter, encrypted and authenticated with a key of this tenant " +
			"(AES-256-GCM), valid for 10 minutes. " + providersDoc},
		func(ctx context.Context, in *startInput) (*httpx.Redirect, error) {
			to, err := s.Start(ctx, httpx.TenantFrom(ctx), httpx.Origin(ctx), in.Provider, in.Next, in.Bind)
			if err != nil {
				return nil, err
			}
			return httpx.RedirectTo(http.StatusFound, to), nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/social/{provider}/callback", Tags: tags,
		Status: http.StatusSeeOther, Scope: httpx.NoTokens, Credentials: true, Errors: []int{400, 401, 404, 503},
		Summary: "The provider's redirect back after a social login",
		Description: "Checks the `state` (401 `invalid_state`: tampered with, of another tenant or provider, or " +
			"older than 10 minutes), exchanges the `code` with the PKCE verifier (401 `code_rejected`), and checks " +
			"the id_token: signature with the provider's published keys, issuer, audience, expiry (401 " +
			"`invalid_id_token`) and nonce (401 `invalid_nonce`). Nothing is written. The browser is then sent " +
			"(303) to the frontend's `/auth/social?token=…&next=…&bind=…`, the token sealing the identity the provider " +
			"proved (issuer, sub, e-mail and whether the provider verified it, names) for 10 minutes, to be " +
			"redeemed once at POST /api/auth/social/complete/{token}. A provider that reports an error (the person " +
			"declined) sends the browser to `/auth/social?error=<code>` instead. " + providersDoc},
		func(ctx context.Context, in *callbackInput) (*httpx.Redirect, error) {
			t := httpx.TenantFrom(ctx)
			landing, err := s.Callback(ctx, t, httpx.Origin(ctx), in.Provider, in.Code, in.State, in.Error)
			if err != nil {
				return nil, err
			}
			return httpx.RedirectTo(http.StatusSeeOther, landing.URL(s.FrontURL(t.Record))), nil
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/social/complete/{token}", Tags: tags,
		Scope: httpx.NoTokens, Credentials: true, MaxBody: 16 << 10, Errors: []int{401, 403, 409, 422},
		Summary: "Finish a social login, supplying what the provider did not say",
		Description: "Redeems the sealed token of the callback, once (401 `invalid_token`: tampered with, of " +
			"another tenant, expired or used). The person is matched by the provider's subject (provider, issuer, " +
			"sub) and logged in. Otherwise an account with the same e-mail address is linked to the identity and " +
			"logged in only when the provider says `email_verified`; when it does not, 409 `account_exists` and " +
			"nothing changes. Otherwise a new student account is registered as `lms_auth.registration` allows (403 " +
			"when disabled) and `lms_auth.account_must_be_enabled_by_admin` says, with the provider's e-mail " +
			"(verified when the provider says so), given_name and family_name; what the provider left out must come " +
			"in the body, else 422 `details_required` with `errors` naming each missing field (`email`, " +
			"`first_name`, `last_name`) and nothing used up, so the frontend can ask and post again. A blocked " +
			"account, or one whose address still needs verifying, is refused with 422 like every login. The token " +
			"is a regular access token; `lms_auth.socialite_remember_me` decides its class (one month, or " +
			"`lms_auth.token_expiration_minutes`). The answer is the body of POST /api/auth/login."},
		func(ctx context.Context, in *completeInput) (*httpx.Response[auth.Issued], error) {
			b := in.Body
			out, err := s.Complete(ctx, httpx.TenantFrom(ctx), strings.TrimSpace(in.Token), Details{Email: b.Email,
				FirstName: b.FirstName, LastName: b.LastName, Groups: b.Groups, Origin: httpx.Origin(ctx)})
			if err != nil {
				return nil, err
			}
			return auth.LoginResponse(out)
		})
}
