package auth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

// Flag is a boolean that also accepts 0/1 and "0"/"1", as remember_me does.
type Flag bool

func (f *Flag) UnmarshalJSON(b []byte) error {
	switch strings.Trim(string(b), `"`) {
	case "true", "1":
		*f = true
	case "false", "0", "null", "":
		*f = false
	default:
		return &json.UnsupportedValueError{Str: string(b)}
	}
	return nil
}

// Schema describes Flag in the OpenAPI document.
func (Flag) Schema(huma.Registry) *huma.Schema {
	zero, one := 0.0, 1.0
	return &huma.Schema{
		Description: "true, false, 1 or 0",
		OneOf: []*huma.Schema{{Type: "boolean"}, {Type: "integer", Minimum: &zero, Maximum: &one},
			{Type: "string", Enum: []any{"0", "1", "true", "false"}}},
	}
}

type loginInput struct {
	Body struct {
		Email      string `json:"email" minLength:"1" maxLength:"254"`
		Password   string `json:"password" minLength:"1" maxLength:"256"`
		RememberMe Flag   `json:"remember_me,omitempty" doc:"true or 1 for a one-month token"`
	}
}

type registerInput struct {
	Body struct {
		Email                string  `json:"email" minLength:"1" maxLength:"254"`
		Password             string  `json:"password" minLength:"1" maxLength:"256"`
		PasswordConfirmation string  `json:"password_confirmation,omitempty"`
		FirstName            string  `json:"first_name" minLength:"1" maxLength:"255"`
		LastName             string  `json:"last_name" minLength:"1" maxLength:"255"`
		Groups               []int64 `json:"groups,omitempty" doc:"ids of registerable groups to join"`
		ReturnURL            string  `json:"return_url,omitempty" format:"uri"`
	}
}

type emailInput struct {
	Body struct {
		Email     string `json:"email" minLength:"1" maxLength:"254"`
		ReturnURL string `json:"return_url,omitempty" format:"uri"`
	}
}

type resetInput struct {
	Body struct {
		Email    string `json:"email" minLength:"1" maxLength:"254"`
		Token    string `json:"token" minLength:"1" maxLength:"64"`
		Password string `json:"password" minLength:"1" maxLength:"256"`
	}
}

type verifyInput struct {
	ID        int64  `path:"id"`
	Hash      string `path:"hash" maxLength:"64"`
	Expires   string `query:"expires"`
	Signature string `query:"signature"`
}

type impersonateInput struct {
	Body struct {
		UserID int64 `json:"user_id" minimum:"1"`
	}
}

var tags = []string{"auth"}

// Routes registers the authentication routes of the spec's table.
func Routes(api huma.API, s *Service) {
	// Sessions, credentials and accounts: never with a scoped token
	// (Scope NoTokens on every route here).
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/login", Tags: tags, Credentials: true,
		Scope:   httpx.NoTokens,
		Summary: "Log in with e-mail and password; 422 on wrong credentials, blocked or unverified accounts"},
		func(ctx context.Context, in *loginInput) (*httpx.Response[Issued], error) {
			out, err := s.Login(ctx, httpx.TenantFrom(ctx), in.Body.Email, in.Body.Password, bool(in.Body.RememberMe))
			if err != nil {
				return nil, err
			}
			return LoginResponse(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/refresh", Tags: tags, Who: httpx.User,
		Scope:   httpx.NoTokens,
		Summary: "Replace the current token with a new one of the same lifetime class"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[Issued], error) {
			out, err := s.Refresh(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx))
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/logout", Tags: tags, Who: httpx.User,
		Scope:   httpx.NoTokens,
		Summary: "Revoke the current token"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[*httpx.Empty], error) {
			if err := s.Logout(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx)); err != nil {
				return nil, err
			}
			return httpx.Done("Logged out.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/register", Tags: tags, Status: http.StatusCreated, Credentials: true,
		Scope:   httpx.NoTokens,
		Summary: "Register an account, as the lms_auth registration settings allow"},
		func(ctx context.Context, in *registerInput) (*httpx.Response[accounts.Summary], error) {
			b := in.Body
			if b.PasswordConfirmation != "" && b.PasswordConfirmation != b.Password {
				return nil, apperr.Field("password", "The password confirmation does not match.")
			}
			u, err := s.Register(ctx, httpx.TenantFrom(ctx), Registration{Email: b.Email, Password: b.Password,
				FirstName: b.FirstName, LastName: b.LastName, Groups: b.Groups, ReturnURL: b.ReturnURL, Origin: origin(ctx)})
			if err != nil {
				return nil, err
			}
			return httpx.Created(accounts.SummaryOf(u), "Registration successful.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/registerable-groups", Tags: tags,
		Scope:   httpx.NoTokens,
		Summary: "Groups a new account may join at registration"},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]accounts.Group], error) {
			groups, err := accounts.RegisterableGroups(ctx, httpx.TenantFrom(ctx).DB)
			if err != nil {
				return nil, err
			}
			return httpx.OK(groups)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/password/forgot", Tags: tags,
		Scope:   httpx.NoTokens,
		Summary: "Mail a password reset token (answers the same whether or not the address has an account)"},
		func(ctx context.Context, in *emailInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.ForgotPassword(ctx, httpx.TenantFrom(ctx), in.Body.Email, in.Body.ReturnURL); err != nil {
				return nil, err
			}
			return httpx.Done("If the address has an account, a reset link is on its way.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/password/reset", Tags: tags, Credentials: true,
		Scope:   httpx.NoTokens,
		Summary: "Set a new password with a reset token"},
		func(ctx context.Context, in *resetInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.ResetPassword(ctx, httpx.TenantFrom(ctx), in.Body.Email, in.Body.Token, in.Body.Password); err != nil {
				return nil, err
			}
			return httpx.Done("Your password has been reset.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/auth/email/verify/{id}/{hash}", Tags: tags,
		Scope:   httpx.NoTokens,
		Summary: "Verify an e-mail address through the signed link"},
		func(ctx context.Context, in *verifyInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.VerifyEmail(ctx, httpx.TenantFrom(ctx), in.ID, in.Hash, in.Expires, in.Signature); err != nil {
				return nil, err
			}
			return httpx.Done("Your e-mail address is verified.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/auth/email/resend", Tags: tags, Who: httpx.User,
		Scope:   httpx.NoTokens,
		Summary: "Mail the verification link again", Limit: &httpx.RateLimit{Limit: 6, Per: httpx.PerUser}},
		func(ctx context.Context, _ *struct{}) (*httpx.Response[*httpx.Empty], error) {
			if err := s.SendVerification(ctx, httpx.TenantFrom(ctx), origin(ctx), httpx.PrincipalFrom(ctx).UserID); err != nil {
				return nil, err
			}
			return httpx.Done("Verification link sent.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/admin/auth/impersonate", Tags: tags, Who: httpx.User, Credentials: true,
		Scope:   httpx.NoTokens,
		Summary: "Issue the admin a token acting as another user (permission user_impersonate)"},
		func(ctx context.Context, in *impersonateInput) (*httpx.Response[Issued], error) {
			out, err := s.Impersonate(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Body.UserID)
			if err != nil {
				return nil, err
			}
			return httpx.OK(out)
		})
}

func origin(ctx context.Context) string { return httpx.Origin(ctx) }

func withQuery(base string, params map[string]string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	for k, v := range params {
		q.Set(k, v)
	}
	u.RawQuery = q.Encode()
	return u.String()
}
