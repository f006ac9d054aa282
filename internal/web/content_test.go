package web

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/device"
	"github.com/lms-platform/lms/internal/kinds/scorm"
)

// uploadScorm uploads a SCORM package the test built.
func uploadScorm(t *testing.T, env *apitest.Env, token string, data []byte) *client.ScormPackage {
	t.Helper()
	pkg := apitest.Must(env.Client("", token).PostAdminScormUpload(t.Context(), client.PostAdminScormUploadForm{
		Package: &client.File{Name: "package.zip", Content: bytes.NewReader(data)}}))(t)
	if len(pkg.Scos) == 0 {
		t.Fatalf("upload without SCOs: %+v", pkg)
	}
	return pkg
}

// TestContentOriginRoutes: the content origin serves the package paths
// only, without cookies, framable by the frontend alone; the frontend's
// own origin serves no package content; a SCORM topic posts its player's
// token to the content origin, which the page's policy allows.
func TestContentOriginRoutes(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		u := s.env.NewUser("student")
		session := []*http.Cookie{{Name: sessionCookie, Value: admin}, {Name: csrfCookie, Value: testCSRFSecret}}

		// Package content on the frontend's origin: not there.
		for _, p := range []string{"/api/scorm/runtime/player.js", "/api/scorm/player/1", "/api/scorm/content/1/2/x/index.html",
			"/api/scorm/tracks/1", "/api/cmi5/content/1/index.html", "/api/cmi5/fetch?code=x", "/api/xapi/about",
			"/api/interactive/play/1-2-x/index.html", "/api/liascript/play/1-2-x/", "/api/liascript/runtime/x/lms-liascript.js"} {
			s.must(req{path: p, token: admin}, http.StatusNotFound)
		}
		s.must(req{method: "POST", path: "/api/scorm/player/1", token: admin, form: url.Values{"token": {"x"}}}, http.StatusNotFound)

		// The content origin: its paths pass, with its headers, and no
		// cookie comes back even when the browser sends the frontend's.
		r := s.must(req{path: "/api/scorm/runtime/player.js", content: true, cookies: session}, http.StatusOK)
		csp := strings.Join(r.header.Values("Content-Security-Policy"), ", ")
		if len(r.header.Values("Set-Cookie")) != 0 || csp != "frame-ancestors 'self' "+s.host+":*" ||
			r.header.Get("X-Frame-Options") != "" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("content origin headers: %v", r.header)
		}
		// Everything else is 404 there: no /bff/, no sign-in, no pages,
		// no other API route, whatever the cookies.
		for _, p := range []string{"/bff/api/profile/me", "/login", "/", "/courses", "/my", "/device", "/profile", "/certificates",
			"/learn/1/2", "/assets/app.js", "/api/courses", "/api/profile/me", "/lti/launch"} {
			r := s.must(req{path: p, content: true, cookies: session}, http.StatusNotFound)
			if len(r.header.Values("Set-Cookie")) != 0 {
				t.Fatalf("%s on the content origin sets a cookie", p)
			}
		}
		for _, p := range []string{"/login", "/login/demo", "/logout", "/device/approve", "/profile", "/bff/api/courses/progress/1/ping"} {
			s.must(req{method: "POST", path: p, content: true, cookies: session, form: url.Values{"email": {u.Email},
				"password": {u.Password}, "code": {"ABCD-EFGH"}}}, http.StatusNotFound)
		}

		// A SCORM topic: the launch form posts the token (never in a
		// URL) to the player on the content origin, in a sandboxed frame
		// that may not navigate the page; the page's policy lets it.
		c := seedCourse(t, s.env, s.env.Host, admin, "Content origin")
		pkg := uploadScorm(t, s.env, admin, hostileSCO(t, "http://"+s.host, "NONE-NONE"))
		topic := apitest.Must(s.env.Client("", admin).PostAdminTopics(t.Context(), client.PostAdminTopicsBody{Lesson: c.lesson,
			Title: "SCO", Topicable: scorm.Class, Package: client.Ptr(pkg.ID), Sco: pkg.Scos[0].ID}))(t).ID
		r = s.must(req{path: "/learn/" + id(c.course) + "/" + id(int64(topic)), token: u.Token}, http.StatusOK)
		origin := "http://" + s.host + ":" + s.contentPort
		launch := regexp.MustCompile(`<form id="scorm-launch" method="post" action="([^"]+)" target="scorm-frame">\s*<input type="hidden" name="token" value="([^"]+)">`).
			FindStringSubmatch(r.text())
		if launch == nil || !strings.HasPrefix(launch[1], origin+"/api/scorm/player/") {
			t.Fatalf("the SCORM launch form: %s", r.body)
		}
		if !strings.Contains(r.text(), `sandbox="`+packageSandbox+`"`) || strings.Contains(packageSandbox, "allow-top-navigation") {
			t.Fatal("the SCORM frame is not sandboxed")
		}
		page := r.header.Get("Content-Security-Policy")
		if !strings.Contains(page, "frame-src 'self' https: "+origin+";") || !strings.Contains(page, "form-action 'self' "+origin+";") {
			t.Fatalf("the topic page's policy: %s", page)
		}
		player := strings.TrimPrefix(launch[1], origin)
		r = s.must(req{method: "POST", path: player, content: true, form: url.Values{"token": {launch[2]}}, cookies: session,
			headers: map[string]string{"Origin": "http://" + s.host, "Sec-Fetch-Site": "same-site"}}, http.StatusOK)
		if !strings.Contains(r.text(), "/api/scorm/runtime/player.js") || len(r.header.Values("Set-Cookie")) != 0 {
			t.Fatalf("the player on the content origin: %v %.300s", r.header, r.body)
		}
		content := regexp.MustCompile(`"content":"(/api/scorm/content/[^"]+)"`).FindStringSubmatch(r.text())
		if content == nil {
			t.Fatalf("the player names no content: %.600s", r.body)
		}
		sco := s.must(req{path: content[1], content: true}, http.StatusOK)
		if !strings.Contains(sco.text(), "hostileDone") || !strings.HasPrefix(sco.header.Get("Content-Type"), "text/html") {
			t.Fatalf("the SCO on the content origin: %v", sco.header)
		}
		s.must(req{path: content[1]}, http.StatusNotFound)
	})
}

