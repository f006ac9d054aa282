package certificates

import (
	"context"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/lms-platform/lms/internal/access"
	"github.com/lms-platform/lms/internal/httpx"
)

type listInput struct {
	httpx.PageQuery
	CourseID int64 `query:"course_id" minimum:"0" doc:"Only certificates of this course."`
}

type adminListInput struct {
	httpx.PageQuery
	UserID   int64 `query:"user_id" minimum:"0" doc:"Only this learner's certificates."`
	CourseID int64 `query:"course_id" minimum:"0" doc:"Only certificates of this course."`
}

type idInput struct {
	ID int64 `path:"id" doc:"Certificate id."`
}

var tags = []string{"certificates"}

const doc = "A learner who finishes a course (event CourseFinished) gets a certificate: a PDF made by the PDF service " +
	"from the tenant's CourseFinished pdf template (title and lines; see /api/admin/message-templates), with fonts " +
	"for Latin, Polish and CJK text. url is a signed download link (GET /api/files/...), valid for an hour at least."

// Routes registers the certificate routes.
func Routes(api huma.API, s *Service) {
	// Certificates are the record of a finished course: the caller's own are
	// progress; every learner's (admins) are users' records, which
	// progress:read ("the user's own progress") never opens.
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/certificates", Tags: tags, Who: httpx.User,
		Scope:   "progress:read",
		Summary: "The caller's course certificates, newest first", Description: doc},
		func(ctx context.Context, in *listInput) (*httpx.PageResponse[Certificate], error) {
			f := Filter{UserID: httpx.PrincipalFrom(ctx).UserID, CourseID: in.CourseID}
			return s.page(ctx, f, in.PageQuery)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodGet, Path: "/api/admin/certificates", Tags: tags, Who: httpx.User,
		Scope:   "users:read",
		Summary: "Every learner's certificates (admins)", Description: doc},
		func(ctx context.Context, in *adminListInput) (*httpx.PageResponse[Certificate], error) {
			if !httpx.PrincipalFrom(ctx).HasRole(access.Admin) {
				return nil, errUnauthorized
			}
			return s.page(ctx, Filter{UserID: in.UserID, CourseID: in.CourseID}, in.PageQuery)
		})
	httpx.Handle(api, httpx.Route{Method: http.MethodPost, Path: "/api/admin/certificates/{id}/regenerate", Tags: tags,
		Scope: "users:write",
		Who:   httpx.User, Summary: "Make a certificate again from the current template (admins); 409 when the template is switched off",
		Description: doc, Errors: []int{409}},
		func(ctx context.Context, in *idInput) (*httpx.Response[Certificate], error) {
			if !httpx.PrincipalFrom(ctx).HasRole(access.Admin) {
				return nil, errUnauthorized
			}
			c, err := s.Regenerate(ctx, httpx.TenantFrom(ctx), in.ID)
			if err != nil {
				return nil, err
			}
			return httpx.OKMessage(c, "Certificate regenerated.")
		})
}

func (s *Service) page(ctx context.Context, f Filter, q httpx.PageQuery) (*httpx.PageResponse[Certificate], error) {
	f.Offset, f.Limit = q.Offset(), q.PerPage
	items, total, err := s.List(ctx, httpx.TenantFrom(ctx), f)
	if err != nil {
		return nil, err
	}
	return httpx.Paged(items, q, total)
}
