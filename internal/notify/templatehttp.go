package notify

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/apperr"
	"github.com/lms-platform/lms/internal/httpx"
)

// TemplateBody is what an admin writes of a template.
type TemplateBody struct {
	Subject string `json:"subject" maxLength:"65536" doc:"text/template source of the subject (email) or the title (pdf)."`
	Text    string `json:"text" maxLength:"65536" doc:"text/template source of the plain-text part (email) or of the lines under the title (pdf)."`
	HTML    string `json:"html,omitempty" maxLength:"65536" doc:"html/template source of the HTML part (email only); values are escaped for their place."`
	Enabled *bool  `json:"enabled,omitempty" doc:"false switches the slot off: nothing is sent on this channel for the event. Default true."`
}

func (b TemplateBody) template(s Slot) Template {
	return Template{Slot: s, Subject: b.Subject, Text: b.Text, HTML: b.HTML, Enabled: b.Enabled == nil || *b.Enabled}
}

type createTemplateInput struct {
	Body struct {
		Slot
		TemplateBody
	}
}

type templateIDInput struct {
	ID int64 `path:"id" doc:"Template id."`
}

type updateTemplateInput struct {
	ID   int64 `path:"id" doc:"Template id."`
	Body TemplateBody
}

type previewInput struct {
	Body struct {
		Slot
		Subject *string `json:"subject,omitempty" maxLength:"65536" doc:"Omitted: the slot's current subject."`
		Text    *string `json:"text,omitempty" maxLength:"65536" doc:"Omitted: the slot's current text."`
		HTML    *string `json:"html,omitempty" maxLength:"65536" doc:"Omitted: the slot's current HTML."`
	}
}

// Preview is a template rendered with sample data.
type TemplatePreview struct {
	Rendered
	Data      Data     `json:"data" doc:"The sample values the template was rendered with."`
	Variables []string `json:"variables" doc:"Every value a template may print."`
}

var templateTags = []string{"message templates"}

const templatesDoc = "Message templates send an event on a channel (the Events table: email for most, pdf for the " +
	"CourseFinished certificate). Each slot (event, channel, recipient) has a built-in English default; a tenant's own " +
	"template of a slot replaces it. Subjects and text parts are Go text/template sources, HTML parts html/template " +
	"sources (every value escaped), printing the fields of the event's data: .User.Name, .User.Email, .Course.Title, " +
	".Group.Title, .Topic.Title, .Date, .Expires, .Platform.Name, .Platform.URL, .Link, .Token (ForgotPassword). " +
	"A template that does not parse, names a field that does not exist, defines or calls other templates, ranges over " +
	"a number or renders more than 256 KiB is refused with 422 naming the part and the problem. " +
	"A tenant's ForgotPassword template replaces the default reset mail. Admins only."

