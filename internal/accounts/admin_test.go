package accounts_test

import (
	"maps"
	"slices"
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
		ctx := t.Context()
		ac := env.UserClient(admin)
		list := func(c *client.Client, p client.GetAdminUsersParams) (*client.Page[client.Summary], error) {
			return c.GetAdminUsers(ctx, p)
		}
		for name, c := range map[string]struct {
			c      *client.Client
			status int
		}{
			"anonymous": {env.ClientAs("anonymous"), 401}, "student": {env.ClientAs("student"), 403},
			"tutor": {env.ClientAs("tutor"), 403}, "another tenant's admin": {env.Client("", env.As("other-admin").Token), 401},
		} {
			t.Run(name, func(t *testing.T) {
				_, err := list(c.c, client.GetAdminUsersParams{})
				apitest.Refused(t, err, c.status)
			})
		}
		// find lists as the admin and checks the total and, when given, the
		// first items' e-mail addresses or first names.
		find := func(name string, p client.GetAdminUsersParams, total int, first ...string) *client.Page[client.Summary] {
			t.Helper()
			page := apitest.Must(list(ac, p))(t)
			if page.Meta.Total != total && total >= 0 {
				t.Errorf("%s: total %d, want %d", name, page.Meta.Total, total)
			}
			for i, want := range first {
				if i >= len(page.Items) || (page.Items[i].Email != want && page.Items[i].FirstName != want) {
					t.Errorf("%s: item %d is not %s: %+v", name, i, want, page.Items)
				}
			}
			return page
		}
		if p := find("first page", client.GetAdminUsersParams{PerPage: client.Ptr(int64(2))}, 6, admin.Email); p.Meta !=
			(client.PageMeta{CurrentPage: 1, PerPage: 2, Total: 6, LastPage: 3}) || len(p.Items) != 2 {
			t.Errorf("first page: %+v", p)
		}
		find("search is case-insensitive over names and address", client.GetAdminUsersParams{Search: client.Ptr("ZIMM")}, 1,
			"zoe@school.test")
		find("search by full name", client.GetAdminUsersParams{Search: client.Ptr("bea bau")}, 1, "Bea")
		find("wildcards are literal", client.GetAdminUsersParams{Search: client.Ptr("t_m")}, 1, "adam@school.test")
		find("role filter", client.GetAdminUsersParams{Role: client.Ptr("tutor")}, 2)
		if p := find("blocked", client.GetAdminUsersParams{Status: client.Ptr("blocked")}, 1, "adam@school.test"); p.Items[0].IsActive {
			t.Errorf("blocked: %+v", p.Items)
		}
		find("active", client.GetAdminUsersParams{Status: client.Ptr("active")}, 5)
		find("order by email descending", client.GetAdminUsersParams{OrderBy: client.Ptr("email"), Order: client.Ptr("desc")}, -1,
			"zoe@school.test")
		find("order by last name", client.GetAdminUsersParams{OrderBy: client.Ptr("last_name"), Order: client.Ptr("desc"),
			Role: client.Ptr("student")}, -1, "Bea", "Adam")
		_, err := list(ac, client.GetAdminUsersParams{OrderBy: client.Ptr("password_hash")})
		if e := apitest.Refused(t, err, 422); len(e.Errors["order_by"]) == 0 {
			t.Errorf("unknown order: %v", e)
		}
		_, err = list(ac, client.GetAdminUsersParams{Status: client.Ptr("deleted")})
		apitest.Refused(t, err, 422) // unknown status
		_, err = list(ac, client.GetAdminUsersParams{PerPage: client.Ptr(int64(1000))})
		apitest.Refused(t, err, 422) // the page size is capped
		// Raw: nothing anywhere in the answer holds password data.
		apitest.Run(t, env, []apitest.Scenario{
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

		student, tutor := env.ClientAs("student"), env.ClientAs("tutor")
		before := users()
		create := func(c *client.Client, body client.CreateUserInputBody) (*client.Detail, error) {
			return c.PostAdminUsers(ctx, body)
		}
		// fields fails the test unless err is a 422 whose errors name each
		// of names.
		fields := func(name string, err error, names ...string) {
			t.Helper()
			e := apitest.Refused(t, err, 422)
			for _, n := range names {
				if len(e.Errors[n]) == 0 {
					t.Errorf("%s: no error for %s: %v", name, n, e)
				}
			}
		}
		s1 := client.CreateUserInputBody{Email: "s1@school.test", FirstName: "S", LastName: "One"}
		_, err := create(student, s1)
		apitest.Refused(t, err, 403)
		_, err = create(tutor, s1)
		apitest.Refused(t, err, 403)
		env.Recorded(t, []string{}, func() {
			_, err := create(ac, client.CreateUserInputBody{Email: "not-an-address", FirstName: " ", LastName: "X",
				Password: client.Ptr("short"), Roles: []string{"wizard"}, Groups: []int64{99999}, Categories: []int64{99999}})
			fields("every broken rule at once", err, "email", "first_name", "password", "roles", "groups", "categories")
		})
		// Raw: a body with the names left out, which the client always sends.
		apitest.RunOne(t, env, apitest.Scenario{Name: "missing required fields", As: "admin", Method: "POST", Path: "/api/admin/users",
			Body: map[string]any{"email": "s1@school.test"}, Status: 422,
			JSON: map[string]any{"errors.first_name": apitest.Present, "errors.last_name": apitest.Present}})
		_, err = create(ac, client.CreateUserInputBody{Email: "ADMIN@school.test", FirstName: "A", LastName: "B"})
		fields("taken address", err, "email")
		if users() != before {
			t.Fatal("a refused create stored a user")
		}
		var uid int64
		env.Recorded(t, []string{"UserAddedToGroup"}, func() {
			d := apitest.Must(create(ac, client.CreateUserInputBody{Email: "New.Person@School.test", FirstName: "New", LastName: "Person",
				Password: client.Ptr("person-password"), Roles: []string{"tutor", "student"}, EmailVerified: client.Ptr(true),
				Phone: client.Ptr("123 456"), Groups: []int64{group}, Categories: []int64{cat}}))(t)
			if d.Email != "new.person@school.test" || !slices.Equal(d.Roles, []string{"student", "tutor"}) || !d.IsActive ||
				!d.EmailVerified || d.Phone == nil || *d.Phone != "123 456" || len(d.Groups) == 0 || d.Groups[0].ID != group ||
				len(d.Categories) == 0 || d.Categories[0].ID != cat || d.Interests == nil || len(d.Interests) != 0 {
				t.Errorf("create: %+v", d)
			}
			uid = d.ID
		})
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
		read := apitest.Must(ac.GetAdminUsersID(ctx, uid))(t)
		if len(read.Groups) == 0 || read.Groups[0].CreatedAt.Year() < 2000 {
			t.Fatalf("group of a user without its creation time: %+v", read.Groups)
		}
		if read.ID != uid || read.Groups[0].Name != "Class A" || len(read.Categories) == 0 || read.Categories[0].Name != "science" {
			t.Errorf("read: %+v", read)
		}
		_, err = ac.GetAdminUsersID(ctx, 999999)
		if e := apitest.Refused(t, err, 404); e.Message != "User not found." {
			t.Errorf("unknown user: %v", e)
		}
		// Raw: a path the client cannot build.
		apitest.RunOne(t, env, apitest.Scenario{Name: "not a number", As: "admin", Method: "GET", Path: "/api/admin/users/abc", Status: 422})
		for name, c := range map[string]*client.Client{"student": student, "tutor": tutor} {
			_, err = c.GetAdminUsersID(ctx, uid)
			if client.StatusOf(err) != 403 {
				t.Errorf("%s reads others: %v", name, err)
			}
		}
		patch := func(c *client.Client, body client.UserChangeBody) (*client.Detail, error) {
			return c.PatchAdminUsersID(ctx, uid, body)
		}
		_, err = patch(student, client.UserChangeBody{FirstName: client.Ptr("X")})
		apitest.Refused(t, err, 403)
		apitest.Refused(t, student.DeleteAdminUsersID(ctx, uid), 403)
		env.Recorded(t, []string{"UserRemovedFromGroup"}, func() {
			d := apitest.Must(patch(ac, client.UserChangeBody{FirstName: client.Ptr("Renamed"), Bio: client.Ptr("Bio."),
				Groups: []int64{}, Categories: []int64{}}))(t)
			if d.FirstName != "Renamed" || d.LastName != "Person" || d.Bio == nil || *d.Bio != "Bio." || d.Groups == nil ||
				len(d.Groups) != 0 || d.Categories == nil || len(d.Categories) != 0 || !slices.Equal(d.Roles, []string{"student", "tutor"}) {
				t.Errorf("patch some fields: %+v", d)
			}
		})
		_, err = patch(ac, client.UserChangeBody{FirstName: client.Ptr("Kept?"), Email: client.Ptr("bad"), Roles: []string{"nobody"}})
		fields("patch validation stores nothing", err, "email", "roles")
		if d := apitest.Must(ac.GetAdminUsersID(ctx, uid))(t); d.FirstName != "Renamed" {
			t.Errorf("the refused patch changed something: %+v", d)
		}
		_, err = patch(ac, client.UserChangeBody{Email: client.Ptr("nopass@school.test")})
		fields("patch to a taken address", err, "email")
		_, err = ac.PatchAdminUsersID(ctx, 999999, client.UserChangeBody{FirstName: client.Ptr("X")})
		apitest.Refused(t, err, 404)
		// Raw: a body with the address and last name left out.
		apitest.RunOne(t, env, apitest.Scenario{Name: "put needs the names and address", As: "admin", Method: "PUT",
			Path: "/api/admin/users/" + id(uid), Body: map[string]any{"first_name": "Only"}, Status: 422,
			JSON: map[string]any{"errors.email": apitest.Present, "errors.last_name": apitest.Present}})
		if d := apitest.Must(ac.PutAdminUsersID(ctx, uid, client.PutUserInputBody{Email: "put.person@school.test", FirstName: "Put",
			LastName: "Person", Roles: []string{"student"}, EmailVerified: client.Ptr(false)}))(t); d.Email != "put.person@school.test" ||
			!slices.Equal(d.Roles, []string{"student"}) || d.EmailVerified || d.Bio == nil || *d.Bio != "Bio." {
			t.Errorf("put: %+v", d)
		}
		env.Recorded(t, []string{"PasswordChanged"}, func() {
			apitest.Must(patch(ac, client.UserChangeBody{Password: client.Ptr("admin-set-password"), EmailVerified: client.Ptr(true)}))(t)
		})
		_, err = env.Client("", token).GetProfileMe(ctx)
		apitest.Refused(t, err, 401) // the new password ends the user's sessions
		if _, err := anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: "put.person@school.test",
			Password: "admin-set-password"}); err != nil {
			t.Fatalf("login with the admin-set password: %v", err)
		}
	})
}

