package accounts_test

import (
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func TestGroups(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		member := env.NewUser("student")
		groups := func() int { return env.Count(t, `SELECT COUNT(*) FROM user_groups`) }

		ac := env.UserClient(admin)
		group := func(body client.CreateGroupInputBody) int64 {
			t.Helper()
			return apitest.Must(ac.PostAdminUserGroups(t.Context(), body))(t).ID
		}
		rootID := group(client.CreateGroupInputBody{Name: "School", Registerable: client.Ptr(true)})
		childID := group(client.CreateGroupInputBody{Name: "Class 1", ParentID: &rootID})
		grandID := group(client.CreateGroupInputBody{Name: "Team 1a", ParentID: &childID})
		// Raw: an explicit null parent, which the client leaves out.
		other := int64(env.Call(t, 201, "POST", "/api/admin/user-groups", admin.Token,
			map[string]any{"name": "Another", "parent_id": nil}).Number("data.id"))

		ctx := t.Context()
		student, anonymous := env.ClientAs("student"), env.ClientAs("anonymous")
		mc := env.UserClient(member)
		// refused checks a refusal's status and, when given, that its
		// errors name field.
		refused := func(name string, err error, status int, field string) *client.Error {
			t.Helper()
			e := apitest.Refused(t, err, status)
			if field != "" && len(e.Errors[field]) == 0 {
				t.Errorf("%s: no error for %s: %v", name, field, e)
			}
			return e
		}
		create := func(c *client.Client, body client.CreateGroupInputBody) error {
			_, err := c.PostAdminUserGroups(ctx, body)
			return err
		}
		list := func(c *client.Client, p client.GetAdminUserGroupsParams) (*client.Page[client.Group], error) {
			return c.GetAdminUserGroups(ctx, p)
		}

		before := groups()
		refused("student cannot create", create(student, client.CreateGroupInputBody{Name: "X"}), 403, "")
		refused("tutor cannot create", create(env.ClientAs("tutor"), client.CreateGroupInputBody{Name: "X"}), 403, "")
		_, err := list(anonymous, client.GetAdminUserGroupsParams{})
		refused("anonymous cannot list", err, 401, "")
		_, err = list(student, client.GetAdminUserGroupsParams{})
		refused("student cannot list", err, 403, "")
		_, err = student.GetAdminUserGroupsTree(ctx)
		refused("student cannot see the tree", err, 403, "")
		_, err = student.GetAdminUserGroupsUsers(ctx, client.GetAdminUserGroupsUsersParams{})
		refused("student cannot list members", err, 403, "")
		refused("empty name", create(ac, client.CreateGroupInputBody{Name: "  "}), 422, "name")
		refused("unknown parent", create(ac, client.CreateGroupInputBody{Name: "Orphan", ParentID: client.Ptr(int64(999999))}), 422,
			"parent_id")
		if groups() != before {
			t.Fatal("a refused create stored a group")
		}

		page := apitest.Must(list(ac, client.GetAdminUserGroupsParams{}))(t)
		if page.Meta.Total != 4 || page.Items[0].Name != "Another" || page.Items[1].Name != "Class 1" || page.Items[1].ParentID == nil ||
			*page.Items[1].ParentID != rootID {
			t.Errorf("list by name: %+v", page)
		}
		page = apitest.Must(list(ac, client.GetAdminUserGroupsParams{Search: client.Ptr("CLASS"), PerPage: client.Ptr(int64(1))}))(t)
		if page.Meta.Total != 1 || page.Items[0].ID != childID {
			t.Errorf("search and pages: %+v", page)
		}
		tree := apitest.Must(ac.GetAdminUserGroupsTree(ctx))(t)
		if len(tree) != 2 || tree[0].Name != "Another" || tree[0].Children == nil || len(tree[0].Children) != 0 ||
			tree[1].Name != "School" || len(tree[1].Children) == 0 || tree[1].Children[0].Name != "Class 1" ||
			len(tree[1].Children[0].Children) == 0 || tree[1].Children[0].Children[0].Name != "Team 1a" ||
			tree[1].Children[0].Children[0].Children == nil || len(tree[1].Children[0].Children[0].Children) != 0 {
			t.Errorf("tree: %+v", tree)
		}
		read := func(c *client.Client, id int64) (*client.GroupDetail, error) { return c.GetAdminUserGroupsID(ctx, id) }
		if r := apitest.Must(read(ac, rootID))(t); r.Name != "School" || !r.Registerable || r.Users == nil || len(r.Users) != 0 {
			t.Errorf("read: %+v", r)
		}
		_, err = read(ac, 999999)
		if e := refused("unknown group", err, 404, ""); e.Message != "Group not found." {
			t.Errorf("unknown group: %v", e)
		}
		_, err = read(student, rootID)
		refused("a non-member student cannot read", err, 403, "")
		patch := func(c *client.Client, id int64, body client.PatchGroupInputBody) (*client.Group, error) {
			return c.PatchAdminUserGroupsID(ctx, id, body)
		}
		put := func(id int64, body client.PutGroupInputBody) (*client.Group, error) {
			return ac.PutAdminUserGroupsID(ctx, id, body)
		}
		_, err = patch(ac, rootID, client.PatchGroupInputBody{ParentID: &rootID})
		refused("a group cannot be its own parent", err, 422, "parent_id")
		_, err = patch(ac, rootID, client.PatchGroupInputBody{ParentID: &grandID})
		refused("no cycles", err, 422, "parent_id")
		_, err = put(childID, client.PutGroupInputBody{Name: "Class 1", ParentID: &grandID})
		refused("no cycles with put", err, 422, "")
		_, err = patch(ac, childID, client.PatchGroupInputBody{ParentID: client.Ptr(int64(999999))})
		refused("patch parent to an unknown group", err, 422, "")
		if r := apitest.Must(read(ac, childID))(t); r.ParentID == nil || *r.ParentID != rootID {
			t.Errorf("the refused moves changed something: %+v", r)
		}
		if g := apitest.Must(patch(ac, childID, client.PatchGroupInputBody{Name: client.Ptr("Class One")}))(t); g.Name != "Class One" ||
			g.ParentID == nil || *g.ParentID != rootID {
			t.Errorf("patch name keeps the parent: %+v", g)
		}
		if g := apitest.Must(patch(ac, childID, client.PatchGroupInputBody{ParentID: &other}))(t); g.ParentID == nil || *g.ParentID != other {
			t.Errorf("move under another group: %+v", g)
		}
		// Raw: an explicit null, which the client leaves out.
		g := func(n int64) string { return "/api/admin/user-groups/" + id(n) }
		apitest.RunOne(t, env, apitest.Scenario{Name: "null moves to the top", As: "admin", Method: "PATCH", Path: g(childID),
			Body: map[string]any{"parent_id": nil}, Status: 200, JSON: map[string]any{"data.parent_id": nil, "data.name": "Class One"}})
		if r := apitest.Must(put(childID, client.PutGroupInputBody{Name: "Class 1", ParentID: &rootID}))(t); r.Name != "Class 1" ||
			r.ParentID == nil || *r.ParentID != rootID || r.Registerable {
			t.Errorf("put replaces: %+v", r)
		}
		if r := apitest.Must(put(other, client.PutGroupInputBody{Name: "Another", Registerable: client.Ptr(true)}))(t); r.ParentID != nil ||
			!r.Registerable {
			t.Errorf("put without a parent moves to the top: %+v", r)
		}
		// Raw: a body without the name, which the client always sends.
		apitest.RunOne(t, env, apitest.Scenario{Name: "put needs a name", As: "admin", Method: "PUT", Path: g(other),
			Body: map[string]any{}, Status: 422})
		_, err = patch(ac, 999999, client.PatchGroupInputBody{Name: client.Ptr("X")})
		refused("unknown group update", err, 404, "")
		_, err = patch(student, rootID, client.PatchGroupInputBody{Name: client.Ptr("X")})
		refused("student cannot update", err, 403, "")

		add := func(c *client.Client, group, user int64) (*client.GroupDetail, error) {
			return c.PostAdminUserGroupsIDMembers(ctx, group, client.MemberInputBody{UserID: user})
		}
		_, err = add(student, childID, member.ID)
		refused("student cannot add members", err, 403, "")
		env.Recorded(t, []string{"UserAddedToGroup"}, func() {
			if d := apitest.Must(add(ac, childID, member.ID))(t); len(d.Users) == 0 || d.Users[0].ID != member.ID {
				t.Errorf("add a member: %+v", d)
			}
		})
		env.Recorded(t, []string{}, func() {
			if d := apitest.Must(add(ac, childID, member.ID))(t); len(d.Users) != 1 {
				t.Errorf("adding again: %+v", d)
			}
		})
		_, err = add(ac, childID, 999999)
		refused("add an unknown user", err, 422, "user_id")
		_, err = add(ac, 999999, member.ID)
		refused("add to an unknown group", err, 404, "")
		if r := apitest.Must(read(mc, childID))(t); r.Name != "Class 1" {
			t.Errorf("a member reads its own group: %+v", r)
		}
		if p := apitest.Must(mc.GetProfileMe(ctx))(t); len(p.Groups) == 0 || p.Groups[0].ID != childID {
			t.Errorf("the member's profile lists the group: %+v", p.Groups)
		}
		members := apitest.Must(ac.GetAdminUserGroupsUsers(ctx, client.GetAdminUserGroupsUsersParams{GroupID: &childID}))(t)
		if members.Meta.Total != 1 || members.Items[0].ID != member.ID || len(members.Items[0].Groups) == 0 ||
			members.Items[0].Groups[0].Name != "Class 1" {
			t.Errorf("users with their groups: %+v", members)
		}
		all := apitest.Must(ac.GetAdminUserGroupsUsers(ctx, client.GetAdminUserGroupsUsersParams{PerPage: client.Ptr(int64(100))}))(t)
		if len(all.Items) == 0 || all.Items[0].Groups == nil || len(all.Items[0].Groups) != 0 {
			t.Errorf("users with their groups, all: %+v", all.Items)
		}
		remove := func(c *client.Client, group, user int64) (*client.GroupDetail, error) {
			return c.DeleteAdminUserGroupsIDMembersID(ctx, group, user)
		}
		_, err = remove(student, childID, member.ID)
		refused("student cannot remove members", err, 403, "")
		env.Recorded(t, []string{"UserRemovedFromGroup"}, func() {
			if d := apitest.Must(remove(ac, childID, member.ID))(t); d.Users == nil || len(d.Users) != 0 {
				t.Errorf("remove a member: %+v", d)
			}
		})
		env.Recorded(t, []string{}, func() { apitest.Must(remove(ac, childID, member.ID))(t) })
		_, err = remove(ac, childID, 999999)
		refused("remove an unknown user", err, 404, "")
		_, err = remove(ac, 999999, member.ID)
		refused("remove from an unknown group", err, 404, "")

		if reg := apitest.Must(anonymous.GetAuthRegisterableGroups(ctx))(t); len(reg) != 2 || reg[0].Name != "Another" ||
			reg[1].Name != "School" {
			t.Errorf("registerable groups show at registration: %+v", reg)
		}
		refused("student cannot delete", student.DeleteAdminUserGroupsID(ctx, rootID), 403, "")
		apitest.OK(t, ac.DeleteAdminUserGroupsID(ctx, rootID))
		if n := groups(); n != 1 {
			t.Errorf("%d groups left, want 1", n)
		}
		refused("delete again", ac.DeleteAdminUserGroupsID(ctx, rootID), 404, "")
	})
}