// TestFormsNeedCSRF: every form of the frontend without its token, or
// with another browser's, answers 403 and changes nothing.
func TestFormsNeedCSRF(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		admin := s.env.As("admin").Token
		c := seedCourse(t, s.env, s.env.Host, admin, "Forms")
		u := s.env.NewUser("student")
		topic := "/learn/" + id(c.course) + "/" + id(c.reading)

		// A page gives the browser its secret and the forms its token.
		r := s.must(req{path: "/login"}, http.StatusOK)
		secret := r.cookie(csrfCookie)
		m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(r.text())
		if secret == nil || !secret.HttpOnly || m == nil || m[1] != csrfMAC(secret.Value, csrfForm) {
			t.Fatalf("the login page's token: %v %v", secret, m)
		}
		other := s.must(req{path: "/login"}, http.StatusOK).cookie(csrfCookie)
		if other == nil || other.Value == secret.Value {
			t.Fatal("two browsers share a CSRF secret")
		}

		forms := []struct {
			path string
			form url.Values
		}{
			{"/login", url.Values{"email": {u.Email}, "password": {u.Password}}},
			{"/login/demo", url.Values{"role": {"student"}}},
			{"/logout", nil},
			{"/profile", url.Values{"first_name": {"Mallory"}, "last_name": {"Forged"}}},
			{topic + "/complete", nil},
			{"/certificates/1/regenerate", nil},
			{"/learn/" + id(c.course) + "/" + id(c.project) + "/project", url.Values{"file": {"x"}}},
			{"/lti/launch/confirm", url.Values{"choice": {"switch"}}},
		}
		for _, f := range forms {
			// No token; then the token of another browser with this
			// browser's secret; then a made-up token.
			wrong := url.Values{csrfField: {csrfMAC(other.Value, csrfForm)}}
			made := url.Values{csrfField: {csrfMAC(secret.Value, "something else")}}
			for i, extra := range []url.Values{nil, wrong, made} {
				form := url.Values{}
				for k, v := range f.form {
					form[k] = v
				}
				for k, v := range extra {
					form[k] = v
				}
				r := s.must(req{method: "POST", path: f.path, token: u.Token, form: form, noCSRF: true,
					cookies: []*http.Cookie{secret}}, http.StatusForbidden)
				if r.cookie(sessionCookie) != nil {
					t.Fatalf("%s (%d): the session cookie changed", f.path, i)
				}
			}
		}
		// Nothing changed: the profile, the topic, the session.
		me := s.must(req{path: "/bff/api/profile/me", token: u.Token}, http.StatusOK)
		if strings.Contains(me.text(), "Mallory") {
			t.Fatal("the profile changed")
		}
		if r := s.must(req{path: topic, token: u.Token}, http.StatusOK); strings.Contains(r.text(), `class="topic-status status-1" id="topic-status"`) {
			t.Fatal("the topic completed")
		}
		// With this browser's token, the same form works.
		s.must(req{method: "POST", path: "/profile", token: u.Token, noCSRF: true, cookies: []*http.Cookie{secret},
			form: url.Values{"first_name": {"Ada"}, "last_name": {"Learner"}, csrfField: {m[1]}}}, http.StatusSeeOther)
		// Signing in starts a new secret: the token of before is void.
		r = s.must(req{method: "POST", path: "/login", noCSRF: true, cookies: []*http.Cookie{secret},
			form: url.Values{"email": {u.Email}, "password": {u.Password}, csrfField: {m[1]}}}, http.StatusSeeOther)
		if fresh := r.cookie(csrfCookie); fresh == nil || fresh.Value == secret.Value {
			t.Fatal("signing in keeps the CSRF secret")
		}
	})
}

