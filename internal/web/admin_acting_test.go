package web

import (
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestAdminImpersonation: an admin signs in as a student from the user's
// page; every page then names who acts as whom, in the page's language,
// and only in that browser; "Back to my account" revokes the student's
// token and gives the admin's session back, which the browser never held
// meanwhile. Signing out while acting ends both sessions. Whoever lacks
// the permission (an admin's scoped token) has no button and is refused,
// as is an admin already acting as another admin.
func TestAdminImpersonation(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		ctx := t.Context()
		named := func(id int64, first, last string) *client.Detail {
			return apitest.Must(s.env.ClientAs("admin").PatchAdminUsersID(ctx, id, client.UserChangeBody{FirstName: &first,
				LastName: &last}))(t)
		}
		adminMe := named(apitest.Must(s.env.Client("", f.adminToken).GetProfileMe(ctx))(t).ID, "Olga", "Head")
		student := named(f.user.ID, "Pat", "O'Pupil")
		userPage := "/admin/users/" + id(f.user.ID)

		r := s.must(req{path: userPage, token: f.adminToken}, http.StatusOK)
		if !strings.Contains(r.text(), `id="user-impersonate"`) || strings.Contains(r.text(), `id="acting-banner"`) {
			t.Fatalf("user page: %.3000s", r.text())
		}
		start := func(token string) string {
			t.Helper()
			r := s.must(req{method: "POST", path: userPage + "/impersonate", token: token}, http.StatusSeeOther)
			c := r.cookie(sessionCookie)
			if c == nil || c.Value == token || r.header.Get("Location") != "/my" {
				t.Fatalf("impersonate: %v %q", c, r.header.Get("Location"))
			}
			if strings.Contains(r.header.Get("Location"), token) {
				t.Fatal("a token in an address")
			}
			return c.Value
		}
		acting := start(f.adminToken)
		if me := apitest.Must(s.env.Client("", acting).GetProfileMe(ctx))(t); me.ID != f.user.ID {
			t.Fatalf("acting as %d", me.ID)
		}
		banner := html.EscapeString(adminMe.Name + ", you are signed in as " + student.Name + ".")
		for _, p := range []string{"/my", "/courses", "/profile", "/certificates", "/no-such-page"} {
			r := s.do(req{path: p, token: acting})
			if !strings.Contains(r.text(), `<p id="acting-banner">`+banner+`</p>`) || !strings.Contains(r.text(), `id="acting-back"`) {
				t.Errorf("%s (%d) has no banner %q: %.1500s", p, r.status, banner, r.text())
			}
			// The admin's token is not in the browser's pages.
			if strings.Contains(r.text(), f.adminToken) {
				t.Errorf("%s shows the admin's token", p)
			}
		}
		// The student's own session, and anyone else's, has no banner,
		// the memoised catalogue included.
		for _, tok := range []string{f.studentToken, f.adminToken} {
			for _, p := range []string{"/courses", "/my"} {
				if r := s.must(req{path: p, token: tok}, http.StatusOK); strings.Contains(r.text(), `acting-banner`) {
					t.Errorf("%s: a banner in another session", p)
				}
			}
		}
		// Acting as a student, the admin pages are not there.
		s.must(req{path: "/admin", token: acting}, http.StatusNotFound)

		// Back: the student's token is revoked, the admin's session is
		// the browser's again, on the student's page.
		r = s.must(req{method: "POST", path: "/impersonation/end", token: acting}, http.StatusSeeOther)
		if loc := r.header.Get("Location"); loc != userPage+"?done=done.back" {
			t.Fatalf("back to %q", loc)
		}
		back := r.cookie(sessionCookie)
		if back == nil || back.Value != f.adminToken {
			t.Fatalf("the admin's session is not back: %v", back)
		}
		_, err := s.env.Client("", acting).GetProfileMe(ctx)
		apitest.Refused(t, err, http.StatusUnauthorized)
		r = s.must(req{path: userPage + "?done=done.back", token: back.Value}, http.StatusOK)
		if !strings.Contains(r.text(), "You are back in your own account.") || strings.Contains(r.text(), `acting-banner`) {
			t.Fatalf("after coming back: %.2000s", r.text())
		}
		// Not acting, the button does nothing.
		if r := s.must(req{method: "POST", path: "/impersonation/end", token: f.adminToken}, http.StatusSeeOther); r.header.Get("Location") != "/my" ||
			r.cookie(sessionCookie) != nil {
			t.Fatalf("end without acting: %v", r.header)
		}
		// Signed out, it asks to sign in.
		if r := s.must(req{method: "POST", path: "/impersonation/end"}, http.StatusSeeOther); !strings.HasPrefix(r.header.Get("Location"), "/login?next=") {
			t.Fatalf("anonymous end: %v", r.header)
		}
		// Without the form's token, nothing happens.
		acting = start(f.adminToken)
		s.must(req{method: "POST", path: "/impersonation/end", token: acting, noCSRF: true}, http.StatusForbidden)
		apitest.Must(s.env.Client("", acting).GetProfileMe(ctx))(t)

		// An admin acting as another admin sees the admin pages, but no
		// "Sign in as", and may not act within acting.
		other := s.env.NewUser("admin")
		otherMe := named(other.ID, "Zhang", "Wei")
		s.must(req{method: "POST", path: "/impersonation/end", token: acting}, http.StatusSeeOther)
		actingAdmin := s.must(req{method: "POST", path: "/admin/users/" + id(other.ID) + "/impersonate", token: f.adminToken},
			http.StatusSeeOther).cookie(sessionCookie).Value
		if r := s.must(req{path: userPage, token: actingAdmin}, http.StatusOK); strings.Contains(r.text(), `id="user-impersonate"`) ||
			!strings.Contains(r.text(), `id="acting-back"`) {
			t.Fatalf("acting admin's user page: %.3000s", r.text())
		}
		for lang, want := range map[string]string{"pl-PL,pl;q=0.9": ", jesteś zalogowany(-a) jako " + otherMe.Name + ".",
			"zh-CN": "，您正在以 " + otherMe.Name + " 的身份登录。"} {
			r := s.must(req{path: "/admin/users", token: actingAdmin, headers: map[string]string{"Accept-Language": lang}}, http.StatusOK)
			if !strings.Contains(r.text(), html.EscapeString(adminMe.Name+want)) {
				t.Errorf("%s banner: %.1500s", lang, r.text())
			}
		}
		r = s.must(req{method: "POST", path: userPage + "/impersonate", token: actingAdmin}, http.StatusConflict)
		if r.cookie(sessionCookie) != nil {
			t.Fatal("acting within acting changed the session")
		}

		// Signing out while acting ends both sessions.
		s.must(req{method: "POST", path: "/logout", token: actingAdmin}, http.StatusSeeOther)
		for _, tok := range []string{actingAdmin, f.adminToken} {
			_, err := s.env.Client("", tok).GetProfileMe(ctx)
			apitest.Refused(t, err, http.StatusUnauthorized)
		}

		// The admin's session ended while acting: coming back signs the
		// browser out and asks to sign in.
		admin, _ := s.env.Login(s.env.Host, "admin@"+s.env.Host, "admin-password")
		acting = start(admin)
		apitest.Must(s.env.Client("", admin).GetProfileMe(ctx))(t)
		if err := s.env.Client("", admin).PostAuthLogout(ctx); err != nil {
			t.Fatal(err)
		}
		r = s.must(req{method: "POST", path: "/impersonation/end", token: acting}, http.StatusSeeOther)
		if c := r.cookie(sessionCookie); r.header.Get("Location") != "/login" || c == nil || c.MaxAge >= 0 {
			t.Fatalf("end after the admin's session ended: %v", r.header)
		}
		_, err = s.env.Client("", acting).GetProfileMe(ctx)
		apitest.Refused(t, err, http.StatusUnauthorized)

		// An admin's scoped token lacks user_impersonate: no button, and
		// the form is refused.
		admin, _ = s.env.Login(s.env.Host, "admin@"+s.env.Host, "admin-password")
		pat := apitest.Must(s.env.Client("", admin).PostAuthTokens(ctx, client.CreateInputBody{Name: "browser",
			Scopes: []string{"users:write", "groups:read", "profile:read"}}))(t).Token
		r = s.must(req{path: userPage, token: pat}, http.StatusOK)
		if strings.Contains(r.text(), `id="user-impersonate"`) || !strings.Contains(r.text(), `id="user-form"`) {
			t.Fatalf("scoped admin's user page: %.3000s", r.text())
		}
		r = s.must(req{method: "POST", path: userPage + "/impersonate", token: pat}, http.StatusForbidden)
		if r.cookie(sessionCookie) != nil || !strings.Contains(r.text(), "may not sign in as other users") {
			t.Fatalf("scoped impersonation: %v %.500s", r.header, r.text())
		}
	})
}

