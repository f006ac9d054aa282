package accounts_test

import (
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestKeptProfileFollowsChanges reads the caller's profile after each kind
// of change it shows. Changes made through the platform's routes must show
// at once (the change feed drops the kept detail); a change made by hand in
// SQL within the kept detail's five seconds.
func TestKeptProfileFollowsChanges(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		studentUser := env.NewUser("student")
		student, admin := env.UserClient(studentUser), env.ClientAs("admin")
		me := func() *client.Profile {
			t.Helper()
			return apitest.Must(student.GetProfileMe(ctx))(t)
		}
		// groupName is the name of the first group the profile shows.
		groupName := func(p *client.Profile) string {
			if len(p.Groups) == 0 {
				return ""
			}
			return p.Groups[0].Name
		}
		me() // kept from here on

		apitest.Must(student.PutProfileMe(ctx, client.ProfileBody{FirstName: client.Ptr("Grace")}))(t)
		if got := me().FirstName; got != "Grace" {
			t.Errorf("after a profile change: first name %q", got)
		}
		group := apitest.Must(admin.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Evening class"}))(t).ID
		apitest.Must(admin.PostAdminUserGroupsIDMembers(ctx, group, client.MemberInputBody{UserID: studentUser.ID}))(t)
		if got := groupName(me()); got != "Evening class" {
			t.Errorf("after joining a group: group %q", got)
		}
		apitest.Must(admin.PatchAdminUserGroupsID(ctx, group, client.PatchGroupInputBody{Name: client.Ptr("Morning class")}))(t)
		if got := groupName(me()); got != "Morning class" {
			t.Errorf("after the group was renamed: group %q", got)
		}
		tenant, release := env.OpenTenant(env.Tenant)
		defer release()
		var category int64
		if err := tenant.DB.QueryRowContext(ctx, `INSERT INTO categories (name, slug, created_at, updated_at)
			VALUES ('Astronomy', 'astronomy', $1, $1) RETURNING id`, env.Clock.Now()).Scan(&category); err != nil {
			t.Fatal(err)
		}
		apitest.Must(student.PutProfileInterests(ctx, client.InterestsBody{Interests: []int64{category}}))(t)
		if got := me().Interests; len(got) == 0 || got[0].Name != "Astronomy" {
			t.Errorf("after an interest was added: interests %+v", got)
		}
		apitest.Must(admin.DeleteAdminUserGroupsIDMembersID(ctx, group, studentUser.ID))(t)
		if got := me().Groups; len(got) != 0 {
			t.Errorf("after leaving the group: groups %v", got)
		}

		// By hand: seen once the kept detail is five seconds old.
		if _, err := tenant.DB.ExecContext(ctx, `UPDATE users SET last_name = 'Hopper' WHERE id = $1`, studentUser.ID); err != nil {
			t.Fatal(err)
		}
		env.Clock.Advance(5 * time.Second)
		if got := me().LastName; got != "Hopper" {
			t.Errorf("five seconds after a change by hand: last name %q", got)
		}
	})
}
