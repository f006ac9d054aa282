package accounts_test

import (
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func TestAdminUserList(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		for _, u := range []client.CreateUserInputBody{
			{Email: "zoe@school.test", FirstName: "Zoe", LastName: "Zimmer", Roles: []string{"tutor"}},
			{Email: "adam@school.test", FirstName: "Adam", LastName: "Ant_Man", IsActive: client.Ptr(false)},
			{Email: "bea@school.test", FirstName: "Bea", LastName: "Bauer"},
		} {
			apitest.Must(env.UserClient(admin).PostAdminUsers(t.Context(), u))(t)
		}
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "anonymous", Method: "GET", Path: "/api/admin/users", Status: 401},
			{Name: "student", As: "student", Method: "GET", Path: "/api/admin/users", Status: 403},
			{Name: "tutor", As: "tutor", Method: "GET", Path: "/api/admin/users", Status: 403},
			{Name: "another tenant's admin", As: "other-admin", Method: "GET", Path: "/api/admin/users", Status: 401},
			{Name: "first page", As: "admin", Method: "GET", Path: "/api/admin/users?per_page=2", Status: 200,
				JSON: map[string]any{"meta.total": 6, "meta.per_page": 2, "meta.last_page": 3, "meta.current_page": 1,
					"data.0.email": admin.Email, "data.2": nil}},
			{Name: "search is case-insensitive over names and address", As: "admin", Method: "GET",
				Path: "/api/admin/users?search=ZIMM", Status: 200, JSON: map[string]any{"meta.total": 1, "data.0.email": "zoe@school.test"}},
			{Name: "search by full name", As: "admin", Method: "GET", Path: "/api/admin/users?search=bea%20bau", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.first_name": "Bea"}},
			{Name: "wildcards are literal", As: "admin", Method: "GET", Path: "/api/admin/users?search=t_m", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.email": "adam@school.test"}},
			{Name: "role filter", As: "admin", Method: "GET", Path: "/api/admin/users?role=tutor", Status: 200,
				JSON: map[string]any{"meta.total": 2}},
			{Name: "blocked", As: "admin", Method: "GET", Path: "/api/admin/users?status=blocked", Status: 200,
				JSON: map[string]any{"meta.total": 1, "data.0.email": "adam@school.test", "data.0.is_active": false}},
			{Name: "active", As: "admin", Method: "GET", Path: "/api/admin/users?status=active", Status: 200,
				JSON: map[string]any{"meta.total": 5}},
			{Name: "order by email descending", As: "admin", Method: "GET", Path: "/api/admin/users?order_by=email&order=desc", Status: 200,
				JSON: map[string]any{"data.0.email": "zoe@school.test"}},
			{Name: "order by last name", As: "admin", Method: "GET", Path: "/api/admin/users?order_by=last_name&order=desc&role=student", Status: 200,
				JSON: map[string]any{"data.0.first_name": "Bea", "data.1.first_name": "Adam"}},
			{Name: "unknown order", As: "admin", Method: "GET", Path: "/api/admin/users?order_by=password_hash", Status: 422,
				JSON: map[string]any{"errors.order_by": apitest.Present}},
			{Name: "unknown status", As: "admin", Method: "GET", Path: "/api/admin/users?status=deleted", Status: 422},
			{Name: "page size is capped", As: "admin", Method: "GET", Path: "/api/admin/users?per_page=1000", Status: 422},
			{Name: "no hash in the list", As: "admin", Method: "GET", Path: "/api/admin/users", Status: 200,
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					if strings.Contains(string(res.Body), "argon2") || strings.Contains(string(res.Body), "password") {
						t.Errorf("list shows password data: %s", res.Body)
					}
				}},
		})
	})
}

