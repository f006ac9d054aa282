package livingcourse

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/httpx"
	"github.com/lms-platform/lms/internal/webhooks"
)

type connectionCreateInput struct {
	Body struct {
		URL         string  `json:"url" maxLength:"2000" doc:"The external Markdown document (http or https, a public address)."`
		Topics      []int64 `json:"topics" minItems:"1" maxItems:"50" doc:"Rich text topics (of courses you may edit) the document is imported into."`
		Description string  `json:"description,omitempty" maxLength:"1000"`
	}
}

type connectionIDInput struct {
	ID int64 `path:"id" doc:"Connection id."`
}

type connectionListInput struct {
	httpx.PageQuery
}

// announceInput reads the body itself: the signature covers its exact
// bytes, which the source may shape as it likes.
type announceInput struct {
	ID int64 `path:"id" doc:"Connection id."`
	webhooks.Signed
	RawBody []byte
}

const doc = "A living-course connection keeps rich text topics in step with a Markdown document kept elsewhere (a " +
	"repository's raw file, a LiaScript or documentation page). The source announces a change by POSTing to the " +
	"connection's webhook_path, signed with the connection's secret (Standard Webhooks); each accepted announcement " +
	"queues a check that fetches the document through the outbound-fetch guard (public addresses only, 2 MiB) with " +
	"If-None-Match, and when its ETag or SHA-256 changed imports it as the Markdown of every linked topic. A " +
	"connection is checked at most 48 times a UTC day. Authors manage the connections they made, course admins " +
	"every one; linking a topic needs the right to edit it."

// Routes registers the admin routes of connections and the webhook.
func Routes(api huma.API, s *Service) {
	tags := []string{"living-course"}
	base := "/api/admin/living-course/connections"
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: base, Tags: tags, Who: httpx.User, Scope: "courses:read",
		Summary: "The living-course connections you manage (authors)", Description: doc},
		func(ctx context.Context, in *connectionListInput) (*httpx.PageResponse[Connection], error) {
			items, total, err := s.List(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Offset(), in.PerPage)
			if err != nil {
				return nil, err
			}
			return httpx.Paged(items, in.PageQuery, total)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: base, Tags: tags, Who: httpx.User, Scope: "courses:write",
		Status: http.StatusCreated, Credentials: true, Errors: []int{422},
		Summary:     "Connect an external Markdown document to rich text topics (authors); the answer carries the signing secret, once",
		Description: doc},
		func(ctx context.Context, in *connectionCreateInput) (*httpx.Response[Connection], error) {
			c, err := s.Create(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.Body.URL, in.Body.Topics, in.Body.Description)
			if err != nil {
				return nil, err
			}
			return httpx.Created(c, "Living-course connection created.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: base + "/{id}/secret", Tags: tags, Who: httpx.User,
		Scope: "courses:write", Credentials: true,
		Summary: "Give a connection a new signing secret; the old one stops at once (authors)", Description: doc},
		func(ctx context.Context, in *connectionIDInput) (*httpx.Response[Connection], error) {
			c, err := s.Rotate(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(c, "The connection has a new secret.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodDelete, Path: base + "/{id}", Tags: tags, Who: httpx.User,
		Scope:   "courses:write",
		Summary: "Remove a connection; its topics keep what was imported (authors)", Description: doc},
		func(ctx context.Context, in *connectionIDInput) (*httpx.Response[*httpx.Empty], error) {
			if err := s.Delete(ctx, httpx.TenantFrom(ctx), httpx.PrincipalFrom(ctx), in.ID); err != nil {
				return nil, err
			}
			return httpx.Done("Living-course connection deleted.")
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/living-course/webhooks/{id}", Tags: tags,
		Who: httpx.Anyone, Scope: httpx.NoTokens, Status: http.StatusAccepted, MaxBody: 64 << 10,
		Limit:   &httpx.RateLimit{Limit: 60, Per: httpx.PerParam, Param: "id"},
		Errors:  []int{401, 409},
		Summary: "The source of a living-course connection changed: queue a check of it (signed webhook)",
		Description: "Any body (the signature covers its bytes; it is not read otherwise). Each accepted call queues " +
			"one check of the connection's source; 60 calls a minute per connection, and at most 48 checks per " +
			"connection per UTC day: past them the call answers 429 with Retry-After until the next day. " +
			webhooks.SignedDoc},
		func(ctx context.Context, in *announceInput) (*httpx.Response[Accepted], error) {
			a, err := s.Announce(ctx, httpx.TenantFrom(ctx), in.ID, in.Signed, in.RawBody)
			if err != nil {
				return nil, err
			}
			return &httpx.Response[Accepted]{Status: http.StatusAccepted,
				Body: httpx.Envelope[Accepted]{Success: true, Message: "A check of the source was queued.", Data: a}}, nil
		})
}
