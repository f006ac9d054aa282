package accounts_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// The profile links to the avatar with a signed URL that serves its bytes.
func TestAvatarURL(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		u := env.UserClient(env.NewUser("student"))
		if me := apitest.Must(u.GetProfileMe(ctx))(t); me.AvatarURL != nil {
			t.Fatalf("no avatar, no link: %+v", me)
		}
		img := apitest.PNG(t)
		apitest.Must(u.PostProfileUploadAvatar(ctx, client.PostProfileUploadAvatarForm{Avatar: avatarFile(img)}))(t)
		link := apitest.Must(u.GetProfileMe(ctx))(t).AvatarURL
		if link == nil || !strings.HasPrefix(*link, "/api/files/") {
			t.Fatalf("avatar_url %v", link)
		}
		// Raw: the signed link serves the image's bytes to a browser.
		res := env.Do(apitest.Request{Method: "GET", Path: *link})
		if res.Status != 200 || !bytes.Equal(res.Body, img) || res.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("avatar link: %d %s", res.Status, res.Header.Get("Content-Type"))
		}
	})
}
