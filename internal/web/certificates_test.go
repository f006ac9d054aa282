package web

import (
	"bytes"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

var certificateLink = regexp.MustCompile(`<a class="button button-small" href="(/api/files/[^"]+)" download>`)

// A learner who finishes a course finds its certificate on the
// certificates page and downloads the PDF through the signed link; an
// admin sees every learner's certificates there and makes one again from
// the current template, which replaces the file; a learner may not.
func TestCertificatesPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		student := s.env.NewUser("student")
		other := s.env.NewUser("student")
		s.must(req{path: "/certificates"}, http.StatusSeeOther)
		r := s.must(req{path: "/certificates", token: student.Token}, http.StatusOK)
		if !strings.Contains(r.text(), "No certificates yet") || strings.Contains(r.text(), "Every learner") {
			t.Fatalf("before finishing: %s", r.body)
		}
		if !strings.Contains(r.text(), `href="/certificates" aria-current="page"`) {
			t.Fatal("the header does not link the page")
		}

		finishCourse(t, s, admin, student)
		r = s.must(req{path: "/certificates", token: student.Token}, http.StatusOK)
		m := certificateLink.FindStringSubmatch(r.text())
		if m == nil || !strings.Contains(r.text(), "Knot tying") {
			t.Fatalf("the certificate is not listed: %s", r.body)
		}
		link := strings.ReplaceAll(m[1], "&amp;", "&")
		pdf := s.must(req{path: link}, http.StatusOK)
		if !bytes.HasPrefix(pdf.body, []byte("%PDF-")) || pdf.header.Get("Content-Type") != "application/pdf" {
			t.Fatalf("download: %s %.20q", pdf.header.Get("Content-Type"), pdf.body)
		}
		if r := s.must(req{path: "/certificates", token: other.Token}, http.StatusOK); strings.Contains(r.text(), "Knot tying") {
			t.Fatal("another learner sees the certificate")
		}

		// The admin's list, and making it again.
		r = s.must(req{path: "/certificates", token: admin}, http.StatusOK)
		row := regexp.MustCompile(`<tr id="certificate-(\d+)"`).FindStringSubmatch(r.text())
		if row == nil || !strings.Contains(r.text(), "Every learner") || !strings.Contains(r.text(), "user "+id(student.ID)) {
			t.Fatalf("admin's list: %s", r.body)
		}
		s.must(req{method: "POST", path: "/certificates/" + row[1] + "/regenerate", token: student.Token}, http.StatusForbidden)
		s.must(req{method: "POST", path: "/certificates/" + row[1] + "/regenerate", token: admin,
			headers: map[string]string{"Origin": "http://evil.test", "Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden)
		apitest.Must(s.env.Client("", admin).PostAdminMessageTemplates(t.Context(), client.CreateTemplateInputBody{
			Event: "CourseFinished", Channel: "pdf", Recipient: "user", Subject: "Knot master", Text: "{{.Course.Title}}"}))(t)
		r = s.must(req{method: "POST", path: "/certificates/" + row[1] + "/regenerate", token: admin}, http.StatusSeeOther)
		if loc := r.header.Get("Location"); !strings.HasPrefix(loc, "/certificates?regenerated="+row[1]) {
			t.Fatalf("after regenerating: %q", loc)
		}
		r = s.must(req{path: r.header.Get("Location"), token: admin}, http.StatusOK)
		if !strings.Contains(r.text(), "made again from the current template") {
			t.Fatal("no notice after regenerating")
		}
		s.must(req{path: "/certificates/999999/regenerate", method: "POST", token: admin}, http.StatusNotFound)
		r = s.must(req{path: "/certificates", token: student.Token}, http.StatusOK)
		m2 := certificateLink.FindStringSubmatch(r.text())
		if m2 == nil || m2[1] == m[1] {
			t.Fatal("the learner's link did not move to the new file")
		}
		// The replaced file is gone; the new one holds the new template's title.
		s.must(req{path: link}, http.StatusNotFound)
		pdf = s.must(req{path: strings.ReplaceAll(m2[1], "&amp;", "&")}, http.StatusOK)
		cmd := exec.Command("pdftotext", "-q", "-", "-")
		cmd.Stdin = bytes.NewReader(pdf.body)
		text, err := cmd.Output()
		if err != nil {
			t.Fatalf("pdftotext (Debian package poppler-utils): %v", err)
		}
		if !strings.Contains(string(text), "Knot master") {
			t.Fatalf("the new certificate's text:\n%s", text)
		}
	})
}

// finishCourse has learner finish a new course, "Knot tying", of one
// reading topic through the frontend, and delivers the events, so that
// its certificate is made.
func finishCourse(t *testing.T, s *stack, admin string, learner *apitest.User) {
	t.Helper()
	ctx, c := t.Context(), s.env.Client("", admin)
	course := apitest.Must(c.PostAdminCourses(ctx, client.CourseBody{Title: "Knot tying", Status: client.Ptr("published"),
		Public: client.Ptr(true)}))(t).ID
	lesson := apitest.Must(c.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Basics"}))(t).ID
	topic := apitest.Must(c.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "The reef knot",
		Topicable: richTextClass, Markdown: client.Ptr("Right over left, left over right.")}))(t).ID
	// Finishing the course's only topic finishes the course.
	s.must(req{method: "POST", path: "/learn/" + id(course) + "/" + id(topic) + "/complete", token: learner.Token},
		http.StatusSeeOther)
	s.env.DeliverEvents()
}
