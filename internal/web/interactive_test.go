package web

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/kinds/interactive"
	"github.com/lms-platform/lms/internal/kinds/interactive/interactivetest"
	"github.com/lms-platform/lms/internal/kinds/liascript"
)

// TestInteractivePage checks that an interactive topic's page frames the
// app in a sandbox without our origin, that the app's files and CSP
// reports pass through the frontend, and that the app's reports reach
// the progress route through /bff.
func TestInteractivePage(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "App course")
		body, ctype := interactivetest.Upload(t, interactivetest.Manifest)
		pkg := s.env.Do(apitest.Request{Method: "POST", Path: "/api/admin/interactive", Token: admin, Body: body, Type: ctype})
		adminClient := s.env.Client("", admin)
		topic := apitest.Must(adminClient.PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: c.lesson, Title: "Pendulum",
			Topicable: interactive.Class, Package: client.Ptr(int64(pkg.Number("data.id"))), Completion: client.Ptr("on_complete"),
			Text: client.Ptr("Swing **it**.")}))(t).ID

		r := s.must(req{path: "/learn/" + id(c.course) + "/" + id(int64(topic)), token: admin}, http.StatusOK)
		frame := regexp.MustCompile(`<iframe id="app-frame" sandbox="([^"]*)" src="([^"]+)"`).FindStringSubmatch(r.text())
		if frame == nil || strings.Contains(frame[1], "allow-same-origin") || !strings.Contains(r.text(), "<strong>it</strong>") ||
			!strings.Contains(r.text(), `data-height="600"`) {
			t.Fatalf("app page: %s", r.body)
		}
		page := s.must(req{path: s.contentPath(html.UnescapeString(frame[2])) + "index.html", content: true}, http.StatusOK)
		if !strings.Contains(page.text(), "<p>App</p>") || !strings.Contains(page.header.Get("Content-Security-Policy"), "sandbox allow-scripts") {
			t.Fatalf("app through the frontend: %v %s", page.header, page.body)
		}
		report := `{"csp-report":{"document-uri":"http://x/a","blocked-uri":"http://x/bff/api/profile/me","effective-directive":"connect-src"}}`
		s.must(req{method: "POST", path: "/api/csp-report?topic=" + id(int64(topic)), body: strings.NewReader(report),
			headers: map[string]string{"Content-Type": "application/csp-report"}, content: true}, http.StatusOK)
		r = s.must(req{method: "POST", path: "/bff/api/interactive/progress/" + id(int64(topic)), token: admin,
			json: map[string]any{"event": "complete"}}, http.StatusOK)
		if r.get("data.app_complete") != true {
			t.Errorf("progress through /bff: %s", r.body)
		}

		// A site with interactive content switched off frames no app (it
		// would not be served) and says so; the lesson text stays.
		apitest.Must(adminClient.PostAdminConfig(t.Context(), client.UpdateInputBody{
			Config: []client.Item{{Key: interactive.EnabledSetting, Value: false}}}))(t)
		r = s.must(req{path: "/learn/" + id(c.course) + "/" + id(int64(topic)), token: admin}, http.StatusOK)
		if strings.Contains(r.text(), "app-frame") || strings.Contains(r.text(), "/api/interactive/play/") ||
			!strings.Contains(r.text(), `<p class="notice" id="app-off">Interactive content is switched off on this site.</p>`) ||
			!strings.Contains(r.text(), "<strong>it</strong>") || !strings.Contains(r.text(), `data-mode="none"`) {
			t.Errorf("app page while switched off: %s", r.body)
		}
	})
}

// TestLiaScriptPage checks that a LiaScript topic's page frames its
// player full width in a sandbox without our origin, that the player, the
// course's files and the runtime pass through the frontend, that a CSP
// report sent cross-site (as sandboxed frames send them) is taken, and
// that the player's reports reach the progress route through /bff.
func TestLiaScriptPage(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "Lia course")
		md := "# Soil\n\nIntro\n\n## Layers\n\n[[humus]]\n"
		topic := apitest.Must(s.env.Client("", admin).PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: c.lesson,
			Title: "Soil", Topicable: liascript.Class, Markdown: client.Ptr(md)}))(t).ID

		r := s.must(req{path: "/learn/" + id(c.course) + "/" + id(int64(topic)), token: admin}, http.StatusOK)
		frame := regexp.MustCompile(`<iframe id="lia-frame" class="lia-frame" sandbox="([^"]*)" src="([^"]+)"[^>]*data-sections="2" data-quizzes="1"`).
			FindStringSubmatch(r.text())
		if frame == nil || strings.Contains(frame[1], "allow-same-origin") || !strings.Contains(r.text(), "topic-layout-wide") {
			t.Fatalf("LiaScript page: %s", r.body)
		}
		play := s.contentPath(html.UnescapeString(frame[2]))
		page := s.must(req{path: play, content: true}, http.StatusOK)
		runtime := regexp.MustCompile(`src="(/api/liascript/runtime/[^"]+/lms-liascript\.js)"`).FindStringSubmatch(page.text())
		if runtime == nil || !strings.HasPrefix(page.header.Get("Content-Security-Policy"), "sandbox allow-scripts") {
			t.Fatalf("player through the frontend: %v %s", page.header, page.body)
		}
		if course := s.must(req{path: play + "course.md", content: true}, http.StatusOK); course.text() != md {
			t.Errorf("course.md through the frontend: %q", course.body)
		}
		if bridge := s.must(req{path: runtime[1], content: true}, http.StatusOK); !strings.Contains(bridge.text(), "lms-liascript:quiz") {
			t.Errorf("bridge through the frontend: %q", bridge.body)
		}
		report := `{"csp-report":{"document-uri":"http://x/a","blocked-uri":"http://x/bff/api/profile/me","effective-directive":"connect-src"}}`
		s.must(req{method: "POST", path: "/api/csp-report?topic=" + id(int64(topic)), body: strings.NewReader(report),
			headers: map[string]string{"Content-Type": "application/csp-report", "Origin": "null", "Sec-Fetch-Site": "cross-site"}, content: true}, http.StatusOK)
		// Other cross-site writes stay refused.
		s.must(req{method: "POST", path: "/bff/api/liascript/progress/" + id(int64(topic)), token: admin,
			json: map[string]any{"visited": []int{0}}, headers: map[string]string{"Origin": "null", "Sec-Fetch-Site": "cross-site"}}, http.StatusForbidden)
		r = s.must(req{method: "POST", path: "/bff/api/liascript/progress/" + id(int64(topic)), token: admin,
			json: map[string]any{"visited": []int{0, 1}, "quizzes": []map[string]any{{"quiz": 0, "solved": true}}}}, http.StatusOK)
		if r.get("data.completed") != true {
			t.Errorf("progress through /bff: %s", r.body)
		}
	})
}
