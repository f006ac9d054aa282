package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
)

// TestAdminActingInBrowser: in Chromium, an admin adds an interest to a
// learner with the keyboard and removes another, then signs in as the
// learner; the banner is on every page, which fits a phone's and a
// desktop's width and passes axe; "Back to my account" brings the
// admin's own session back on the learner's page.
func TestAdminActingInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	ctx := t.Context()
	admin := env.ClientAs("admin")
	learner := env.NewUser("student")
	first, last := "Ada", "Learner"
	apitest.Must(admin.PatchAdminUsersID(ctx, learner.ID, client.UserChangeBody{FirstName: &first, LastName: &last}))(t)
	chess, pottery := newCategory(t, env, "Chess"), newCategory(t, env, "Pottery")
	apitest.Must(admin.PostAdminUsersIDInterests(ctx, learner.ID, client.InterestsBody{Interests: []int64{chess}}))(t)
	b, origin := browse(t, s, env.As("admin"))
	userPage := origin + "/admin/users/" + id(learner.ID)

	// Chosen by name, with the keyboard: Space ticks, Enter on the button adds.
	box := `#i-category-` + id(pottery)
	b.run("add an interest", chromedp.Navigate(userPage), chromedp.WaitVisible(box, chromedp.ByQuery),
		chromedp.Focus(box, chromedp.ByQuery), chromedp.KeyEvent(" "),
		chromedp.Focus(`#interest-add`, chromedp.ByID), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(fmt.Sprintf(`#interest-list li[data-interest-id="%d"]`, pottery), chromedp.ByQuery))
	b.run("remove an interest", chromedp.Focus(fmt.Sprintf(`#interest-remove-%d`, chess), chromedp.ByID),
		chromedp.KeyEvent("\r"), chromedp.WaitNotPresent(fmt.Sprintf(`#interest-list li[data-interest-id="%d"]`, chess), chromedp.ByQuery),
		chromedp.WaitVisible(`#admin-notice`, chromedp.ByID))
	got := apitest.Must(admin.GetAdminUsersIDInterests(ctx, learner.ID))(t)
	if len(got) != 1 || got[0].ID != pottery {
		t.Fatalf("interests through the page: %+v", got)
	}
	axe := func(where string) {
		t.Helper()
		vs, err := browsertest.Axe(b.ctx)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		for _, v := range browsertest.Severe(vs) {
			t.Errorf("%s: %s", where, v)
		}
	}
	for _, width := range pageWidths {
		b.run("size", chromedp.EmulateViewport(width, 844), chromedp.Navigate(userPage), chromedp.WaitVisible(`#user-interests`, chromedp.ByID))
		axe(fmt.Sprintf("user page at %d px", width))
		b.screenshot(fmt.Sprintf("web-admin-user-interests-%d", width))
	}

	b.run("sign in as", chromedp.EmulateViewport(1280, 844), chromedp.Navigate(userPage),
		chromedp.Click(`#user-impersonate`, chromedp.ByID), chromedp.WaitVisible(`#acting-banner`, chromedp.ByID))
	var text string
	b.run("banner", chromedp.Text(`#acting-banner`, &text, chromedp.ByID))
	if !strings.Contains(text, "you are signed in as Ada Learner") {
		t.Fatalf("banner: %q", text)
	}
	for _, width := range pageWidths {
		for _, p := range []string{"/my", "/courses", "/profile"} {
			var fits bool
			b.run(p, chromedp.EmulateViewport(width, 844), chromedp.Navigate(origin+p), chromedp.WaitVisible(`#acting-back`, chromedp.ByID),
				chromedp.Evaluate(`document.documentElement.scrollWidth <= window.innerWidth`, &fits))
			if !fits {
				t.Errorf("%s with the banner is wider than %d px", p, width)
			}
			axe(fmt.Sprintf("%s acting at %d px", p, width))
		}
		b.screenshot(fmt.Sprintf("web-acting-banner-%d", width))
	}
	// Back, with the keyboard.
	b.run("back", chromedp.Focus(`#acting-back`, chromedp.ByID), chromedp.KeyEvent("\r"),
		chromedp.WaitVisible(`#admin-notice`, chromedp.ByID))
	var here string
	var banners int
	b.run("where", chromedp.Location(&here), chromedp.Evaluate(`document.querySelectorAll('#acting-banner').length`, &banners))
	if !strings.HasPrefix(here, userPage) || banners != 0 {
		t.Fatalf("after coming back: %s, %d banners", here, banners)
	}
	// The admin pages are the browser's again.
	b.run("admin again", chromedp.Navigate(origin+"/admin"), chromedp.WaitVisible(`#admin-title`, chromedp.ByID))
}
