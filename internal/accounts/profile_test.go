package accounts_test

import (
	"maps"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

func TestProfile(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		student := env.As("student")
		sc := env.UserClient(student)
		_, err := env.ClientAs("anonymous").GetProfileMe(ctx)
		apitest.Refused(t, err, 401)
		_, err = env.Client("", env.As("other-admin").Token).GetProfileMe(ctx)
		apitest.Refused(t, err, 401) // a token of another tenant
		if p := apitest.Must(env.ClientAs("admin").GetProfileMe(ctx))(t); !slices.Equal(p.Roles, []string{"admin"}) || len(p.Permissions) == 0 {
			t.Errorf("admin has the admin permissions: %+v", p)
		}
		// Raw: the envelope, and that no secret is anywhere in the answer.
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "student reads the profile", As: "student", Method: "GET", Path: "/api/profile/me", Status: 200,
				JSON: map[string]any{"success": true, "data.id": student.ID, "data.email": student.Email,
					"data.roles": []string{"student"}, "data.categories": []any{}, "data.interests": []any{},
					"data.groups": []any{}, "data.path_avatar": nil},
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					perms, _ := res.Get("data.permissions").([]any)
					var names []string
					for _, p := range perms {
						names = append(names, p.(string))
					}
					if !slices.IsSorted(names) || !slices.Contains(names, "user_read_self") || slices.Contains(names, "user_list") {
						t.Errorf("permissions %v", names)
					}
					for _, secret := range []string{"password", "token"} {
						if strings.Contains(string(res.Body), secret) {
							t.Errorf("profile shows %q: %s", secret, res.Body)
						}
					}
				}},
		})
		env.Recorded(t, []string{}, func() {
			p := apitest.Must(sc.PutProfileMe(ctx, client.ProfileBody{FirstName: client.Ptr(" Ada "), LastName: client.Ptr("Lovelace"),
				Phone: client.Ptr("+44 20 1234"), Bio: client.Ptr("Analyst.")}))(t)
			if p.FirstName != "Ada" || p.LastName != "Lovelace" || p.Name != "Ada Lovelace" || p.Phone == nil || *p.Phone != "+44 20 1234" ||
				p.Bio == nil || *p.Bio != "Analyst." {
				t.Errorf("update names, phone and bio: %+v", p)
			}
		})
		// Raw: the refusal's envelope, and a field the client cannot send.
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "invalid fields are 422 by field and store nothing", As: "student", Method: "PUT", Path: "/api/profile/me",
				Body:   map[string]any{"first_name": "  ", "phone": "call me!", "bio": "Changed."},
				Status: 422, JSON: map[string]any{"success": false, "errors.first_name": apitest.Present, "errors.phone": apitest.Present},
				Check: func(t *testing.T, env *apitest.Env, res *apitest.Response) {
					me := apitest.Must(env.UserClient(student).GetProfileMe(t.Context()))(t)
					if me.Bio == nil || *me.Bio != "Analyst." || me.FirstName != "Ada" {
						t.Errorf("profile changed by a refused update: %+v", me)
					}
				}},
			{Name: "unknown fields are refused", As: "student", Method: "PUT", Path: "/api/profile/me",
				Body: map[string]any{"email": "x@school.test"}, Status: 422},
		})
		if p := apitest.Must(sc.PutProfileMe(ctx, client.ProfileBody{Phone: client.Ptr("")}))(t); p.Phone != nil || p.Bio == nil ||
			*p.Bio != "Analyst." {
			t.Errorf("an empty phone clears it: %+v", p)
		}
	})
}

