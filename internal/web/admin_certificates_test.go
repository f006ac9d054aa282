package web

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestAdminCertificatesPage: the admin's certificates page lists every
// learner's certificates with their names, narrows them to a course or a
// learner, links the template they are made from, and makes one again,
// back on the list as it was; with the template switched off it says so
// and shows the API's refusal. Students and tutors get the 404 of an
// unknown page (and the API refuses them too), anonymous callers the
// sign-in page, a form without its token 403.
func TestAdminCertificatesPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		ctx := t.Context()
		admin := s.env.ClientAs("admin")
		named := func(u *apitest.User, first, last string) {
			apitest.Must(admin.PatchAdminUsersID(ctx, u.ID, client.UserChangeBody{FirstName: &first, LastName: &last}))(t)
		}
		ada, bo := s.env.NewUser("student"), s.env.NewUser("student")
		named(ada, "Ada", "Lovelace")
		named(bo, "Bo", "Zhang")
		finishCourse(t, s, f.adminToken, ada)
		finishCourse(t, s, f.adminToken, bo)
		all := apitest.Must(admin.GetAdminCertificates(ctx, client.GetAdminCertificatesParams{}))(t).Items
		if len(all) != 2 {
			t.Fatalf("certificates: %+v", all)
		}
		var adas client.Certificate
		for _, c := range all {
			if c.UserID == ada.ID {
				adas = c
			}
		}
		as := func(method, path string, form url.Values, status int) *resp {
			t.Helper()
			return s.must(req{method: method, path: path, token: f.adminToken, form: form}, status)
		}

		// Per role, through the frontend and the API.
		page := "/admin/certificates"
		if r := s.must(req{path: page}, http.StatusSeeOther); r.header.Get("Location") != "/login?next="+url.QueryEscape(page) {
			t.Fatalf("anonymous: %v", r.header)
		}
		for _, tok := range []string{f.studentToken, f.tutorToken} {
			s.must(req{path: page, token: tok}, http.StatusNotFound)
			s.must(req{method: "POST", path: page + "/" + id(adas.ID) + "/regenerate", token: tok}, http.StatusNotFound)
			_, err := s.env.Client("", tok).GetAdminCertificates(ctx, client.GetAdminCertificatesParams{})
			apitest.Refused(t, err, http.StatusForbidden)
			_, err = s.env.Client("", tok).PostAdminCertificatesIDRegenerate(ctx, adas.ID)
			apitest.Refused(t, err, http.StatusForbidden)
		}

		r := as("GET", page, nil, http.StatusOK)
		for _, want := range []string{`<tr id="certificate-` + id(adas.ID) + `"`, ">Ada Lovelace</a>", ">Bo Zhang</a>",
			`<a href="/admin/templates/slot?channel=pdf&amp;event=CourseFinished&amp;recipient=user" id="certificate-template">`, `href="/admin/certificates" aria-current="page"`,
			`<option value="` + id(adas.CourseID) + `">Knot tying</option>`} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("the list lacks %q: %.6000s", want, r.text())
			}
		}
		if strings.Contains(r.text(), `id="certificates-off"`) {
			t.Fatal("the template is on")
		}
		// Narrowed to Ada's course, and to Ada.
		for _, q := range []string{"?course_id=" + id(adas.CourseID), "?user_id=" + id(ada.ID)} {
			r := as("GET", page+q, nil, http.StatusOK)
			if !strings.Contains(r.text(), "Ada Lovelace") || strings.Contains(r.text(), "Bo Zhang") {
				t.Errorf("%s: %.6000s", q, r.text())
			}
		}
		if r := as("GET", page+"?user_id="+id(ada.ID), nil, http.StatusOK); !strings.Contains(r.text(), `id="certificates-learner"`) {
			t.Errorf("the learner filter is not named: %.4000s", r.text())
		}
		// The user page links the user's certificates.
		if r := as("GET", "/admin/users/"+id(ada.ID), nil, http.StatusOK); !strings.Contains(r.text(), `href="/admin/certificates?user_id=`+id(ada.ID)+`" id="user-certificates"`) {
			t.Errorf("user page: %.6000s", r.text())
		}

		// Made again: a new file, back on the narrowed list with a notice.
		s.must(req{method: "POST", path: page + "/" + id(adas.ID) + "/regenerate", token: f.adminToken, noCSRF: true}, http.StatusForbidden)
		r = as("POST", page+"/"+id(adas.ID)+"/regenerate", url.Values{"course_id": {id(adas.CourseID)}, "page": {"1"}}, http.StatusSeeOther)
		loc := r.header.Get("Location")
		if loc != page+"?course_id="+id(adas.CourseID)+"&done=done.certificate" {
			t.Fatalf("after making again: to %q", loc)
		}
		if r := as("GET", loc, nil, http.StatusOK); !strings.Contains(r.text(), "made again from the current template") {
			t.Errorf("no notice: %.4000s", r.text())
		}
		again := apitest.Must(admin.GetAdminCertificates(ctx, client.GetAdminCertificatesParams{UserID: &ada.ID}))(t).Items
		if len(again) != 1 || again[0].URL == adas.URL {
			t.Fatalf("not made again: %+v", again)
		}
		as("POST", page+"/999999/regenerate", nil, http.StatusNotFound)

		// The template switched off: the page says so, and the API's
		// refusal is shown.
		off := false
		tpl := apitest.Must(admin.PostAdminMessageTemplates(ctx, client.CreateTemplateInputBody{Event: "CourseFinished",
			Channel: "pdf", Recipient: "user", Subject: "Certificate", Text: "{{.Course.Title}}", Enabled: &off}))(t)
		r = as("GET", page, nil, http.StatusOK)
		if !strings.Contains(r.text(), `id="certificates-off"`) || !strings.Contains(r.text(), `<a href="/admin/templates/`+id(tpl.ID)+`" id="certificate-template">`) {
			t.Fatalf("switched off: %.4000s", r.text())
		}
		r = as("POST", page+"/"+id(adas.ID)+"/regenerate", nil, http.StatusConflict)
		if !regexp.MustCompile(`(?i)switched off|disabled|off`).MatchString(r.text()) {
			t.Errorf("the refusal: %.3000s", r.text())
		}

		// In Polish and Chinese.
		for lang, want := range map[string]string{"pl": "Wygeneruj ponownie", "zh": "重新生成"} {
			r := s.must(req{path: page, token: f.adminToken, headers: map[string]string{"Accept-Language": lang}}, http.StatusOK)
			if !strings.Contains(r.text(), want) {
				t.Errorf("%s: %.3000s", lang, r.text())
			}
		}
	})
}
