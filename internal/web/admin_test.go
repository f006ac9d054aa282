package web

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/tokens"
)

// adminFixture is what the role tests open: a user, a group and its
// child.
type adminFixture struct {
	user          *apitest.User
	group, child  int64
	adminToken    string
	studentToken  string
	tutorToken    string
	studentClient *client.Client
}

func newAdminFixture(t *testing.T, s *stack) adminFixture {
	t.Helper()
	env := s.env
	admin := env.ClientAs("admin")
	f := adminFixture{user: env.NewUser("student"), adminToken: env.As("admin").Token,
		studentToken: env.As("student").Token, tutorToken: env.As("tutor").Token, studentClient: env.ClientAs("student")}
	f.group = apitest.Must(admin.PostAdminUserGroups(t.Context(), client.CreateGroupInputBody{Name: "Class 1"}))(t).ID
	f.child = apitest.Must(admin.PostAdminUserGroups(t.Context(), client.CreateGroupInputBody{Name: "Class 1 B",
		ParentID: &f.group}))(t).ID
	return f
}

// TestAdminPagesPerRole opens every admin page and posts every admin form
// as each role: admins get the page, tutors and students the 404 of an
// unknown page, anonymous callers the sign-in page.
func TestAdminPagesPerRole(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		uid, gid := id(f.user.ID), id(f.group)
		pages := []string{"/admin", "/admin/users", "/admin/users?q=student&role=student&status=active", "/admin/users/new",
			"/admin/users/" + uid, "/admin/users/" + uid + "/delete", "/admin/groups", "/admin/groups/" + gid,
			"/admin/groups/" + gid + "/delete", "/admin/settings", "/admin/tokens", "/admin/audit", "/admin/templates",
			"/admin/lti", "/admin/deliveries", "/admin/deliveries?state=pending", "/admin/certificates"}
		for _, p := range pages {
			r := s.must(req{path: p}, http.StatusSeeOther)
			if loc := r.header.Get("Location"); loc != "/login?next="+url.QueryEscape(p) {
				t.Errorf("anonymous %s: to %q", p, loc)
			}
			for _, tok := range []string{f.studentToken, f.tutorToken} {
				r := s.must(req{path: p, token: tok}, http.StatusNotFound)
				if strings.Contains(r.text(), `href="/admin"`) {
					t.Errorf("%s: a non-admin sees the Admin link", p)
				}
			}
			r = s.must(req{path: p, token: f.adminToken}, http.StatusOK)
			if !strings.Contains(r.text(), `id="nav-admin"`) || !strings.Contains(r.text(), `id="admin-title"`) {
				t.Errorf("admin %s: no admin page: %.300s", p, r.text())
			}
		}
		// Every form, as a student or tutor: 404, and nothing changes.
		posts := map[string]url.Values{
			"/admin/users":                                {"first_name": {"X"}, "last_name": {"Y"}, "email": {"x@school.test"}, "roles": {"admin"}},
			"/admin/users/" + uid:                         {"first_name": {"X"}, "last_name": {"Y"}, "email": {f.user.Email}, "roles": {"admin"}},
			"/admin/users/" + uid + "/active":             {"active": {"0"}},
			"/admin/users/" + uid + "/delete":             nil,
			"/admin/users/" + uid + "/impersonate":        nil,
			"/admin/users/" + uid + "/interests":          {"interests": {"1"}},
			"/admin/users/" + uid + "/interests/1/remove": nil,
			"/admin/groups":                               {"name": {"Sneaky"}},
			"/admin/groups/" + gid:                        {"name": {"Renamed"}},
			"/admin/groups/" + gid + "/members":           {"user": {f.user.Email}},
			"/admin/groups/" + gid + "/delete":            nil,
			"/admin/settings":                             {"s.lms_auth.token_expiration_minutes": {"99"}},
			"/admin/tokens/abc/revoke":                    nil,
			"/admin/deliveries/1/retry":                   nil,
			"/admin/templates/slot":                       {"event": {"CourseFinished"}, "channel": {"pdf"}, "recipient": {"user"}},
			"/admin/certificates/1/regenerate":            nil,
		}
		for p, form := range posts {
			if form == nil {
				form = url.Values{}
			}
			for _, tok := range []string{f.studentToken, f.tutorToken} {
				s.must(req{method: "POST", path: p, token: tok, form: form}, http.StatusNotFound)
			}
			r := s.must(req{method: "POST", path: p, form: form}, http.StatusSeeOther)
			if !strings.HasPrefix(r.header.Get("Location"), "/login?next=") {
				t.Errorf("anonymous POST %s: to %q", p, r.header.Get("Location"))
			}
		}
		admin := s.env.ClientAs("admin")
		u := apitest.Must(admin.GetAdminUsersID(t.Context(), f.user.ID))(t)
		g := apitest.Must(admin.GetAdminUserGroupsID(t.Context(), f.group))(t)
		if !u.IsActive || slices.Contains(u.Roles, "admin") || g.Name != "Class 1" || len(g.Users) != 0 {
			t.Fatalf("a non-admin changed something: %+v %+v", u, g)
		}
		users := apitest.Must(admin.GetAdminUsers(t.Context(), client.GetAdminUsersParams{Search: client.Ptr("x@school.test")}))(t)
		if len(users.Items) != 0 {
			t.Fatal("a non-admin created a user")
		}
	})
}