// TestAdminImpersonationKeepsTheAdmin: an admin signed in with a
// five-minute token acts as a student for nine minutes; the keeper
// renews both sessions on the server meanwhile, so both pages and
// "Back to my account" work, with the admin's newest token.
func TestAdminImpersonationKeepsTheAdmin(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	student := s.env.NewUser("student")
	c, _ := formSignIn(t, s, s.env.As("admin"))
	acting := s.must(req{method: "POST", path: "/admin/users/" + id(student.ID) + "/impersonate", token: c.Value},
		http.StatusSeeOther).cookie(sessionCookie).Value
	for range 3 {
		s.clock.Advance(3 * time.Minute)
		s.web.keepSessions(t.Context())
	}
	if n := s.api.count("/api/auth/refresh"); n != 6 {
		t.Fatalf("%d renewals of two sessions in nine minutes, want 6", n)
	}
	r := s.must(req{path: "/my", token: acting}, http.StatusOK)
	if !strings.Contains(r.text(), `id="acting-banner"`) {
		t.Fatalf("no banner after the renewals: %.1500s", r.text())
	}
	acting = r.cookie(sessionCookie).Value
	r = s.must(req{method: "POST", path: "/impersonation/end", token: acting}, http.StatusSeeOther)
	back := r.cookie(sessionCookie)
	if back == nil || back.Value == c.Value || back.MaxAge <= 0 {
		t.Fatalf("back: %v %v", back, r.header)
	}
	if me := apitest.Must(s.env.Client("", back.Value).GetProfileMe(t.Context()))(t); me.ID != s.env.As("admin").ID {
		t.Fatalf("back as %d", me.ID)
	}
	_, err := s.env.Client("", c.Value).GetProfileMe(t.Context())
	apitest.Refused(t, err, http.StatusUnauthorized)
}

