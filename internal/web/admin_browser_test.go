package web

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/device"
	"github.com/lms-platform/lms/internal/tokens"
)

// TestAdminInBrowser: an admin creates a user and a group and puts the
// user in it through the pages in Chromium, with the keyboard where a
// person would type; then every admin page is measured at a desktop's
// and a phone's width (nothing wider than the screen) and saved as a
// screenshot.
func TestAdminInBrowser(t *testing.T) {
	s := newStack(t, "sqlite", frontOptions{})
	env := s.env
	admin := env.As("admin")
	b, origin := browse(t, s, admin)
	ctx := t.Context()

	b.run("admin link", chromedp.Click(`#nav-admin`, chromedp.ByID), chromedp.WaitVisible(`#admin-title`, chromedp.ByID),
		chromedp.Click(`.admin-nav a[href="/admin/users"]`, chromedp.ByQuery), chromedp.WaitVisible(`#user-new`, chromedp.ByID))
	b.run("new user", chromedp.Click(`#user-new`, chromedp.ByID), chromedp.WaitVisible(`#u-first`, chromedp.ByID),
		chromedp.SendKeys(`#u-first`, "Grace", chromedp.ByID),
		chromedp.SendKeys(`#u-last`, "Hopper", chromedp.ByID),
		chromedp.SendKeys(`#u-email`, "grace@school.test", chromedp.ByID),
		chromedp.Click(`#u-role-tutor`, chromedp.ByID),
		chromedp.Click(`#u-role-student`, chromedp.ByID),
		chromedp.Click(`#user-save`, chromedp.ByID),
		chromedp.WaitVisible(`#admin-notice`, chromedp.ByID))
	users := apitest.Must(env.ClientAs("admin").GetAdminUsers(ctx, client.GetAdminUsersParams{Search: client.Ptr("grace@school.test")}))(t)
	if len(users.Items) != 1 || strings.Join(users.Items[0].Roles, ",") != "tutor" {
		t.Fatalf("created through the page: %+v", users.Items)
	}
	grace := users.Items[0]

	b.run("new group", chromedp.Navigate(origin+"/admin/groups"), chromedp.WaitVisible(`#g-name`, chromedp.ByID),
		// Typed and sent with the Enter key.
		chromedp.SendKeys(`#g-name`, "Night class\r", chromedp.ByID),
		chromedp.WaitVisible(`#admin-notice`, chromedp.ByID),
		chromedp.SendKeys(`#m-user`, grace.Email, chromedp.ByID),
		chromedp.Click(`#member-add`, chromedp.ByID),
		chromedp.WaitVisible(`#group-members`, chromedp.ByID))
	groups := apitest.Must(env.ClientAs("admin").GetAdminUserGroups(ctx, client.GetAdminUserGroupsParams{Search: client.Ptr("Night class")}))(t)
	if len(groups.Items) != 1 {
		t.Fatalf("groups: %+v", groups.Items)
	}
	g := apitest.Must(env.ClientAs("admin").GetAdminUserGroupsID(ctx, groups.Items[0].ID))(t)
	if len(g.Users) != 1 || g.Users[0].ID != grace.ID {
		t.Fatalf("members: %+v", g.Users)
	}

	pages := map[string]string{"users": "/admin/users", "user": "/admin/users/" + id(grace.ID),
		"groups": "/admin/groups", "group": "/admin/groups/" + id(g.ID), "settings": "/admin/settings",
		"tokens": "/admin/tokens", "audit": "/admin/audit", "templates": "/admin/templates", "lti": "/admin/lti",
		"deliveries": "/admin/deliveries", "home": "/admin", "certificates": "/admin/certificates"}
	for _, width := range pageWidths {
		b.run("size", chromedp.EmulateViewport(width, 844))
		for name, path := range pages {
			var fits bool
			b.run(name, chromedp.Navigate(origin+path), chromedp.WaitVisible(`#admin-title`, chromedp.ByID),
				chromedp.Evaluate(`document.documentElement.scrollWidth <= window.innerWidth`, &fits))
			if !fits {
				t.Errorf("%s is wider than %d px", path, width)
			}
			vs, err := browsertest.Axe(b.ctx)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, v := range browsertest.Severe(vs) {
				t.Errorf("%s at %d px: %s", path, width, v)
			}
			browsertest.Screenshot(t, b.ctx, fmt.Sprintf("web-admin-%s-%d", name, width))
		}
	}

	// The device page: every scope an admin can hold, in words; one is
	// unticked with the keyboard (focus and space) before approving.
	var all []string
	for _, sc := range tokens.Scopes {
		if !strings.HasPrefix(sc.Name, "platform:") {
			all = append(all, sc.Name)
		}
	}
	dg := apitest.Must(env.ClientAs("").PostAuthDeviceCode(ctx, client.DeviceCodeInputBody{ClientName: "school agent",
		Scopes: all}))(t)
	for _, width := range pageWidths {
		var fits bool
		b.run("device size", chromedp.EmulateViewport(width, 844), chromedp.Navigate(origin+"/device?code="+dg.UserCode),
			chromedp.WaitVisible(`#device-approve`, chromedp.ByID),
			chromedp.Evaluate(`document.documentElement.scrollWidth <= window.innerWidth`, &fits))
		if !fits {
			t.Errorf("the device page is wider than %d px", width)
		}
		browsertest.Screenshot(t, b.ctx, fmt.Sprintf("web-device-scopes-%d", width))
	}
	b.run("untick and approve", chromedp.Focus(`input[name="scope"][value="users:write"]`, chromedp.ByQuery),
		chromedp.KeyEvent(" "),
		chromedp.Click(`#device-approve`, chromedp.ByID),
		chromedp.WaitVisible(`#device-granted`, chromedp.ByID))
	env.Clock.Advance(device.Interval)
	res := env.Do(apitest.Request{Method: "POST", Path: "/api/auth/device/token", Body: map[string]any{"device_code": dg.DeviceCode}})
	tok := apitest.Must(env.Client("", res.String("data.token")).GetAuthTokensCurrent(ctx))(t)
	if slices.Contains(tok.Scopes, "users:write") || !slices.Contains(tok.Scopes, "users:read") || len(tok.Scopes) != len(all)-1 {
		t.Fatalf("granted %v", tok.Scopes)
	}
}