// TestAdminFormsNeedCSRF: an admin's form without its token, or with
// another browser's, is refused with 403 and changes nothing.
func TestAdminFormsNeedCSRF(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	f := newAdminFixture(t, s)
	form := url.Values{"first_name": {"Eve"}, "last_name": {"Forged"}, "email": {"eve@school.test"}}
	r := s.must(req{method: "POST", path: "/admin/users", token: f.adminToken, form: form, noCSRF: true}, http.StatusForbidden)
	if !strings.Contains(r.text(), "This form has expired") {
		t.Fatalf("refusal: %.300s", r.text())
	}
	other := url.Values{"csrf_token": {csrfMAC(testCSRFSecret, "form")}}
	for k, v := range form {
		other[k] = v
	}
	s.must(req{method: "POST", path: "/admin/users", token: f.adminToken, form: other, noCSRF: true,
		cookies: []*http.Cookie{{Name: csrfCookie, Value: strings.Repeat("A", 43)}}}, http.StatusForbidden)
	s.must(req{method: "POST", path: "/admin/users/" + id(f.user.ID) + "/active", token: f.adminToken,
		form: url.Values{"active": {"0"}}, noCSRF: true}, http.StatusForbidden)
	admin := s.env.ClientAs("admin")
	if u := apitest.Must(admin.GetAdminUsersID(t.Context(), f.user.ID))(t); !u.IsActive {
		t.Fatal("a forged form blocked the user")
	}
	if p := apitest.Must(admin.GetAdminUsers(t.Context(), client.GetAdminUsersParams{Search: client.Ptr("eve@")}))(t); len(p.Items) != 0 {
		t.Fatal("a forged form created a user")
	}
}

// location checks a redirect after a change and returns its target.
func location(t *testing.T, r *resp, prefix string) string {
	t.Helper()
	loc := r.header.Get("Location")
	if !strings.HasPrefix(loc, prefix) {
		t.Fatalf("redirect to %q, want %s...", loc, prefix)
	}
	return loc
}

var idAfter = regexp.MustCompile(`/(\d+)\?done=`)