func TestAdminUserCreateReadUpdate(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		ac := env.ClientAs("admin")
		anonymous := env.ClientAs("anonymous")
		cat := category(t, env, "science")
		group := apitest.Must(ac.PostAdminUserGroups(ctx, client.CreateGroupInputBody{Name: "Class A"}))(t).ID
		users := func() int { return env.Count(t, `SELECT COUNT(*) FROM users`) }

		env.As("student")
		env.As("tutor")
		before := users()
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "student cannot create", As: "student", Method: "POST", Path: "/api/admin/users",
				Body: map[string]any{"email": "s1@school.test", "first_name": "S", "last_name": "One"}, Status: 403},
			{Name: "tutor cannot create", As: "tutor", Method: "POST", Path: "/api/admin/users",
				Body: map[string]any{"email": "s1@school.test", "first_name": "S", "last_name": "One"}, Status: 403},
			{Name: "every broken rule at once, nothing stored", As: "admin", Method: "POST", Path: "/api/admin/users",
				Body: map[string]any{"email": "not-an-address", "first_name": " ", "last_name": "X", "password": "short",
					"roles": []string{"wizard"}, "groups": []int64{99999}, "categories": []int64{99999}}, Status: 422,
				JSON: map[string]any{"errors.email": apitest.Present, "errors.first_name": apitest.Present,
					"errors.password": apitest.Present, "errors.roles": apitest.Present, "errors.groups": apitest.Present,
					"errors.categories": apitest.Present}, Events: []string{}},
			{Name: "missing required fields", As: "admin", Method: "POST", Path: "/api/admin/users",
				Body: map[string]any{"email": "s1@school.test"}, Status: 422,
				JSON: map[string]any{"errors.first_name": apitest.Present, "errors.last_name": apitest.Present}},
			{Name: "taken address", As: "admin", Method: "POST", Path: "/api/admin/users",
				Body: map[string]any{"email": "ADMIN@school.test", "first_name": "A", "last_name": "B"}, Status: 422,
				JSON: map[string]any{"errors.email": apitest.Present}},
		})
		if users() != before {
			t.Fatal("a refused create stored a user")
		}
		created := apitest.RunOne(t, env, apitest.Scenario{Name: "create", As: "admin", Method: "POST", Path: "/api/admin/users",
			Body: map[string]any{"email": "New.Person@School.test", "first_name": "New", "last_name": "Person",
				"password": "person-password", "roles": []string{"tutor", "student"}, "email_verified": true,
				"phone": "123 456", "groups": []any{group}, "categories": []int64{cat}},
			Status: 201, Events: []string{"UserAddedToGroup"},
			JSON: map[string]any{"data.email": "new.person@school.test", "data.roles": []string{"student", "tutor"},
				"data.is_active": true, "data.email_verified": true, "data.phone": "123 456", "data.groups.0.id": group,
				"data.categories.0.id": cat, "data.interests": []any{}}})
		uid := int64(created.Number("data.id"))
		login, err := anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: "new.person@school.test", Password: "person-password"})
		if err != nil {
			t.Fatalf("created user cannot log in: %v", err)
		}
		token := login.Token
		generated := apitest.Must(ac.PostAdminUsers(ctx, client.CreateUserInputBody{Email: "nopass@school.test", FirstName: "No",
			LastName: "Pass"}))(t)
		if len(generated.Roles) == 0 || generated.Roles[0] != "student" || generated.EmailVerified {
			t.Fatalf("defaults: %+v", generated)
		}
		path := "/api/admin/users/" + id(uid)
		read := apitest.Must(ac.GetAdminUsersID(ctx, uid))(t)
		if len(read.Groups) == 0 || read.Groups[0].CreatedAt.Year() < 2000 {
			t.Fatalf("group of a user without its creation time: %+v", read.Groups)
		}
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "read", As: "admin", Method: "GET", Path: path, Status: 200,
				JSON: map[string]any{"data.id": uid, "data.groups.0.name": "Class A", "data.categories.0.name": "science"}},
			{Name: "unknown user", As: "admin", Method: "GET", Path: "/api/admin/users/999999", Status: 404,
				JSON: map[string]any{"message": "User not found."}},
			{Name: "not a number", As: "admin", Method: "GET", Path: "/api/admin/users/abc", Status: 422},
			{Name: "student cannot read others", As: "student", Method: "GET", Path: path, Status: 403},
			{Name: "tutor cannot read others", As: "tutor", Method: "GET", Path: path, Status: 403},
			{Name: "student cannot update", As: "student", Method: "PATCH", Path: path, Body: map[string]any{"first_name": "X"}, Status: 403},
			{Name: "student cannot delete", As: "student", Method: "DELETE", Path: path, Status: 403},
			{Name: "patch some fields", As: "admin", Method: "PATCH", Path: path,
				Body:   map[string]any{"first_name": "Renamed", "bio": "Bio.", "groups": []int64{}, "categories": []int64{}},
				Status: 200, Events: []string{"UserRemovedFromGroup"},
				JSON: map[string]any{"data.first_name": "Renamed", "data.last_name": "Person", "data.bio": "Bio.",
					"data.groups": []any{}, "data.categories": []any{}, "data.roles": []string{"student", "tutor"}}},
			{Name: "patch validation stores nothing", As: "admin", Method: "PATCH", Path: path,
				Body: map[string]any{"first_name": "Kept?", "email": "bad", "roles": []string{"nobody"}}, Status: 422,
				JSON: map[string]any{"errors.email": apitest.Present, "errors.roles": apitest.Present}},
			{Name: "the refused patch changed nothing", As: "admin", Method: "GET", Path: path, Status: 200,
				JSON: map[string]any{"data.first_name": "Renamed"}},
			{Name: "patch to a taken address", As: "admin", Method: "PATCH", Path: path,
				Body: map[string]any{"email": "nopass@school.test"}, Status: 422, JSON: map[string]any{"errors.email": apitest.Present}},
			{Name: "unknown user patch", As: "admin", Method: "PATCH", Path: "/api/admin/users/999999",
				Body: map[string]any{"first_name": "X"}, Status: 404},
			{Name: "put needs the names and address", As: "admin", Method: "PUT", Path: path,
				Body: map[string]any{"first_name": "Only"}, Status: 422,
				JSON: map[string]any{"errors.email": apitest.Present, "errors.last_name": apitest.Present}},
			{Name: "put", As: "admin", Method: "PUT", Path: path,
				Body: map[string]any{"email": "put.person@school.test", "first_name": "Put", "last_name": "Person",
					"roles": []string{"student"}, "email_verified": false}, Status: 200,
				JSON: map[string]any{"data.email": "put.person@school.test", "data.roles": []string{"student"},
					"data.email_verified": false, "data.bio": "Bio."}},
			{Name: "admin sets a password", As: "admin", Method: "PATCH", Path: path,
				Body: map[string]any{"password": "admin-set-password", "email_verified": true}, Status: 200,
				Events: []string{"PasswordChanged"}},
			{Name: "the new password ends the user's sessions", Method: "GET", Path: "/api/profile/me",
				Headers: map[string]string{"Authorization": "Bearer " + token}, Status: 401},
		})
		if _, err := anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: "put.person@school.test",
			Password: "admin-set-password"}); err != nil {
			t.Fatalf("login with the admin-set password: %v", err)
		}
	})
}