// TestDeviceApproveNeedsConfirmation: the device decision is refused
// (403, nothing decided) without a token, with the token of another
// session, with an ordinary form token, with the token of another code,
// and when the browser says the POST was not the user's navigation; the
// confirmation page's own form approves.
func TestDeviceApproveNeedsConfirmation(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		u := s.env.NewUser("admin")
		other := s.env.NewUser("student")
		dc, uc, _ := startDevice(t, s.env, "lmsctl")
		_, uc2, _ := startDevice(t, s.env, "another")

		page := s.must(req{path: "/device?code=" + uc, token: u.Token}, http.StatusOK)
		if page.header.Get("X-Frame-Options") != "DENY" || !strings.Contains(page.header.Get("Content-Security-Policy"), "frame-ancestors 'none'") {
			t.Fatalf("the confirmation page may be framed: %v", page.header)
		}
		good := confirmation(t, page)
		secret := good.cookies[0]
		otherPage := confirmation(t, s.must(req{path: "/device?code=" + uc, token: other.Token}, http.StatusOK))
		secondCode := confirmation(t, s.must(req{path: "/device?code=" + uc2, token: u.Token, cookies: []*http.Cookie{secret}}, http.StatusOK), secret)

		refused := []struct {
			name    string
			form    url.Values
			headers map[string]string
		}{
			{"no token", url.Values{"code": {uc}}, nil},
			{"another session's token", url.Values{"code": {uc}, csrfField: otherPage.form[csrfField]}, nil},
			{"an ordinary form token", url.Values{"code": {uc}, csrfField: {csrfMAC(secret.Value, csrfForm)}}, nil},
			{"another code's token", url.Values{"code": {uc}, csrfField: secondCode.form[csrfField]}, nil},
			{"the right token by fetch", good.form, map[string]string{"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}},
			{"the right token without the user", good.form, map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}},
			{"the right token into a frame", good.form, map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe", "Sec-Fetch-User": "?1"}},
		}
		for _, path := range []string{"/device/approve", "/device/deny"} {
			for _, c := range refused {
				r := s.must(req{method: "POST", path: path, token: u.Token, form: c.form, headers: c.headers,
					cookies: []*http.Cookie{secret}}, http.StatusForbidden)
				if !strings.Contains(r.text(), "did not come from the confirmation page") {
					t.Fatalf("%s %s: %.400s", path, c.name, r.text())
				}
			}
		}
		if n := s.api.count("/api/auth/device/requests/" + uc + "/approve"); n != 0 {
			t.Fatalf("the API was asked to approve %d times", n)
		}
		if res := pollDevice(t, s.env, dc); res.String("error") != device.CodePending {
			t.Fatalf("after the refused decisions: %s", res.Body)
		}
		// The confirmation page's form, submitted by the user.
		r := s.must(req{method: "POST", path: "/device/approve", token: u.Token, form: good.form, cookies: []*http.Cookie{secret},
			headers: map[string]string{"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1"}}, http.StatusOK)
		if !strings.Contains(r.text(), "Approved.") {
			t.Fatalf("approve: %.400s", r.text())
		}
		if res := pollDevice(t, s.env, dc); res.Status != 200 || res.Number("data.user_id") != float64(u.ID) {
			t.Fatalf("poll after approval: %d %s", res.Status, res.Body)
		}
	})
}

// TestUploadedActiveFiles: a signed link to an uploaded file that would
// run script (HTML, SVG) is a sandboxed download on the frontend's origin
// and sandboxed on the content origin; PDFs stay inline. (The API's files
// route answers so already; the frontend holds it whatever answers.)
func TestUploadedActiveFiles(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		tn, release := s.env.OpenTenant(s.env.Tenant)
		defer release()
		put := func(key, ct, body string) string {
			if err := tn.Blob.Put(context.Background(), key, strings.NewReader(body), int64(len(body)), ct); err != nil {
				t.Fatal(err)
			}
			return s.env.Server.Files.URL(tn, key)
		}
		for _, f := range []struct{ key, ct string }{{"resources/a/page.html", "text/html"}, {"content/b/pic.svg", "image/svg+xml"}} {
			link := put(f.key, f.ct, `<script>fetch('/bff/api/profile/me')</script>`)
			r := s.must(req{path: link}, http.StatusOK)
			if !strings.HasPrefix(r.header.Get("Content-Disposition"), "attachment") || !slices.Contains(r.header.Values("Content-Security-Policy"), "sandbox") {
				t.Fatalf("%s on the frontend: %v", f.ct, r.header)
			}
			r = s.must(req{path: link, content: true}, http.StatusOK)
			if !slices.Contains(r.header.Values("Content-Security-Policy"), "sandbox") {
				t.Fatalf("%s on the content origin: %v", f.ct, r.header)
			}
		}
		r := s.must(req{path: put("content/c/doc.pdf", "application/pdf", "%PDF-1.4\n")}, http.StatusOK)
		if !strings.HasPrefix(r.header.Get("Content-Disposition"), "inline") || len(r.header.Values("Content-Security-Policy")) != 0 {
			t.Fatalf("a PDF: %v", r.header)
		}
	})
}