// TestAdminUsers creates, edits, blocks, unblocks, impersonates and
// deletes a user through the pages, checking each change through the API.
func TestAdminUsers(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		admin := s.env.ClientAs("admin")
		ctx := t.Context()
		as := func(method, path string, form url.Values, status int) *resp {
			return s.must(req{method: method, path: path, token: f.adminToken, form: form}, status)
		}

		// The API's validation message is shown next to its field.
		r := as("POST", "/admin/users", url.Values{"first_name": {"Ada"}, "last_name": {"Lovelace"}, "email": {"not-an-address"},
			"roles": {"tutor"}}, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text(), `id="u-email-err"`) || !strings.Contains(r.text(), `value="Ada"`) {
			t.Fatalf("invalid e-mail: %.2000s", r.text())
		}
		r = as("POST", "/admin/users", url.Values{"first_name": {"Ada"}, "last_name": {"Lovelace"}, "email": {"ada@school.test"},
			"roles": {"tutor"}, "groups": {id(f.child)}, "email_verified": {"1"}, "is_active": {"1"},
			"password": {"a-long-password-1"}}, http.StatusSeeOther)
		m := idAfter.FindStringSubmatch(location(t, r, "/admin/users/"))
		if m == nil {
			t.Fatalf("created: %q", r.header.Get("Location"))
		}
		ada := apitest.Must(admin.GetAdminUsersID(ctx, mustInt(t, m[1])))(t)
		if ada.Email != "ada@school.test" || !slices.Equal(ada.Roles, []string{"tutor"}) || len(ada.Groups) != 1 ||
			ada.Groups[0].ID != f.child || !ada.IsActive {
			t.Fatalf("created user: %+v", ada)
		}
		r = as("GET", r.header.Get("Location"), nil, http.StatusOK)
		if !strings.Contains(r.text(), `id="admin-notice"`) || !strings.Contains(r.text(), "ada@school.test") {
			t.Fatalf("user page: %.500s", r.text())
		}
		// The list finds her.
		r = as("GET", "/admin/users?q=ada%40school", nil, http.StatusOK)
		if !strings.Contains(r.text(), `data-user-id="`+id(ada.ID)+`"`) || strings.Contains(r.text(), `data-user-id="`+id(f.user.ID)+`"`) {
			t.Fatalf("search: %.2000s", r.text())
		}
		// Roles: admin and student instead of tutor; out of the group.
		as("POST", "/admin/users/"+id(ada.ID), url.Values{"first_name": {"Ada"}, "last_name": {"King"},
			"email": {"ada@school.test"}, "roles": {"admin", "student"}}, http.StatusSeeOther)
		ada = apitest.Must(admin.GetAdminUsersID(ctx, ada.ID))(t)
		if ada.LastName != "King" || !slices.Contains(ada.Roles, "admin") || slices.Contains(ada.Roles, "tutor") || len(ada.Groups) != 0 {
			t.Fatalf("edited user: %+v", ada)
		}
		// Block: the API's user is inactive and the page says so.
		as("POST", "/admin/users/"+id(ada.ID)+"/active", url.Values{"active": {"0"}}, http.StatusSeeOther)
		if apitest.Must(admin.GetAdminUsersID(ctx, ada.ID))(t).IsActive {
			t.Fatal("not blocked")
		}
		r = as("GET", "/admin/users?status=blocked", nil, http.StatusOK)
		if !strings.Contains(r.text(), `data-user-id="`+id(ada.ID)+`"`) {
			t.Fatal("the blocked list misses her")
		}
		as("POST", "/admin/users/"+id(ada.ID)+"/active", url.Values{"active": {"1"}}, http.StatusSeeOther)
		if !apitest.Must(admin.GetAdminUsersID(ctx, ada.ID))(t).IsActive {
			t.Fatal("not unblocked")
		}
		// Impersonation: the browser's session becomes the student's.
		r = as("POST", "/admin/users/"+id(f.user.ID)+"/impersonate", nil, http.StatusSeeOther)
		c := r.cookie(sessionCookie)
		if c == nil || c.Value == f.adminToken || r.header.Get("Location") != "/my" {
			t.Fatalf("impersonate: %v %q", c, r.header.Get("Location"))
		}
		if me := apitest.Must(s.env.Client("", c.Value).GetProfileMe(ctx))(t); me.ID != f.user.ID {
			t.Fatalf("impersonated as %d", me.ID)
		}
		s.must(req{path: "/admin", token: c.Value}, http.StatusNotFound)
		// Delete, after the confirmation page.
		r = as("GET", "/admin/users/"+id(ada.ID)+"/delete", nil, http.StatusOK)
		if !strings.Contains(r.text(), "ada@school.test") || !strings.Contains(r.text(), `id="confirm-delete"`) {
			t.Fatalf("confirmation: %.500s", r.text())
		}
		as("POST", "/admin/users/"+id(ada.ID)+"/delete", nil, http.StatusSeeOther)
		_, err := admin.GetAdminUsersID(ctx, ada.ID)
		apitest.Refused(t, err, http.StatusNotFound)
	})
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestAdminGroups builds a tree, renames, moves, fills and empties a
// group and deletes it through the pages.
func TestAdminGroups(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		admin := s.env.ClientAs("admin")
		ctx := t.Context()
		as := func(method, path string, form url.Values, status int) *resp {
			return s.must(req{method: method, path: path, token: f.adminToken, form: form}, status)
		}
		// The tree nests the child under its parent.
		r := as("GET", "/admin/groups", nil, http.StatusOK)
		nested := regexp.MustCompile(`data-group-id="` + id(f.group) + `"><a[^>]*>Class 1</a><ul class="group-tree"><li data-group-id="` + id(f.child) + `"`)
		if !nested.MatchString(r.text()) {
			t.Fatalf("tree: %.3000s", r.text())
		}
		// An empty name: the API's message next to the field.
		r = as("POST", "/admin/groups", url.Values{"name": {""}}, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text(), `id="admin-error"`) {
			t.Fatalf("empty name: %.2000s", r.text())
		}
		r = as("POST", "/admin/groups", url.Values{"name": {"Evening"}, "parent_id": {id(f.child)}, "registerable": {"1"}}, http.StatusSeeOther)
		m := idAfter.FindStringSubmatch(location(t, r, "/admin/groups/"))
		g := apitest.Must(admin.GetAdminUserGroupsID(ctx, mustInt(t, m[1])))(t)
		if g.Name != "Evening" || g.ParentID == nil || *g.ParentID != f.child || !g.Registerable {
			t.Fatalf("created group: %+v", g)
		}
		// Its page does not offer itself as its parent.
		r = as("GET", "/admin/groups/"+id(g.ID), nil, http.StatusOK)
		if strings.Contains(r.text(), `<option value="`+id(g.ID)+`"`) || !strings.Contains(r.text(), `<option value="`+id(f.child)+`" selected`) {
			t.Fatalf("parent choice: %.3000s", r.text())
		}
		// Rename and move to the top.
		as("POST", "/admin/groups/"+id(g.ID), url.Values{"name": {"Evening class"}, "parent_id": {"0"}}, http.StatusSeeOther)
		g = apitest.Must(admin.GetAdminUserGroupsID(ctx, g.ID))(t)
		if g.Name != "Evening class" || g.ParentID != nil || g.Registerable {
			t.Fatalf("saved group: %+v", g)
		}
		as("POST", "/admin/groups/"+id(g.ID), url.Values{"name": {"Evening class"}, "parent_id": {id(f.group)}}, http.StatusSeeOther)
		if g = apitest.Must(admin.GetAdminUserGroupsID(ctx, g.ID))(t); g.ParentID == nil || *g.ParentID != f.group {
			t.Fatalf("moved group: %+v", g)
		}
		// Members by e-mail address and by id; an unknown one is refused.
		as("POST", "/admin/groups/"+id(g.ID)+"/members", url.Values{"user": {f.user.Email}}, http.StatusSeeOther)
		other := s.env.NewUser("student")
		as("POST", "/admin/groups/"+id(g.ID)+"/members", url.Values{"user": {id(other.ID)}}, http.StatusSeeOther)
		r = as("POST", "/admin/groups/"+id(g.ID)+"/members", url.Values{"user": {"nobody@school.test"}}, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text(), "No user with that e-mail address") {
			t.Fatalf("unknown member: %.2000s", r.text())
		}
		if g = apitest.Must(admin.GetAdminUserGroupsID(ctx, g.ID))(t); len(g.Users) != 2 {
			t.Fatalf("members: %+v", g.Users)
		}
		as("POST", "/admin/groups/"+id(g.ID)+"/members/"+id(other.ID)+"/remove", nil, http.StatusSeeOther)
		if g = apitest.Must(admin.GetAdminUserGroupsID(ctx, g.ID))(t); len(g.Users) != 1 || g.Users[0].ID != f.user.ID {
			t.Fatalf("after removal: %+v", g.Users)
		}
		r = as("GET", "/admin/groups/"+id(g.ID), nil, http.StatusOK)
		if !strings.Contains(r.text(), `id="group-members"`) || !strings.Contains(r.text(), f.user.Email) {
			t.Fatalf("members list: %.2000s", r.text())
		}
		as("GET", "/admin/groups/"+id(g.ID)+"/delete", nil, http.StatusOK)
		as("POST", "/admin/groups/"+id(g.ID)+"/delete", nil, http.StatusSeeOther)
		_, err := admin.GetAdminUserGroupsID(ctx, g.ID)
		apitest.Refused(t, err, http.StatusNotFound)
	})
}