func TestAdminBlockAndDelete(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		admin := env.As("admin")
		ac, tutor := env.UserClient(admin), env.ClientAs("tutor")
		victim := env.NewUser("student")
		vc := env.UserClient(victim)
		me := func() error {
			_, err := vc.GetProfileMe(ctx)
			return err
		}
		patch := func(c *client.Client, id int64, body client.UserChangeBody) (*client.Detail, error) {
			return c.PatchAdminUsersID(ctx, id, body)
		}
		active := func(on bool) client.UserChangeBody { return client.UserChangeBody{IsActive: client.Ptr(on)} }

		apitest.OK(t, me()) // the user works before
		_, err := patch(tutor, victim.ID, active(false))
		apitest.Refused(t, err, 403) // a tutor cannot block
		env.Recorded(t, []string{"AccountBlocked"}, func() {
			if d := apitest.Must(patch(ac, victim.ID, active(false)))(t); d.IsActive {
				t.Errorf("block: %+v", d)
			}
		})
		apitest.Refused(t, me(), 401)                                                                // the blocked user's token stops at once
		env.Recorded(t, []string{}, func() { apitest.Must(patch(ac, victim.ID, active(false)))(t) }) // blocking again
		env.Recorded(t, []string{}, func() {
			if d := apitest.Must(patch(ac, victim.ID, active(true)))(t); !d.IsActive {
				t.Errorf("unblock: %+v", d)
			}
		})
		apitest.Refused(t, me(), 401) // the old token stays revoked
		env.Recorded(t, []string{}, func() {
			_, err := patch(ac, admin.ID, active(false))
			if e := apitest.Refused(t, err, 422); len(e.Errors["is_active"]) == 0 {
				t.Errorf("an admin cannot block themself: %v", e)
			}
		})
		_, err = patch(ac, admin.ID, client.UserChangeBody{Roles: []string{"student"}})
		if e := apitest.Refused(t, err, 422); len(e.Errors["roles"]) == 0 {
			t.Errorf("an admin cannot drop their own admin role: %v", e)
		}
		env.Recorded(t, []string{}, func() {
			apitest.Refused(t, ac.DeleteAdminUsersID(ctx, admin.ID), 422) // not themself, not here
		})
		if p := apitest.Must(ac.GetProfileMe(ctx))(t); !slices.Equal(p.Roles, []string{"admin"}) {
			t.Errorf("the admin still works: %+v", p)
		}
		apitest.Refused(t, tutor.DeleteAdminUsersID(ctx, victim.ID), 403)
		env.Recorded(t, []string{"AccountDeleted"}, func() { apitest.OK(t, ac.DeleteAdminUsersID(ctx, victim.ID)) })
		_, err = ac.GetAdminUsersID(ctx, victim.ID)
		apitest.Refused(t, err, 404) // deleted is gone
		env.Recorded(t, []string{}, func() { apitest.Refused(t, ac.DeleteAdminUsersID(ctx, victim.ID), 404) })
		_, err = env.ClientAs("anonymous").PostAuthLogin(ctx, client.LoginInputBody{Email: victim.Email, Password: victim.Password})
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
		settings := func(name string, got map[string]string, err error, want map[string]string) {
			t.Helper()
			if err != nil || !maps.Equal(got, want) {
				t.Errorf("settings: %s: %v %v, want %v", name, got, err, want)
			}
		}
		_, err = student.GetAdminUsersIDSettings(ctx, target.ID)
		apitest.Refused(t, err, 403) // a student cannot read another's
		_, err = student.PatchAdminUsersIDSettings(ctx, target.ID, map[string]string{"a": "b"})
		apitest.Refused(t, err, 403) // nor write them
		_, err = admin.GetAdminUsersIDSettings(ctx, 999999)
		apitest.Refused(t, err, 404)
		got, err := admin.PutAdminUsersIDSettings(ctx, target.ID, map[string]string{"a": "1", "b": "2"})
		settings("put replaces", got, err, map[string]string{"a": "1", "b": "2"})
		got, err = admin.PatchAdminUsersIDSettings(ctx, target.ID, map[string]string{"b": "", "c": "3"})
		settings("patch merges", got, err, map[string]string{"a": "1", "c": "3"})
		got, err = admin.PutAdminUsersIDSettings(ctx, target.ID, map[string]string{"z": "9"})
		settings("put again replaces all", got, err, map[string]string{"z": "9"})
		_, err = admin.PutAdminUsersIDSettings(ctx, target.ID, map[string]string{"UPPER": "9"})
		if e := apitest.Refused(t, err, 422); len(e.Errors["UPPER"]) == 0 {
			t.Errorf("settings: bad key: %v", e)
		}
		got, err = admin.GetAdminUsersIDSettings(ctx, target.ID)
		settings("get", got, err, map[string]string{"z": "9"})
		got, err = env.UserClient(target).GetAdminUsersIDSettings(ctx, target.ID)
		settings("own through the admin route", got, err, map[string]string{"z": "9"})

		// ids fails the test unless the interests are want, in order.
		ids := func(name string, got []client.Category, err error, want ...int64) {
			t.Helper()
			var have []int64
			for _, c := range got {
				have = append(have, c.ID)
			}
			if err != nil || !slices.Equal(have, want) {
				t.Errorf("interests: %s: %v %v, want %v", name, have, err, want)
			}
		}
		_, err = student.PutAdminUsersIDInterests(ctx, target.ID, client.InterestsBody{Interests: []int64{music}})
		apitest.Refused(t, err, 403) // a student cannot set another's
		_, err = env.ClientAs("tutor").GetAdminUsersIDInterests(ctx, target.ID)
		apitest.Refused(t, err, 403) // a tutor cannot read another's
		cats, err := admin.PutAdminUsersIDInterests(ctx, target.ID, client.InterestsBody{Interests: []int64{music}})
		ids("put", cats, err, music)
		cats, err = admin.PostAdminUsersIDInterests(ctx, target.ID, client.InterestsBody{Interests: []int64{art, music}})
		ids("post adds", cats, err, art, music)
		_, err = admin.PostAdminUsersIDInterests(ctx, target.ID, client.InterestsBody{Interests: []int64{424242}})
		if e := apitest.Refused(t, err, 422); len(e.Errors["interests"]) == 0 {
			t.Errorf("interests: unknown category: %v", e)
		}
		cats, err = admin.GetAdminUsersIDInterests(ctx, target.ID)
		if err != nil || len(cats) != 2 || cats[0].Name != "art" || cats[1].Name != "music" {
			t.Errorf("interests: get: %+v %v", cats, err)
		}
		cats, err = admin.DeleteAdminUsersIDInterestsID(ctx, target.ID, art)
		ids("delete one", cats, err, music)
		cats, err = admin.DeleteAdminUsersIDInterestsID(ctx, target.ID, art)
		ids("delete again is no change", cats, err, music)
		_, err = admin.DeleteAdminUsersIDInterestsID(ctx, target.ID, 424242)
		apitest.Refused(t, err, 404) // an unknown interest
		_, err = admin.GetAdminUsersIDInterests(ctx, 999999)
		apitest.Refused(t, err, 404) // an unknown user
		_, err = student.DeleteAdminUsersIDInterestsID(ctx, target.ID, music)
		apitest.Refused(t, err, 403) // a student cannot delete another's
	})
}
