package web

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/lms-platform/lms/client"
)

// The certificates page of the admin pages (/admin/certificates): every
// learner's certificates (GET /api/admin/certificates), a page at a time,
// narrowed to a course or a learner, each with its PDF and "Make again"
// (POST /api/admin/certificates/{id}/regenerate); and the CourseFinished
// PDF template they are made from, edited on the templates page. The API
// offers no more about certificates: they are made when a learner
// finishes a course.

type certificatesPage struct {
	Items    []certificateRow
	Courses  []client.CourseView
	CourseID int64
	UserID   int64
	// Learner names the learner the list is narrowed to.
	Learner     string
	Total, Page int
	Prev, Next  string
	// Template is the address of the CourseFinished PDF template's page,
	// Enabled whether certificates are made at all.
	Template string
	Enabled  bool
}

// certificateRow is a certificate with its learner's name ("" when the
// learner is gone).
type certificateRow struct {
	client.Certificate
	Learner string
}

// certificateEvent and certificateChannel name the template certificates
// are made from.
const (
	certificateEvent   = "CourseFinished"
	certificateChannel = "pdf"
)

func (h *Handler) adminCertificates(c *adminCall) {
	ctx := c.r.Context()
	d := certificatesPage{CourseID: queryInt(c.r, "course_id"), UserID: queryInt(c.r, "user_id")}
	p := client.GetAdminCertificatesParams{PerPage: client.Ptr(int64(adminPerPage))}
	if n := queryInt(c.r, "page"); n > 0 {
		p.Page = &n
	}
	if d.CourseID > 0 {
		p.CourseID = &d.CourseID
	}
	if d.UserID > 0 {
		p.UserID = &d.UserID
	}
	page, err := c.api.GetAdminCertificates(ctx, p)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	d.Total, d.Page = page.Meta.Total, page.Meta.CurrentPage
	d.Prev, d.Next = pager(certificateFilters(d.CourseID, d.UserID), "/admin/certificates", page.Meta)
	names := map[int64]string{}
	for _, cert := range page.Items {
		if _, ok := names[cert.UserID]; !ok {
			if names[cert.UserID], err = c.learnerName(cert.UserID); err != nil {
				h.adminFailed(c, err)
				return
			}
		}
		d.Items = append(d.Items, certificateRow{Certificate: cert, Learner: names[cert.UserID]})
	}
	if d.UserID > 0 {
		if d.Learner, err = c.learnerName(d.UserID); err != nil {
			h.adminFailed(c, err)
			return
		}
	}
	courses, err := c.api.GetAdminCourses(ctx, client.GetAdminCoursesParams{PerPage: client.Ptr(int64(100))})
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	d.Courses = slices.SortedFunc(slices.Values(courses.Items), func(a, b client.CourseView) int {
		return cmp.Or(cmp.Compare(a.Title, b.Title), cmp.Compare(a.ID, b.ID))
	})
	templates, err := c.api.GetAdminMessageTemplates(ctx)
	if err != nil {
		h.adminFailed(c, err)
		return
	}
	for _, t := range templates {
		if t.Event == certificateEvent && t.Channel == certificateChannel {
			d.Template, d.Enabled = templateLink(t), t.Enabled
			break
		}
	}
	c.notice()
	h.adminPage(c, http.StatusOK, "certificates", "certificates.title", d)
}

// templateLink is the address of a template's page: its id, or its slot
// while it is the built-in default.
func templateLink(t client.Template) string {
	if t.ID != 0 {
		return "/admin/templates/" + strconv.FormatInt(t.ID, 10)
	}
	return "/admin/templates/slot?" + url.Values{"event": {t.Event}, "channel": {t.Channel}, "recipient": {t.Recipient}}.Encode()
}

// learnerName is a user's name, else e-mail; "" when the user is gone.
func (c *adminCall) learnerName(id int64) (string, error) {
	u, err := c.api.GetAdminUsersID(c.r.Context(), id)
	if client.StatusOf(err) == http.StatusNotFound {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return nameOf(u.Name, u.Email), nil
}

// certificateFilters are the list's filters as a query.
func certificateFilters(course, user int64) url.Values {
	q := url.Values{}
	if course > 0 {
		q.Set("course_id", strconv.FormatInt(course, 10))
	}
	if user > 0 {
		q.Set("user_id", strconv.FormatInt(user, 10))
	}
	return q
}

// adminCertificateRegenerate makes a certificate again from the current
// template and goes back to the list as it was (its filters and page are
// the form's); the API's refusal (409 while the template is switched
// off) is shown with its message.
func (h *Handler) adminCertificateRegenerate(c *adminCall) {
	id := c.pathID("id")
	if id == 0 {
		h.notFound(c.w, c.r)
		return
	}
	_, err := c.api.PostAdminCertificatesIDRegenerate(c.r.Context(), id)
	form := func(name string) int64 {
		n, _ := strconv.ParseInt(c.r.PostFormValue(name), 10, 64)
		return max(n, 0)
	}
	back := certificateFilters(form("course_id"), form("user_id"))
	if p := form("page"); p > 1 {
		back.Set("page", strconv.FormatInt(p, 10))
	}
	path := "/admin/certificates"
	if len(back) > 0 {
		path += "?" + back.Encode()
	}
	h.adminActed(c, err, path, "done.certificate")
}