// TestAdminSettings changes a setting, shows the API's message next to a
// wrong one (saving nothing), and never puts a secret in the page.
func TestAdminSettings(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		admin := s.env.ClientAs("admin")
		ctx := t.Context()
		const key = "lms_auth.token_expiration_minutes"
		r := s.must(req{path: "/admin/settings", token: f.adminToken}, http.StatusOK)
		if !strings.Contains(r.text(), `id="settings-lms_auth"`) || !strings.Contains(r.text(), `name="s.`+key+`"`) {
			t.Fatalf("settings page: %.2000s", r.text())
		}
		form := url.Values{"s." + key: {"12"}, "s.lms_auth.registration": {"not-a-status"}}
		r = s.must(req{method: "POST", path: "/admin/settings", token: f.adminToken, form: form}, http.StatusUnprocessableEntity)
		if !regexp.MustCompile(`id="set-lms_auth.registration-err">[^<]*lms_auth.registration must be one of`).MatchString(r.text()) ||
			!strings.Contains(r.text(), `value="12"`) {
			i := strings.Index(r.text(), "set-lms_auth.registration")
			t.Fatalf("refused settings: %s", r.text()[max(i-200, 0):min(i+1500, len(r.text()))])
		}
		cfg := apitest.Must(admin.GetConfig(ctx))(t)
		if apitest.Lookup(cfg, key) == float64(12) {
			t.Fatal("a refused form saved a setting")
		}
		r = s.must(req{method: "POST", path: "/admin/settings", token: f.adminToken, form: url.Values{"s." + key: {"12"}}}, http.StatusSeeOther)
		location(t, r, "/admin/settings?done=done.saved")
		cfg = apitest.Must(admin.GetConfig(ctx))(t)
		if v := apitest.Lookup(cfg, key); v != float64(12) {
			t.Fatalf("saved %v", v)
		}
		// A secret: stored through the page, never shown.
		var secretKey string
		values := map[string]any{}
		flattenSettings("", cfg, values)
		for k, v := range values {
			if _, isString := v.(string); (isString || v == nil) && secretSetting(k) {
				secretKey = k
				break
			}
		}
		if secretKey == "" {
			t.Fatal("no secret setting to try")
		}
		s.must(req{method: "POST", path: "/admin/settings", token: f.adminToken,
			form: url.Values{"s." + secretKey: {"very-secret-value"}}}, http.StatusSeeOther)
		if v := apitest.Lookup(apitest.Must(admin.GetConfig(ctx))(t), secretKey); v != "very-secret-value" {
			t.Fatalf("secret %s saved as %v", secretKey, v)
		}
		r = s.must(req{path: "/admin/settings", token: f.adminToken}, http.StatusOK)
		if strings.Contains(r.text(), "very-secret-value") {
			t.Fatal("the settings page shows a secret")
		}
		// Sending the page back unchanged changes nothing.
		r = s.must(req{method: "POST", path: "/admin/settings", token: f.adminToken, form: url.Values{"s." + key: {"12"}}}, http.StatusSeeOther)
		location(t, r, "/admin/settings?done=done.nochange")
	})
}