func TestProfileCredentials(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.NewUser("student")
		uc := env.UserClient(u)
		other := env.NewUser("tutor")
		newEmail := "renamed-" + strings.Split(u.Email, "@")[0] + "@school.test"
		meAuth := func(body client.CredentialsInputBody) (*client.Profile, error) { return uc.PutProfileMeAuth(ctx, body) }
		// refused checks a refusal's status and that its errors name each
		// of fields.
		refused := func(name string, err error, fields ...string) *client.Error {
			t.Helper()
			e := apitest.Refused(t, err, 422)
			for _, f := range fields {
				if len(e.Errors[f]) == 0 {
					t.Errorf("%s: no error for %s: %v", name, f, e)
				}
			}
			return e
		}
		_, err := meAuth(client.CredentialsInputBody{CurrentPassword: "wrong-password", Email: &newEmail})
		refused("wrong current password", err, "current_password")
		_, err = meAuth(client.CredentialsInputBody{CurrentPassword: u.Password})
		refused("nothing to change", err, "email")
		_, err = meAuth(client.CredentialsInputBody{CurrentPassword: u.Password, Email: client.Ptr(strings.ToUpper(other.Email))})
		if e := refused("taken address", err); !slices.Equal(e.Errors["email"], []string{"The email has already been taken."}) {
			t.Errorf("taken address: %v", e)
		}
		_, err = meAuth(client.CredentialsInputBody{CurrentPassword: u.Password, Email: client.Ptr("nope"), Password: client.Ptr("short")})
		refused("invalid address and short password", err, "email", "password")
		env.Recorded(t, []string{}, func() {
			if p := apitest.Must(meAuth(client.CredentialsInputBody{CurrentPassword: u.Password, Email: &newEmail}))(t); p.Email != newEmail {
				t.Errorf("change the address: %+v", p)
			}
		})
		env.Recorded(t, []string{"PasswordChanged"}, func() {
			apitest.Must(meAuth(client.CredentialsInputBody{CurrentPassword: u.Password, Password: client.Ptr("second-password"),
				PasswordConfirmation: client.Ptr("second-password")}))(t)
		})
		password := func(current, next, confirmation string) error {
			return uc.PutProfilePassword(ctx, client.PasswordInputBody{CurrentPassword: current, NewPassword: next,
				NewPasswordConfirmation: confirmation})
		}
		refused("confirmation must match", password("second-password", "third-password", "other-password"),
			"new_password_confirmation")
		env.Recorded(t, []string{}, func() {
			refused("current password must be right", password(u.Password, "third-password", "third-password"), "current_password")
		})
		// Raw: a body with the current password left out.
		apitest.RunOne(t, env, apitest.Scenario{Name: "missing fields", Method: "PUT", Path: "/api/profile/password", Headers: bearer(u),
			Body: map[string]any{"new_password": "third-password"}, Status: 422})
		env.Recorded(t, []string{"PasswordChanged"}, func() {
			apitest.OK(t, password("second-password", "third-password", "third-password"))
		})
		anonymous := env.ClientAs("anonymous")
		if _, err := anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: newEmail, Password: "third-password"}); err != nil {
			t.Fatalf("login with the new address and password: %v", err)
		}
		_, err = anonymous.PostAuthLogin(ctx, client.LoginInputBody{Email: newEmail, Password: u.Password})
		if client.StatusOf(err) != 422 {
			t.Fatalf("login with the old password: %v", err)
		}
	})
}

// bearer is the Authorization header of a user, for scenarios that act as
// a user made for the test.
func bearer(u *apitest.User) map[string]string {
	return map[string]string{"Authorization": "Bearer " + u.Token}
}

