package accounts_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// The profile links to the avatar with a signed URL that serves its bytes.
func TestAvatarURL(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		u := env.NewUser("student")
		if res := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: u.Token}); res.Get("data.avatar_url") != nil {
			t.Fatalf("no avatar, no link: %s", res.Body)
		}
		img := apitest.PNG(t)
		if res := upload(t, env, "/api/profile/upload-avatar", u.Token, "avatar", img); res.Status != 200 {
			t.Fatalf("upload: %d %s", res.Status, res.Body)
		}
		link := env.Do(apitest.Request{Method: "GET", Path: "/api/profile/me", Token: u.Token}).String("data.avatar_url")
		if !strings.HasPrefix(link, "/api/files/") {
			t.Fatalf("avatar_url %q", link)
		}
		res := env.Do(apitest.Request{Method: "GET", Path: link})
		if res.Status != 200 || !bytes.Equal(res.Body, img) || res.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("avatar link: %d %s", res.Status, res.Header.Get("Content-Type"))
		}
	})
}