// TestAdminTokensAndAudit lists a user's scoped token and its calls, and
// revokes it.
func TestAdminTokensAndAudit(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		ctx := t.Context()
		created := apitest.Must(f.studentClient.PostAuthTokens(ctx, client.CreateInputBody{Name: "grading agent",
			Scopes: []string{"profile:read"}}))(t)
		apitest.Must(s.env.Client("", created.Token).GetProfileMe(ctx))(t)
		s.env.Server.Audit.Flush(ctx)
		r := s.must(req{path: "/admin/tokens", token: f.adminToken}, http.StatusOK)
		if !strings.Contains(r.text(), `data-token-id="`+created.ID+`"`) || !strings.Contains(r.text(), "grading agent") {
			t.Fatalf("tokens: %.3000s", r.text())
		}
		r = s.must(req{path: "/admin/audit?token=" + created.ID, token: f.adminToken}, http.StatusOK)
		if !strings.Contains(r.text(), "GET /api/profile/me") {
			t.Fatalf("audit: %.3000s", r.text())
		}
		s.must(req{method: "POST", path: "/admin/tokens/" + created.ID + "/revoke", token: f.adminToken}, http.StatusSeeOther)
		_, err := s.env.Client("", created.Token).GetProfileMe(ctx)
		apitest.Refused(t, err, http.StatusUnauthorized)
		r = s.must(req{path: "/admin/tokens?revoked=1", token: f.adminToken}, http.StatusOK)
		if !strings.Contains(r.text(), `data-token-id="`+created.ID+`"`) {
			t.Fatal("revoked tokens are not listed")
		}
		r = s.must(req{path: "/admin/tokens", token: f.adminToken}, http.StatusOK)
		if strings.Contains(r.text(), `data-token-id="`+created.ID+`"`) {
			t.Fatal("a revoked token is listed as live")
		}
	})
}