func TestProfileInterestsAndSettings(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.NewUser("student")
		uc := env.UserClient(u)
		music, art := category(t, env, "music"), category(t, env, "art")
		long := strings.Repeat("x", 4097)
		interests := func(c *client.Client, ids ...int64) ([]client.Category, error) {
			return c.PutProfileInterests(ctx, client.InterestsBody{Interests: ids})
		}
		_, err := interests(env.ClientAs("anonymous"), music)
		apitest.Refused(t, err, 401)
		if got := apitest.Must(interests(uc, music, art, music))(t); len(got) != 2 || got[0].ID != art || got[0].Name != "art" ||
			got[1].ID != music {
			t.Errorf("set interests: %+v", got)
		}
		_, err = interests(uc, music, 999999)
		if e := apitest.Refused(t, err, 422); len(e.Errors["interests"]) == 0 {
			t.Errorf("an unknown category: %v", e)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM user_interests WHERE user_id = $1`, u.ID); n != 2 {
			t.Errorf("%d interests after a refused change, want 2", n)
		}
		if p := apitest.Must(uc.GetProfileMe(ctx))(t); len(p.Interests) < 2 || p.Interests[0].ID != art || p.Interests[1].ID != music {
			t.Errorf("the profile lists the interests: %+v", p.Interests)
		}
		if got := apitest.Must(interests(uc))(t); got == nil || len(got) != 0 {
			t.Errorf("clear interests: %#v", got)
		}

		settings := func() map[string]string { return apitest.Must(uc.GetProfileSettings(ctx))(t) }
		put := func(body map[string]string) (map[string]string, error) { return uc.PutProfileSettings(ctx, body) }
		if got := settings(); got == nil || len(got) != 0 {
			t.Errorf("no settings yet: %#v", got)
		}
		if got := apitest.Must(put(map[string]string{"theme": "dark", "ui.lang": "de"}))(t); !maps.Equal(got,
			map[string]string{"theme": "dark", "ui.lang": "de"}) {
			t.Errorf("write settings: %v", got)
		}
		want := map[string]string{"ui.lang": "de", "font-size": "12"}
		if got := apitest.Must(put(map[string]string{"theme": "", "font-size": "12"}))(t); !maps.Equal(got, want) {
			t.Errorf("merge and remove: %v", got)
		}
		_, err = put(map[string]string{"Bad Key": "x", "ok": long, "fine": "yes"})
		if e := apitest.Refused(t, err, 422); len(e.Errors["Bad Key"]) == 0 || len(e.Errors["ok"]) == 0 {
			t.Errorf("bad keys and long values: %v", e)
		}
		if _, ok := settings()["fine"]; ok {
			t.Error("a refused change stored a setting")
		}
		// Raw: a value the client's type cannot hold.
		apitest.RunOne(t, env, apitest.Scenario{Name: "values must be strings", Method: "PUT", Path: "/api/profile/settings",
			Headers: bearer(u), Body: map[string]any{"n": 3}, Status: 422})
		if got := settings(); !maps.Equal(got, want) {
			t.Errorf("read settings: %v", got)
		}
	})
}

func TestProfileAvatar(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.NewUser("student")
		uc := env.UserClient(u)
		avatarOf := func(p *client.Profile) string {
			if p.PathAvatar == nil {
				return ""
			}
			return *p.PathAvatar
		}
		img := apitest.PNG(t)
		first := avatarOf(apitest.Must(uc.PostProfileUploadAvatar(ctx, client.PostProfileUploadAvatarForm{Avatar: avatarFile(img)}))(t))
		if !strings.HasPrefix(first, "avatars/"+id(u.ID)+"/") || !strings.HasSuffix(first, ".png") || !env.BlobExists(t, first) {
			t.Fatalf("avatar path %q not stored", first)
		}
		gif := []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
		second := avatarOf(apitest.Must(uc.PostProfileUploadAvatar(ctx, client.PostProfileUploadAvatarForm{Avatar: avatarFile(gif)}))(t))
		if !strings.HasSuffix(second, ".gif") || !env.BlobExists(t, second) || env.BlobExists(t, first) {
			t.Fatalf("replacing the avatar: %q; old file kept: %v", second, env.BlobExists(t, first))
		}

		// Raw: refusals of the body itself and their envelope.

		refusals := []struct {
			name   string
			field  string
			data   []byte
			status int
		}{
			{"text is not an image", "avatar", []byte("hello, I am a text file"), 422},
			{"svg is not accepted", "avatar", []byte(`<svg xmlns="http://www.w3.org/2000/svg"></svg>`), 422},
			{"empty file", "avatar", nil, 422},
			{"wrong field", "picture", img, 422},
			{"over 2 MiB", "avatar", append(slicesClone(img), make([]byte, 2<<20)...), 413},
			{"body over the cap", "avatar", append(slicesClone(img), make([]byte, 3<<20)...), 413},
		}
		for _, r := range refusals {
			res := upload(t, env, "/api/profile/upload-avatar", u.Token, r.field, r.data)
			if res.Status != r.status || res.Get("success") != false {
				t.Errorf("%s: %d %s, want %d", r.name, res.Status, res.Body, r.status)
			}
		}
		res := env.Do(apitest.Request{Method: "POST", Path: "/api/profile/upload-avatar", Token: u.Token,
			Body: map[string]any{"avatar": "x"}})
		if res.Status != 415 && res.Status != 422 {
			t.Errorf("JSON body: %d %s", res.Status, res.Body)
		}
		if me := apitest.Must(uc.GetProfileMe(ctx))(t); avatarOf(me) != second {
			t.Fatalf("a refused upload changed the avatar: %+v", me)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM users WHERE avatar_path = $1`, second); n != 1 {
			t.Fatalf("avatar row: %d", n)
		}

		res = env.Do(apitest.Request{Method: "POST", Path: "/api/profile/upload-avatar", Body: []byte("x"), Type: "multipart/form-data; boundary=x"})
		if res.Status != 401 {
			t.Errorf("anonymous upload: %d", res.Status)
		}
		if p := apitest.Must(uc.DeleteProfileDeleteAvatar(ctx))(t); p.PathAvatar != nil || env.BlobExists(t, second) {
			t.Fatalf("delete avatar: %+v; file kept: %v", p, env.BlobExists(t, second))
		}
		apitest.Must(uc.DeleteProfileDeleteAvatar(ctx))(t)
	})
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func TestProfileDeletion(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		img := apitest.PNG(t)
		uploaded := apitest.Must(env.UserClient(u).PostProfileUploadAvatar(t.Context(),
			client.PostProfileUploadAvatarForm{Avatar: avatarFile(img)}))(t)
		if uploaded.PathAvatar == nil {
			t.Fatalf("no avatar stored: %+v", uploaded)
		}
		avatar := *uploaded.PathAvatar

		ctx, uc := t.Context(), env.UserClient(u)
		env.Recorded(t, []string{"AccountDeletionRequested"}, func() { apitest.OK(t, uc.PostProfileDeleteInit(ctx)) })
		link := deletionLink(t, env, u.Email)
		if n := env.Count(t, `SELECT COUNT(*) FROM events WHERE name = $1 AND CAST(payload AS TEXT) LIKE $2`,
			"AccountDeletionRequested", "%"+link[strings.LastIndex(link, "/")+1:]+"%"); n != 0 {
			t.Fatal("the deletion token is in the event payload")
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM users WHERE id = $1 AND delete_token = $2`, u.ID,
			link[strings.LastIndex(link, "/")+1:]); n != 0 {
			t.Fatal("the deletion token is stored in clear")
		}
		anonymous := env.ClientAs("anonymous")
		token := link[strings.LastIndex(link, "/")+1:]
		for _, c := range []struct {
			name   string
			user   int64
			token  string
			status int
		}{
			{"a wrong token deletes nothing", u.ID, "WRONGTOKEN", 403},
			{"another user's id with the token", env.As("admin").ID, token, 403},
			{"unknown user", 999999, "x", 404},
		} {
			env.Recorded(t, []string{}, func() {
				if err := anonymous.GetProfileDeleteIDID(ctx, c.user, c.token); client.StatusOf(err) != c.status {
					t.Errorf("%s: %v, want %d", c.name, err, c.status)
				}
			})
		}
		// Raw: the link as mailed.
		apitest.Run(t, env, []apitest.Scenario{
			{Name: "the mailed link deletes the account", Method: "GET", Path: link, Status: 200,
				Events: []string{"AccountDeleted"}},
			{Name: "the link works once", Method: "GET", Path: link, Status: 404},
		})
		_, err := uc.GetProfileMe(ctx)
		apitest.Refused(t, err, 401) // the token of a deleted user
		if n := env.Count(t, `SELECT COUNT(*) FROM users WHERE id = $1`, u.ID); n != 0 {
			t.Fatal("user still stored")
		}
		if env.BlobExists(t, avatar) {
			t.Fatal("avatar of the deleted user kept")
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM events WHERE name = $1 AND user_id = $2 AND CAST(payload AS TEXT) LIKE $3`,
			"AccountDeleted", u.ID, "%"+u.Email+"%"); n != 1 {
			t.Fatal("AccountDeleted does not carry the address")
		}

		// A link older than a day is refused.
		late := env.NewUser("student")
		apitest.OK(t, env.UserClient(late).PostProfileDeleteInit(t.Context()))
		lateLink := deletionLink(t, env, late.Email)
		env.Clock.Advance(25 * time.Hour)
		// Raw: the link as mailed.
		res := env.Do(apitest.Request{Method: "GET", Path: lateLink})
		if res.Status != 403 {
			t.Fatalf("expired link: %d %s", res.Status, res.Body)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM users WHERE id = $1`, late.ID); n != 1 {
			t.Fatal("an expired link deleted the user")
		}

		// DELETE /api/profile deletes at once.
		now := env.UserClient(env.NewUser("tutor"))
		apitest.Refused(t, env.ClientAs("anonymous").DeleteProfile(t.Context()), 401)
		env.Recorded(t, []string{"AccountDeleted"}, func() { apitest.OK(t, now.DeleteProfile(t.Context())) })
		_, err = now.GetProfileMe(t.Context())
		apitest.Refused(t, err, 401) // the deleted user's token stops working
	})
}

// deletionLink waits for the deletion mail to addr and returns the path of
// its link.
func deletionLink(t *testing.T, env *apitest.Env, addr string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range env.SMTP.Messages() {
			if !slices.Contains(m.To, addr) || !strings.Contains(m.Subject, "deletion") {
				continue
			}
			for _, word := range strings.Fields(m.Body) {
				if strings.Contains(word, "/api/profile/delete/") {
					u, err := url.Parse(word)
					if err != nil {
						t.Fatal(err)
					}
					if u.Host != env.Host {
						t.Fatalf("link %s does not point at the tenant host", word)
					}
					return u.Path
				}
			}
			t.Fatalf("no link in %q", m.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no deletion mail to %s", addr)
	return ""
}