// TemplateRoutes registers the admin routes of message templates.
func TemplateRoutes(api huma.API, ts *Templates) {
	// Message templates are tenant configuration, as settings are; a
	// preview renders without saving, so reading suffices.
	route := func(method, path string, scope httpx.Scope, summary string, status int, errs ...int) httpx.Route {
		return httpx.Route{Method: method, Path: path, Scope: scope, Tags: templateTags, Who: httpx.User, Summary: summary,
			Description: templatesDoc, Status: status, Errors: errs}
	}
	httpx.Handle(api, route(http.MethodGet, "/api/admin/message-templates", "settings:read",
		"Every template slot with the template it sends (the tenant's own or the default)", 0),
		func(ctx context.Context, _ *struct{}) (*httpx.Response[[]Template], error) {
			if err := allowTemplates(ctx); err != nil {
				return nil, err
			}
			return okOr(ts.List(ctx, httpx.TenantFrom(ctx)))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/message-templates", "settings:write",
		"Create the tenant's own template of a slot; 409 when the slot has one", 201, 409, 422),
		func(ctx context.Context, in *createTemplateInput) (*httpx.Response[Template], error) {
			if err := allowTemplates(ctx); err != nil {
				return nil, err
			}
			tpl, err := ts.Create(ctx, httpx.TenantFrom(ctx), in.Body.TemplateBody.template(in.Body.Slot))
			if err != nil {
				return nil, err
			}
			return httpx.Created(tpl, "Template created.")
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/message-templates/preview", "settings:read",
		"Render a slot's template, or the parts given, with sample data; nothing is saved or sent", 0, 422),
		func(ctx context.Context, in *previewInput) (*httpx.Response[TemplatePreview], error) {
			if err := allowTemplates(ctx); err != nil {
				return nil, err
			}
			return ts.preview(ctx, in)
		})
	httpx.Handle(api, route(http.MethodGet, "/api/admin/message-templates/{id}", "settings:read", "One of the tenant's own templates", 0),
		func(ctx context.Context, in *templateIDInput) (*httpx.Response[Template], error) {
			if err := allowTemplates(ctx); err != nil {
				return nil, err
			}
			return okOr(ts.Get(ctx, httpx.TenantFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPut, "/api/admin/message-templates/{id}", "settings:write",
		"Replace the texts and enabled flag of one of the tenant's templates", 0, 422),
		func(ctx context.Context, in *updateTemplateInput) (*httpx.Response[Template], error) {
			if err := allowTemplates(ctx); err != nil {
				return nil, err
			}
			return okOr(ts.Update(ctx, httpx.TenantFrom(ctx), in.ID, in.Body.template(Slot{})))
		})
	httpx.Handle(api, route(http.MethodDelete, "/api/admin/message-templates/{id}", "settings:write",
		"Delete one of the tenant's templates; its slot sends the default again (answered with it)", 0),
		func(ctx context.Context, in *templateIDInput) (*httpx.Response[Template], error) {
			if err := allowTemplates(ctx); err != nil {
				return nil, err
			}
			return okOr(ts.Delete(ctx, httpx.TenantFrom(ctx), in.ID))
		})
	httpx.Handle(api, route(http.MethodPost, "/api/admin/message-templates/{id}/restore-default", "settings:write",
		"Put the default's texts back into one of the tenant's templates and enable it (it keeps its id)", 0),
		func(ctx context.Context, in *templateIDInput) (*httpx.Response[Template], error) {
			if err := allowTemplates(ctx); err != nil {
				return nil, err
			}
			return okOr(ts.RestoreDefault(ctx, httpx.TenantFrom(ctx), in.ID))
		})
}

// allowTemplates: templates are tenant configuration, which admins manage
// (as settings).
func allowTemplates(ctx context.Context) error {
	if !httpx.PrincipalFrom(ctx).HasRole(access.Admin) {
		return errUnauthorized
	}
	return nil
}

func okOr[T any](v T, err error) (*httpx.Response[T], error) {
	if err != nil {
		return nil, err
	}
	return httpx.OK(v)
}

func (ts *Templates) preview(ctx context.Context, in *previewInput) (*httpx.Response[TemplatePreview], error) {
	b := in.Body
	if _, ok := Default(b.Slot); !ok {
		return nil, apperr.Field("event", "No template exists for "+b.Slot.String()+".")
	}
	tpl, err := ts.Effective(ctx, httpx.TenantFrom(ctx).DB, b.Slot)
	if err != nil {
		return nil, err
	}
	for _, part := range []struct {
		given *string
		dst   *string
	}{{b.Subject, &tpl.Subject}, {b.Text, &tpl.Text}, {b.HTML, &tpl.HTML}} {
		if part.given != nil {
			*part.dst = *part.given
		}
	}
	if err := Check(tpl); err != nil {
		return nil, err
	}
	d := Sample(b.Event)
	r, err := Render(tpl, d)
	if err != nil {
		return nil, err
	}
	return httpx.OK(TemplatePreview{Rendered: r, Data: d, Variables: Variables})
}