// TestAdminTemplatesAndMore previews and saves a certificate template and
// opens the LTI and deliveries pages.
func TestAdminTemplatesAndMore(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	f := newAdminFixture(t, s)
	admin := s.env.ClientAs("admin")
	r := s.must(req{path: "/admin/templates", token: f.adminToken}, http.StatusOK)
	const slot = "/admin/templates/slot?event=CourseFinished&amp;channel=pdf&amp;recipient=user"
	if !strings.Contains(r.text(), slot) {
		t.Fatalf("templates: %.3000s", r.text())
	}
	r = s.must(req{path: strings.ReplaceAll(slot, "&amp;", "&"), token: f.adminToken}, http.StatusOK)
	if !strings.Contains(r.text(), `id="template-form"`) {
		t.Fatalf("template: %.2000s", r.text())
	}
	form := url.Values{"event": {"CourseFinished"}, "channel": {"pdf"}, "recipient": {"user"}, "enabled": {"1"},
		"subject": {"Well done, {{.User.Name}}"}, "text": {"You finished {{.Course.Title}}."}}
	preview := url.Values{"action": {"preview"}}
	for k, v := range form {
		preview[k] = v
	}
	r = s.must(req{method: "POST", path: "/admin/templates/slot", token: f.adminToken, form: preview}, http.StatusOK)
	if !strings.Contains(r.text(), `id="preview"`) || !strings.Contains(r.text(), "Well done, ") {
		t.Fatalf("preview: %.3000s", r.text())
	}
	form.Set("action", "save")
	r = s.must(req{method: "POST", path: "/admin/templates/slot", token: f.adminToken, form: form}, http.StatusSeeOther)
	location(t, r, "/admin/templates/")
	var saved *client.Template
	for _, tp := range apitest.Must(admin.GetAdminMessageTemplates(t.Context()))(t) {
		if tp.Event == "CourseFinished" && tp.Channel == "pdf" && tp.Recipient == "user" {
			saved = &tp
		}
	}
	if saved == nil || !saved.Custom || saved.Subject != "Well done, {{.User.Name}}" {
		t.Fatalf("saved template: %+v", saved)
	}
	// A template the API refuses: its message on the page.
	form.Set("subject", "{{.Nope")
	r = s.must(req{method: "POST", path: "/admin/templates/" + id(saved.ID), token: f.adminToken, form: form}, http.StatusUnprocessableEntity)
	if !strings.Contains(r.text(), `id="admin-error"`) {
		t.Fatalf("refused template: %.2000s", r.text())
	}
	for _, p := range []string{"/admin/lti", "/admin/deliveries"} {
		s.must(req{path: p, token: f.adminToken}, http.StatusOK)
	}
	s.must(req{path: "/admin/templates/999999", token: f.adminToken}, http.StatusNotFound)
	s.must(req{path: "/admin/users/abc", token: f.adminToken}, http.StatusNotFound)
}