// TestActingBannerOnLaunchPages: the pages written without the layout,
// cmi5's return page and the hand-over to an LTI tool, say who acts as
// whom too, in the browser's language, with "Back to my account"; the
// learner's own session sees neither banner.
func TestActingBannerOnLaunchPages(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		ctx := t.Context()
		admin := s.env.ClientAs("admin")
		first, last := "Pat", "Pupil"
		apitest.Must(admin.PatchAdminUsersID(ctx, f.user.ID, client.UserChangeBody{FirstName: &first, LastName: &last}))(t)
		ext := apitest.Must(admin.PostAdminLTITools(ctx, client.ToolInput{Name: "Lab tool", LoginURL: "https://tool.example/login",
			TargetLinkURI: "https://tool.example/launch", RedirectUris: []string{"https://tool.example/launch"},
			JwksURL: client.Ptr("https://tool.example/jwks")}))(t)
		course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "With a tool", Status: client.Ptr("published")}))(t).ID
		lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "L"}))(t).ID
		topic := apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Lab",
			Topicable: `Lms\TopicTypes\Models\TopicContent\LTI`, Tool: &ext.ID}))(t).ID
		apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: f.user.ID}}}))(t)
		// The learner's own session first: no banner.
		learner := f.user.Token
		topicPath := "/learn/" + id(course) + "/" + id(topic)
		pages := func(token string, headers map[string]string) map[string]string {
			t.Helper()
			launch := s.must(req{method: "POST", path: topicPath + "/lti", token: token, headers: headers}, http.StatusOK)
			if !strings.Contains(launch.text(), `id="lti-opening"`) {
				t.Fatalf("the hand-over to the tool: %.1500s", launch.text())
			}
			back := s.must(req{path: topicPath + "/cmi5/return", token: token, headers: headers}, http.StatusOK)
			return map[string]string{"lti": launch.text(), "cmi5": back.text()}
		}
		for name, page := range pages(learner, nil) {
			if strings.Contains(page, "acting-banner") {
				t.Errorf("%s: a banner in the learner's own session", name)
			}
		}

		olga, head := "Olga", "Head"
		adminID := apitest.Must(s.env.Client("", f.adminToken).GetProfileMe(ctx))(t).ID
		adminName := apitest.Must(admin.PatchAdminUsersID(ctx, adminID, client.UserChangeBody{FirstName: &olga, LastName: &head}))(t).Name
		acting := s.must(req{method: "POST", path: "/admin/users/" + id(f.user.ID) + "/impersonate", token: f.adminToken},
			http.StatusSeeOther).cookie(sessionCookie).Value
		for lang, want := range map[string]string{"": adminName + ", you are signed in as Pat Pupil.",
			"pl": adminName + ", jesteś zalogowany(-a) jako Pat Pupil.", "zh-CN": adminName + "，您正在以 Pat Pupil 的身份登录。"} {
			for name, page := range pages(acting, map[string]string{"Accept-Language": lang}) {
				if !strings.Contains(page, `<p id="acting-banner">`+html.EscapeString(want)+`</p>`) ||
					!strings.Contains(page, `action="/impersonation/end"`) || !strings.Contains(page, `id="acting-back"`) {
					t.Errorf("%s (%q) has no banner %q: %.1500s", name, lang, want, page)
				}
				if strings.Contains(page, f.adminToken) {
					t.Errorf("%s shows the admin's token", name)
				}
			}
		}
		// The banner's form works from these pages: its token is the
		// browser's, and the admin is back.
		r := s.must(req{method: "POST", path: "/impersonation/end", token: acting}, http.StatusSeeOther)
		if c := r.cookie(sessionCookie); c == nil || c.Value != f.adminToken {
			t.Fatalf("back from a launch page: %v", r.header)
		}
	})
}
