package web

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	lmsclient "github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/device"
)

// TestDeviceScopesInWords: the request page explains each scope in
// words, grouped, each a ticked box; the approver grants fewer by
// unticking, and granting none is refused without deciding.
func TestDeviceScopesInWords(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		env := s.env
		u := env.NewUser("tutor")
		asked := []string{"courses:read", "courses:write", "profile:read", "progress:write"}
		g := apitest.Must(env.ClientAs("").PostAuthDeviceCode(t.Context(), lmsclient.DeviceCodeInputBody{ClientName: "grading agent",
			Scopes: asked}))(t)
		page := s.must(req{path: "/device?code=" + g.UserCode, token: u.Token}, http.StatusOK)
		text := page.text()
		for _, want := range []string{"<legend>Reading</legend>", "<legend>Authoring</legend>", "<legend>Acting as you</legend>",
			"Read courses", "Author courses", "Record your progress", `id="device-choose"`} {
			if !strings.Contains(text, want) {
				t.Fatalf("the request page lacks %q: %.3000s", want, text)
			}
		}
		for _, sc := range asked {
			if !strings.Contains(text, `name="scope" value="`+sc+`" id="scope-`+sc+`" checked`) {
				t.Fatalf("no ticked box for %s", sc)
			}
		}
		if strings.Index(text, "Read courses") > strings.Index(text, "Author courses") {
			t.Fatal("reading is not listed before authoring")
		}
		pl := s.must(req{path: "/device?code=" + g.UserCode, token: u.Token,
			headers: map[string]string{"Accept-Language": "pl"}}, http.StatusOK)
		if !strings.Contains(pl.text(), "Odczyt kursów") || !strings.Contains(pl.text(), "Zatwierdź") {
			t.Fatalf("Polish page: %.2000s", pl.text())
		}

		approve := confirmation(t, page)
		approve.method, approve.path, approve.token = "POST", "/device/approve", u.Token
		approve.form.Set("scopes_shown", "1")
		// Nothing ticked (or only a scope not asked for): refused, still
		// pending, every box shown unticked.
		approve.form["scope"] = []string{"users:write"}
		r := s.must(approve, http.StatusUnprocessableEntity)
		if !strings.Contains(r.text(), "Choose at least one permission") || !strings.Contains(r.text(), `id="device-approve"`) ||
			strings.Contains(r.text(), " checked") {
			t.Fatalf("none granted: %.3000s", r.text())
		}
		if res := pollDevice(t, env, g.DeviceCode); res.String("error") != device.CodePending {
			t.Fatalf("decided without a choice: %s", res.Body)
		}
		approve.form["scope"] = []string{"courses:read", "profile:read"}
		r = s.must(approve, http.StatusOK)
		if !strings.Contains(r.text(), `id="device-granted"`) || !strings.Contains(r.text(), "Read your profile") {
			t.Fatalf("approved: %.3000s", r.text())
		}
		res := pollDevice(t, env, g.DeviceCode)
		secret := res.String("data.token")
		if res.Status != 200 || secret == "" {
			t.Fatalf("poll: %d %s", res.Status, res.Body)
		}
		tok := apitest.Must(env.Client("", secret).GetAuthTokensCurrent(t.Context()))(t)
		got := slices.Clone(tok.Scopes)
		slices.Sort(got)
		if !slices.Equal(got, []string{"courses:read", "profile:read"}) {
			t.Fatalf("granted scopes %v", tok.Scopes)
		}
		_, err := env.Client("", secret).PostAdminCourses(t.Context(), lmsclient.CourseBody{Title: "Not allowed"})
		apitest.Refused(t, err, http.StatusForbidden)
	})
}

// TestDeviceUnknownScope: a scope this frontend does not know is shown
// by its name under Other.
func TestDeviceUnknownScope(t *testing.T) {
	groups := groupScopes([]string{"courses:read", "future:thing"}, "zh", func(string) bool { return true })
	if len(groups) != 2 || groups[0].Name != "读取" || groups[1].Name != "其他" || groups[1].Scopes[0].Name != "future:thing" {
		t.Fatalf("groups: %+v", groups)
	}
}