// TestAdminLTIForms: an admin adds and deletes LTI platform registrations
// and tools on /admin/lti; the API's messages show next to the fields of
// the form that was sent, with what was typed; tutors and learners get
// the 404 of the admin pages and change nothing.
func TestAdminLTIForms(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		f := newAdminFixture(t, s)
		admin := s.env.ClientAs("admin")
		ctx := t.Context()
		as := func(method, path string, form url.Values, status int) *resp {
			t.Helper()
			return s.must(req{method: method, path: path, token: f.adminToken, form: form}, status)
		}
		reg := url.Values{"name": {"Moodle"}, "issuer": {"https://moodle.school.test"}, "client_id": {"abc123"},
			"auth_login_url": {"https://moodle.school.test/auth"}, "jwks_url": {"https://moodle.school.test/jwks"},
			"deployment_ids": {"1\n2"}}
		tool := url.Values{"name": {"Lab"}, "login_url": {"https://lab.test/login"}, "target_link_uri": {"https://lab.test/launch"},
			"redirect_uris": {"https://lab.test/launch, https://lab.test/deep"}, "jwks_url": {"https://lab.test/jwks"},
			"share_name": {"1"}}
		for _, tok := range []string{f.studentToken, f.tutorToken} {
			s.must(req{method: "POST", path: "/admin/lti/registrations", token: tok, form: reg}, http.StatusNotFound)
			s.must(req{method: "POST", path: "/admin/lti/tools", token: tok, form: tool}, http.StatusNotFound)
		}
		s.must(req{method: "POST", path: "/admin/lti/tools", token: f.adminToken, form: tool, noCSRF: true}, http.StatusForbidden)
		if n := len(apitest.Must(admin.GetAdminLTITools(ctx))(t)); n != 0 {
			t.Fatalf("refused posts made %d tools", n)
		}

		r := as("POST", "/admin/lti/registrations", reg, http.StatusSeeOther)
		if r.header.Get("Location") != "/admin/lti?done=done.created" {
			t.Fatalf("created: to %s", r.header.Get("Location"))
		}
		regs := apitest.Must(admin.GetAdminLTIRegistrations(ctx))(t)
		if len(regs) != 1 || regs[0].Name != "Moodle" || regs[0].ClientID != "abc123" || len(regs[0].DeploymentIDs) != 2 {
			t.Fatalf("registrations: %+v", regs)
		}
		as("POST", "/admin/lti/tools", tool, http.StatusSeeOther)
		tools := apitest.Must(admin.GetAdminLTITools(ctx))(t)
		if len(tools) != 1 || tools[0].Name != "Lab" || len(tools[0].RedirectUris) != 2 {
			t.Fatalf("tools: %+v", tools)
		}
		page := as("GET", "/admin/lti?done=done.created", nil, http.StatusOK).text()
		for _, want := range []string{"Moodle", "Lab", `href="/admin/lti/registrations/` + id(regs[0].ID) + `/delete"`,
			`href="/admin/lti/tools/` + id(tools[0].ID) + `/delete"`, `id="admin-notice"`} {
			if !strings.Contains(page, want) {
				t.Errorf("the LTI page has no %s: %.4000s", want, page)
			}
		}

		// Refused: the message next to the field of the form sent, what
		// was typed kept, the other form untouched.
		bad := url.Values{"name": {"Broken"}, "login_url": {"not a url"}, "target_link_uri": {"https://lab.test/launch"},
			"redirect_uris": {"https://lab.test/launch"}}
		r = as("POST", "/admin/lti/tools", bad, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text(), `id="admin-error"`) || !strings.Contains(r.text(), `value="Broken"`) ||
			!strings.Contains(r.text(), `id="lt-login-url-err"`) || strings.Contains(r.text(), `id="lr-name" name="name" type="text" value="Broken"`) {
			t.Fatalf("refused tool: %.6000s", r.text())
		}

		// Deleted after a confirmation.
		for _, p := range []string{"/admin/lti/registrations/" + id(regs[0].ID), "/admin/lti/tools/" + id(tools[0].ID)} {
			confirm := as("GET", p+"/delete", nil, http.StatusOK).text()
			if !strings.Contains(confirm, `id="confirm-delete"`) {
				t.Fatalf("%s: no confirmation: %.2000s", p, confirm)
			}
			s.must(req{path: p + "/delete", token: f.tutorToken}, http.StatusNotFound)
			as("POST", p+"/delete", nil, http.StatusSeeOther)
		}
		if n, m := len(apitest.Must(admin.GetAdminLTIRegistrations(ctx))(t)), len(apitest.Must(admin.GetAdminLTITools(ctx))(t)); n+m != 0 {
			t.Fatalf("left after deleting: %d registrations, %d tools", n, m)
		}
		as("GET", "/admin/lti/tools/999999/delete", nil, http.StatusNotFound)
	})
}

