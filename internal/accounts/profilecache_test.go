package accounts_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestKeptProfileFollowsChanges reads the caller's profile after each kind
// of change it shows. Changes made through the platform's routes must show
// at once (the change feed drops the kept detail); a change made by hand in
// SQL within the kept detail's five seconds.
func TestKeptProfileFollowsChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		student, admin := env.NewUser("student"), env.As("admin")
		me := func() *apitest.Response {
			t.Helper()
			return env.Call(t, 200, "GET", "/api/profile/me", student.Token, nil)
		}
		me() // kept from here on

		env.Call(t, 200, "PUT", "/api/profile/me", student.Token, map[string]any{"first_name": "Grace"})
		if got := me().String("data.first_name"); got != "Grace" {
			t.Errorf("after a profile change: first name %q", got)
		}
		group := env.Call(t, 201, "POST", "/api/admin/user-groups", admin.Token, map[string]any{"name": "Evening class"})
		groupPath := "/api/admin/user-groups/" + strconv.FormatInt(int64(group.Number("data.id")), 10)
		env.Call(t, 200, "POST", groupPath+"/members", admin.Token, map[string]any{"user_id": student.ID})
		if got := me().String("data.groups.0.name"); got != "Evening class" {
			t.Errorf("after joining a group: group %q", got)
		}
		env.Call(t, 200, "PATCH", groupPath, admin.Token, map[string]any{"name": "Morning class"})
		if got := me().String("data.groups.0.name"); got != "Morning class" {
			t.Errorf("after the group was renamed: group %q", got)
		}
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		ctx := context.Background()
		var category int64
		if err := tenant.DB.QueryRowContext(ctx, `INSERT INTO categories (name, slug, created_at, updated_at)
			VALUES ('Astronomy', 'astronomy', $1, $1) RETURNING id`, env.Clock.Now()).Scan(&category); err != nil {
			t.Fatal(err)
		}
		env.Call(t, 200, "PUT", "/api/profile/interests", student.Token, map[string]any{"interests": []int64{category}})
		if got := me().String("data.interests.0.name"); got != "Astronomy" {
			t.Errorf("after an interest was added: interest %q", got)
		}
		env.Call(t, 200, "DELETE", groupPath+"/members/"+strconv.FormatInt(student.ID, 10), admin.Token, nil)
		if got, _ := me().Get("data.groups").([]any); len(got) != 0 {
			t.Errorf("after leaving the group: groups %v", got)
		}

		// By hand: seen once the kept detail is five seconds old.
		if _, err := tenant.DB.ExecContext(ctx, `UPDATE users SET last_name = 'Hopper' WHERE id = $1`, student.ID); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(5 * time.Second)
		if got := me().String("data.last_name"); got != "Hopper" {
			t.Errorf("five seconds after a change by hand: last name %q", got)
		}
	})
}