func TestAdminBlockAndDelete(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		victim := env.NewUser("student")
		path := "/api/admin/users/" + id(victim.ID)
		self := "/api/admin/users/" + id(admin.ID)
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "the user works before", Method: "GET", Path: "/api/profile/me", Headers: bearer(victim), Status: 200},
			{Name: "tutor cannot block", As: "tutor", Method: "PATCH", Path: path, Body: map[string]any{"is_active": false}, Status: 403},
			{Name: "block", As: "admin", Method: "PATCH", Path: path, Body: map[string]any{"is_active": false}, Status: 200,
				Events: []string{"AccountBlocked"}, JSON: map[string]any{"data.is_active": false}},
			{Name: "the blocked user's token stops at once", Method: "GET", Path: "/api/profile/me", Headers: bearer(victim), Status: 401},
			{Name: "blocking again records nothing", As: "admin", Method: "PATCH", Path: path, Body: map[string]any{"is_active": false},
				Status: 200, Events: []string{}},
			{Name: "unblock", As: "admin", Method: "PATCH", Path: path, Body: map[string]any{"is_active": true}, Status: 200,
				Events: []string{}, JSON: map[string]any{"data.is_active": true}},
			{Name: "the old token stays revoked", Method: "GET", Path: "/api/profile/me", Headers: bearer(victim), Status: 401},
			{Name: "an admin cannot block themself", As: "admin", Method: "PATCH", Path: self, Body: map[string]any{"is_active": false},
				Status: 422, JSON: map[string]any{"errors.is_active": apitest.Present}, Events: []string{}},
			{Name: "an admin cannot drop their own admin role", As: "admin", Method: "PATCH", Path: self,
				Body: map[string]any{"roles": []string{"student"}}, Status: 422, JSON: map[string]any{"errors.roles": apitest.Present}},
			{Name: "an admin cannot delete themself here", As: "admin", Method: "DELETE", Path: self, Status: 422, Events: []string{}},
			{Name: "the admin still works", As: "admin", Method: "GET", Path: "/api/profile/me", Status: 200,
				JSON: map[string]any{"data.roles": []string{"admin"}}},
			{Name: "tutor cannot delete", As: "tutor", Method: "DELETE", Path: path, Status: 403},
			{Name: "delete", As: "admin", Method: "DELETE", Path: path, Status: 200, Events: []string{"AccountDeleted"}},
			{Name: "deleted is gone", As: "admin", Method: "GET", Path: path, Status: 404},
			{Name: "delete unknown", As: "admin", Method: "DELETE", Path: path, Status: 404, Events: []string{}},
		})
		_, err := env.ClientAs("anonymous").PostAuthLogin(t.Context(), client.LoginInputBody{Email: victim.Email, Password: victim.Password})
		if client.StatusOf(err) != 422 {
			t.Fatalf("deleted user logs in: %v", err)
		}
	})
}

