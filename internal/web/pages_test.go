package web

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestLearnerPages walks a learner through the server-rendered pages
// without any script: sign in, find the course, read a topic, mark it
// complete, hand in a project, see the progress, change the profile and
// sign out (which revokes the token).
func TestLearnerPages(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "Page course")
		u := s.env.NewUser("student")

		// Anonymous: the catalogue, the course page with its outline.
		r := s.must(req{path: "/courses?q=Page"}, http.StatusOK)
		if !strings.Contains(r.text(), `href="/courses/`+id(c.course)+`"`) {
			t.Fatal("the search finds the course")
		}
		if r.header.Get("Content-Security-Policy") == "" || r.header.Get("Cache-Control") != "no-store" {
			t.Fatalf("page headers: %v", r.header)
		}
		r = s.must(req{path: "/courses/" + id(c.course)}, http.StatusOK)
		for _, want := range []string{"Page course", "Welcome", "Your project", "A picture"} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("course page lacks %q", want)
			}
		}
		s.must(req{path: "/courses/abc"}, http.StatusNotFound)
		s.must(req{path: "/my"}, http.StatusSeeOther)

		// Sign in: the token goes into an httpOnly cookie only.
		r = s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {"wrong-password"}}},
			http.StatusUnprocessableEntity)
		if r.cookie(sessionCookie) != nil || !strings.Contains(r.text(), "not right") {
			t.Fatal("a wrong password shows the form again")
		}
		r = s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {u.Password},
			"next": {"/learn/" + id(c.course)}}}, http.StatusSeeOther)
		sess := r.cookie(sessionCookie)
		if sess == nil || !sess.HttpOnly || sess.SameSite != http.SameSiteLaxMode || sess.Path != "/" ||
			r.header.Get("Location") != "/learn/"+id(c.course) || strings.Contains(r.text(), sess.Value) {
			t.Fatalf("login: %v %v", r.header.Get("Location"), r.header["Set-Cookie"])
		}
		tok := sess.Value
		// Only local paths are followed after signing in.
		r = s.must(req{method: "POST", path: "/login", form: url.Values{"email": {u.Email}, "password": {u.Password},
			"next": {"//evil.example/"}}}, http.StatusSeeOther)
		if r.header.Get("Location") != "/my" {
			t.Fatalf("open redirect: %q", r.header.Get("Location"))
		}

		r = s.must(req{path: "/learn/" + id(c.course), token: tok}, http.StatusOK)
		if !strings.Contains(r.text(), "0 of 5 topics complete") {
			t.Fatalf("program page: %s", r.body)
		}
		// Each kind's page.
		r = s.must(req{path: "/learn/" + id(c.course) + "/" + id(c.reading), token: tok}, http.StatusOK)
		if !strings.Contains(r.text(), "<strong>first</strong>") || !strings.Contains(r.text(), `data-mode="read"`) ||
			strings.Contains(r.text(), tok) {
			t.Fatal("rich text page")
		}
		r = s.must(req{path: "/learn/" + id(c.course) + "/" + id(c.image), token: tok}, http.StatusOK)
		img := regexp.MustCompile(`<img src="(/api/files/[^"]+)"`).FindStringSubmatch(r.text())
		if img == nil {
			t.Fatal("image page has no signed image link")
		}
		// The signed link is served through the frontend, without a token.
		file := s.must(req{path: strings.ReplaceAll(img[1], "&amp;", "&")}, http.StatusOK)
		if !bytes.HasPrefix(file.body, []byte("\x89PNG")) {
			t.Fatal("the image bytes pass through")
		}
		r = s.must(req{path: "/learn/" + id(c.course) + "/" + id(c.pdf), token: tok}, http.StatusOK)
		if !strings.Contains(r.text(), `<iframe src="/api/files/`) {
			t.Fatal("PDF page")
		}
		s.must(req{path: "/learn/" + id(c.course) + "/999999", token: tok}, http.StatusNotFound)

		// No-script completion.
		r = s.must(req{method: "POST", path: "/learn/" + id(c.course) + "/" + id(c.reading) + "/complete", token: tok},
			http.StatusSeeOther)
		r = s.must(req{path: r.header.Get("Location"), token: tok}, http.StatusOK)
		if !strings.Contains(r.text(), "Marked as complete.") || !strings.Contains(r.text(), `data-status="1"`) {
			t.Fatal("the topic shows as complete")
		}

		// A project upload, streamed to the API.
		var body bytes.Buffer
		w := multipart.NewWriter(&body)
		w.WriteField(csrfField, csrfMAC(testCSRFSecret, csrfForm))
		part, _ := w.CreateFormFile("file", "work.txt")
		part.Write([]byte("my work\n"))
		w.Close()
		r = s.must(req{method: "POST", path: "/learn/" + id(c.course) + "/" + id(c.project) + "/project", token: tok,
			body: &body, headers: map[string]string{"Content-Type": w.FormDataContentType()}}, http.StatusSeeOther)
		if !strings.HasSuffix(r.header.Get("Location"), "?done=project") {
			t.Fatalf("project: %v", r.header.Get("Location"))
		}

		// My learning: two topics complete, by name.
		r = s.must(req{path: "/my", token: tok}, http.StatusOK)
		for _, want := range []string{"Page course", "2 of 5 topics", "Welcome", "complete"} {
			if !strings.Contains(r.text(), want) {
				t.Fatalf("my learning lacks %q", want)
			}
		}

		// Profile.
		s.must(req{method: "POST", path: "/profile", token: tok, form: url.Values{"first_name": {"Ada"}, "last_name": {"Learner"}}},
			http.StatusSeeOther)
		r = s.must(req{path: "/profile", token: tok}, http.StatusOK)
		if !strings.Contains(r.text(), "Ada Learner") {
			t.Fatal("profile name")
		}

		// Sign out: the cookie goes and the token is revoked at the API.
		r = s.must(req{method: "POST", path: "/logout", token: tok}, http.StatusSeeOther)
		if c := r.cookie(sessionCookie); c == nil || c.MaxAge >= 0 {
			t.Fatal("logout clears the cookie")
		}
		s.must(req{path: "/bff/api/profile/me", token: tok}, http.StatusUnauthorized)
	})
}

// TestAnonymousCannotLearnClosedCourse: a course that is not public sends
// anonymous visitors to sign in, and signed-in strangers get 403.
func TestClosedCourse(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	admin := s.env.As("admin").Token
	course := apitest.Must(s.env.Client("", admin).PostAdminCourses(t.Context(), client.CourseBody{Title: "Closed",
		Status: client.Ptr("published")}))(t)
	cid := id(course.ID)
	r := s.must(req{path: "/learn/" + cid}, http.StatusSeeOther)
	if r.header.Get("Location") != "/login?next=%2Flearn%2F"+cid {
		t.Fatalf("Location %q", r.header.Get("Location"))
	}
	r = s.must(req{path: "/courses/" + cid}, http.StatusOK)
	if !strings.Contains(r.text(), "open to enrolled learners") {
		t.Fatal("the course page says who may learn")
	}
	u := s.env.NewUser("student")
	s.must(req{path: "/learn/" + cid, token: u.Token}, http.StatusForbidden)
}
