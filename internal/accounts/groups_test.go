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

		before := groups()
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "student cannot create", As: "student", Method: "POST", Path: "/api/admin/user-groups",
				Body: map[string]any{"name": "X"}, Status: 403},
			{Name: "tutor cannot create", As: "tutor", Method: "POST", Path: "/api/admin/user-groups",
				Body: map[string]any{"name": "X"}, Status: 403},
			{Name: "anonymous cannot list", Method: "GET", Path: "/api/admin/user-groups", Status: 401},
			{Name: "student cannot list", As: "student", Method: "GET", Path: "/api/admin/user-groups", Status: 403},
			{Name: "student cannot see the tree", As: "student", Method: "GET", Path: "/api/admin/user-groups/tree", Status: 403},
			{Name: "student cannot list members", As: "student", Method: "GET", Path: "/api/admin/user-groups/users", Status: 403},
			{Name: "empty name", As: "admin", Method: "POST", Path: "/api/admin/user-groups",
				Body: map[string]any{"name": "  "}, Status: 422, JSON: map[string]any{"errors.name": apitest.Present}},
			{Name: "unknown parent", As: "admin", Method: "POST", Path: "/api/admin/user-groups",
				Body: map[string]any{"name": "Orphan", "parent_id": 999999}, Status: 422,
				JSON: map[string]any{"errors.parent_id": apitest.Present}},
		})
		if groups() != before {
			t.Fatal("a refused create stored a group")
		}
		g := func(n int64) string { return "/api/admin/user-groups/" + id(n) }
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "list by name", As: "admin", Method: "GET", Path: "/api/admin/user-groups", Status: 200,
				JSON: map[string]any{"meta.total": 4, "data.0.name": "Another", "data.1.name": "Class 1",
					"data.1.parent_id": rootID}},
			{Name: "search and pages", As: "admin", Method: "GET", Path: "/api/admin/user-groups?search=CLASS&per_page=1", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": childID}},
			{Name: "tree", As: "admin", Method: "GET", Path: "/api/admin/user-groups/tree", Status: 200,
				JSON: map[string]any{"data.0.name": "Another", "data.0.children": []any{}, "data.1.name": "School",
					"data.1.children.0.name": "Class 1", "data.1.children.0.children.0.name": "Team 1a",
					"data.1.children.0.children.0.children": []any{}, "data.2": nil}},
			{Name: "read", As: "admin", Method: "GET", Path: g(rootID), Status: 200,
				JSON: map[string]any{"data.name": "School", "data.registerable": true, "data.users": []any{}}},
			{Name: "unknown group", As: "admin", Method: "GET", Path: g(999999), Status: 404,
				JSON: map[string]any{"message": "Group not found."}},
			{Name: "a non-member student cannot read", As: "student", Method: "GET", Path: g(rootID), Status: 403},
			{Name: "a group cannot be its own parent", As: "admin", Method: "PATCH", Path: g(rootID),
				Body: map[string]any{"parent_id": rootID}, Status: 422, JSON: map[string]any{"errors.parent_id": apitest.Present}},
			{Name: "no cycles", As: "admin", Method: "PATCH", Path: g(rootID),
				Body: map[string]any{"parent_id": grandID}, Status: 422, JSON: map[string]any{"errors.parent_id": apitest.Present}},
			{Name: "no cycles with put", As: "admin", Method: "PUT", Path: g(childID),
				Body: map[string]any{"name": "Class 1", "parent_id": grandID}, Status: 422},
			{Name: "patch parent to an unknown group", As: "admin", Method: "PATCH", Path: g(childID),
				Body: map[string]any{"parent_id": 999999}, Status: 422},
			{Name: "the refused moves changed nothing", As: "admin", Method: "GET", Path: g(childID), Status: 200,
				JSON: map[string]any{"data.parent_id": rootID}},
			{Name: "patch name keeps the parent", As: "admin", Method: "PATCH", Path: g(childID),
				Body: map[string]any{"name": "Class One"}, Status: 200,
				JSON: map[string]any{"data.name": "Class One", "data.parent_id": rootID}},
			{Name: "move under another group", As: "admin", Method: "PATCH", Path: g(childID),
				Body: map[string]any{"parent_id": other}, Status: 200, JSON: map[string]any{"data.parent_id": other}},
			{Name: "null moves to the top", As: "admin", Method: "PATCH", Path: g(childID),
				Body: map[string]any{"parent_id": nil}, Status: 200, JSON: map[string]any{"data.parent_id": nil, "data.name": "Class One"}},
			{Name: "put replaces", As: "admin", Method: "PUT", Path: g(childID),
				Body: map[string]any{"name": "Class 1", "parent_id": rootID}, Status: 200,
				JSON: map[string]any{"data.name": "Class 1", "data.parent_id": rootID, "data.registerable": false}},
			{Name: "put without a parent moves to the top", As: "admin", Method: "PUT", Path: g(other),
				Body: map[string]any{"name": "Another", "registerable": true}, Status: 200,
				JSON: map[string]any{"data.parent_id": nil, "data.registerable": true}},
			{Name: "put needs a name", As: "admin", Method: "PUT", Path: g(other), Body: map[string]any{}, Status: 422},
			{Name: "unknown group update", As: "admin", Method: "PATCH", Path: g(999999), Body: map[string]any{"name": "X"}, Status: 404},
			{Name: "student cannot update", As: "student", Method: "PATCH", Path: g(rootID), Body: map[string]any{"name": "X"}, Status: 403},

			{Name: "student cannot add members", As: "student", Method: "POST", Path: g(childID) + "/members",
				Body: map[string]any{"user_id": member.ID}, Status: 403},
			{Name: "add a member", As: "admin", Method: "POST", Path: g(childID) + "/members",
				Body: map[string]any{"user_id": member.ID}, Status: 200, Events: []string{"UserAddedToGroup"},
				JSON: map[string]any{"data.users.0.id": member.ID}},
			{Name: "adding again changes nothing", As: "admin", Method: "POST", Path: g(childID) + "/members",
				Body: map[string]any{"user_id": member.ID}, Status: 200, Events: []string{}, JSON: map[string]any{"data.users.1": nil}},
			{Name: "add an unknown user", As: "admin", Method: "POST", Path: g(childID) + "/members",
				Body: map[string]any{"user_id": 999999}, Status: 422, JSON: map[string]any{"errors.user_id": apitest.Present}},
			{Name: "add to an unknown group", As: "admin", Method: "POST", Path: g(999999) + "/members",
				Body: map[string]any{"user_id": member.ID}, Status: 404},
			{Name: "a member reads its own group", Method: "GET", Path: g(childID), Headers: bearer(member), Status: 200,
				JSON: map[string]any{"data.name": "Class 1"}},
			{Name: "the member's profile lists the group", Method: "GET", Path: "/api/profile/me", Headers: bearer(member), Status: 200,
				JSON: map[string]any{"data.groups.0.id": childID}},
			{Name: "users with their groups", As: "admin", Method: "GET", Path: "/api/admin/user-groups/users?group_id=" + id(childID), Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.id": member.ID, "data.0.groups.0.name": "Class 1"}},
			{Name: "users with their groups, all", As: "admin", Method: "GET", Path: "/api/admin/user-groups/users?per_page=100", Status: 200,
				JSON: map[string]any{"data.0.groups": []any{}}},
			{Name: "student cannot remove members", As: "student", Method: "DELETE", Path: g(childID) + "/members/" + id(member.ID), Status: 403},
			{Name: "remove a member", As: "admin", Method: "DELETE", Path: g(childID) + "/members/" + id(member.ID), Status: 200,
				Events: []string{"UserRemovedFromGroup"}, JSON: map[string]any{"data.users": []any{}}},
			{Name: "removing again changes nothing", As: "admin", Method: "DELETE", Path: g(childID) + "/members/" + id(member.ID),
				Status: 200, Events: []string{}},
			{Name: "remove an unknown user", As: "admin", Method: "DELETE", Path: g(childID) + "/members/999999", Status: 404},
			{Name: "remove from an unknown group", As: "admin", Method: "DELETE", Path: g(999999) + "/members/" + id(member.ID), Status: 404},

			{Name: "registerable groups show at registration", Method: "GET", Path: "/api/auth/registerable-groups", Status: 200,
				JSON: map[string]any{"data.0.name": "Another", "data.1.name": "School", "data.2": nil}},
			{Name: "student cannot delete", As: "student", Method: "DELETE", Path: g(rootID), Status: 403},
			{Name: "delete removes the subtree", As: "admin", Method: "DELETE", Path: g(rootID), Status: 200,
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					if n := groups(); n != 1 {
						t.Errorf("%d groups left, want 1", n)
					}
				}},
			{Name: "delete again", As: "admin", Method: "DELETE", Path: g(rootID), Status: 404},
		})
	})
}