// TestAdminLanguages: the pages speak the browser's language.
func TestAdminLanguages(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	f := newAdminFixture(t, s)
	for lang, want := range map[string]string{"pl-PL,pl;q=0.9,en;q=0.5": "Użytkownicy", "zh-CN,zh;q=0.9": "用户",
		"de-DE, en;q=0.3": "Users"} {
		r := s.must(req{path: "/admin/users", token: f.adminToken, headers: map[string]string{"Accept-Language": lang}}, http.StatusOK)
		if !strings.Contains(r.text(), "<title>"+want) {
			t.Errorf("%s: %.300s", lang, r.text())
		}
	}
}

// TestAdminWordsComplete: every word the admin and device pages use
// exists in English, Polish and Chinese, and every scope of the API is
// explained.
func TestAdminWordsComplete(t *testing.T) {
	b, err := templateFS.ReadFile("templates/admin.html")
	if err != nil {
		t.Fatal(err)
	}
	keys := regexp.MustCompile(`\.T "([^"]+)"`).FindAllStringSubmatch(string(b), -1)
	for _, r := range adminRoles {
		keys = append(keys, []string{"", "role." + r})
	}
	for _, st := range (adminView{}).DeliveryStates() {
		keys = append(keys, []string{"", "deliveries." + st})
	}
	for _, k := range keys {
		if _, ok := adminWords[k[1]]; !ok {
			t.Errorf("admin word %q missing", k[1])
		}
	}
	for k, w := range adminWords {
		if w[0] == "" || w[1] == "" || w[2] == "" {
			t.Errorf("admin word %q: %q", k, w)
		}
	}
	b, _ = templateFS.ReadFile("templates/device.html")
	for _, k := range regexp.MustCompile(`\.T "([^"]+)"`).FindAllStringSubmatch(string(b), -1) {
		if _, ok := deviceWords[k[1]]; !ok {
			t.Errorf("device word %q missing", k[1])
		}
	}
	for k, w := range deviceWords {
		if w[0] == "" || w[1] == "" || w[2] == "" {
			t.Errorf("device word %q: %q", k, w)
		}
	}
	for _, sc := range tokens.Scopes {
		info, ok := scopeInfo[sc.Name]
		if !ok {
			t.Errorf("scope %s is not explained", sc.Name)
			continue
		}
		for i := range 3 {
			if info.name[i] == "" || info.about[i] == "" {
				t.Errorf("scope %s: %v", sc.Name, info)
			}
		}
	}
	for _, text := range sessionEndedText {
		if text == "" {
			t.Error("a session-ended text is empty")
		}
	}
}