func TestAdminAvatarSettingsInterests(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.ClientAs("admin")
		target := env.NewUser("student")
		student := env.ClientAs("student")
		base := "/api/admin/users/" + id(target.ID)
		upload := func(c *client.Client, user int64, data []byte) (*client.Detail, error) {
			return c.PostAdminUsersIDAvatar(ctx, user, client.PostAdminUsersIDAvatarForm{Avatar: avatarFile(data)})
		}

		d, err := upload(admin, target.ID, apitest.PNG(t))
		if err != nil || d.PathAvatar == nil || !strings.HasPrefix(*d.PathAvatar, "avatars/"+id(target.ID)+"/") {
			t.Fatalf("admin avatar upload: %+v %v", d, err)
		}
		avatar := *d.PathAvatar
		if _, err := upload(student, target.ID, apitest.PNG(t)); client.StatusOf(err) != 403 {
			t.Fatalf("student uploads another's avatar: %v", err)
		}
		if _, err := upload(admin, target.ID, []byte("%PDF-1.4 not an image")); client.StatusOf(err) != 422 {
			t.Fatalf("pdf avatar: %v", err)
		}
		if _, err := upload(admin, 999999, apitest.PNG(t)); client.StatusOf(err) != 404 {
			t.Fatalf("unknown user avatar: %v", err)
		}
		_, err = student.DeleteAdminUsersIDAvatar(ctx, target.ID)
		apitest.Refused(t, err, 403)
		_, err = admin.DeleteAdminUsersIDAvatar(ctx, 999999)
		apitest.Refused(t, err, 404)
		if d := apitest.Must(admin.DeleteAdminUsersIDAvatar(ctx, target.ID))(t); d.PathAvatar != nil || env.BlobExists(t, avatar) {
			t.Fatalf("admin avatar delete: %+v", d)
		}

		music, art := category(t, env, "music"), category(t, env, "art")
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "settings: student cannot read another's", As: "student", Method: "GET", Path: base + "/settings", Status: 403},
			{Name: "settings: student cannot write another's", As: "student", Method: "PATCH", Path: base + "/settings",
				Body: map[string]any{"a": "b"}, Status: 403},
			{Name: "settings: unknown user", As: "admin", Method: "GET", Path: "/api/admin/users/999999/settings", Status: 404},
			{Name: "settings: put replaces", As: "admin", Method: "PUT", Path: base + "/settings",
				Body: map[string]any{"a": "1", "b": "2"}, Status: 200, JSON: map[string]any{"data": map[string]any{"a": "1", "b": "2"}}},
			{Name: "settings: patch merges", As: "admin", Method: "PATCH", Path: base + "/settings",
				Body: map[string]any{"b": "", "c": "3"}, Status: 200, JSON: map[string]any{"data": map[string]any{"a": "1", "c": "3"}}},
			{Name: "settings: put again replaces all", As: "admin", Method: "PUT", Path: base + "/settings",
				Body: map[string]any{"z": "9"}, Status: 200, JSON: map[string]any{"data": map[string]any{"z": "9"}}},
			{Name: "settings: bad key", As: "admin", Method: "PUT", Path: base + "/settings",
				Body: map[string]any{"UPPER": "9"}, Status: 422, JSON: map[string]any{"errors.UPPER": apitest.Present}},
			{Name: "settings: get", As: "admin", Method: "GET", Path: base + "/settings", Status: 200,
				JSON: map[string]any{"data": map[string]any{"z": "9"}}},
			{Name: "settings: own through the admin route", Method: "GET", Path: base + "/settings", Headers: bearer(target), Status: 200,
				JSON: map[string]any{"data.z": "9"}},

			{Name: "interests: student cannot set another's", As: "student", Method: "PUT", Path: base + "/interests",
				Body: map[string]any{"interests": []int64{music}}, Status: 403},
			{Name: "interests: tutor cannot read another's", As: "tutor", Method: "GET", Path: base + "/interests", Status: 403},
			{Name: "interests: put", As: "admin", Method: "PUT", Path: base + "/interests",
				Body: map[string]any{"interests": []int64{music}}, Status: 200, JSON: map[string]any{"data.0.id": music, "data.1": nil}},
			{Name: "interests: post adds", As: "admin", Method: "POST", Path: base + "/interests",
				Body: map[string]any{"interests": []int64{art, music}}, Status: 200,
				JSON: map[string]any{"data.0.id": art, "data.1.id": music, "data.2": nil}},
			{Name: "interests: unknown category", As: "admin", Method: "POST", Path: base + "/interests",
				Body: map[string]any{"interests": []int64{424242}}, Status: 422, JSON: map[string]any{"errors.interests": apitest.Present}},
			{Name: "interests: get", As: "admin", Method: "GET", Path: base + "/interests", Status: 200,
				JSON: map[string]any{"data.0.name": "art", "data.1.name": "music"}},
			{Name: "interests: delete one", As: "admin", Method: "DELETE", Path: base + "/interests/" + id(art), Status: 200,
				JSON: map[string]any{"data.0.id": music, "data.1": nil}},
			{Name: "interests: delete again is no change", As: "admin", Method: "DELETE", Path: base + "/interests/" + id(art), Status: 200,
				JSON: map[string]any{"data.0.id": music, "data.1": nil}},
			{Name: "interests: unknown interest", As: "admin", Method: "DELETE", Path: base + "/interests/424242", Status: 404},
			{Name: "interests: unknown user", As: "admin", Method: "GET", Path: "/api/admin/users/999999/interests", Status: 404},
			{Name: "interests: student cannot delete another's", As: "student", Method: "DELETE", Path: base + "/interests/" + id(music), Status: 403},
		})
	})
}
