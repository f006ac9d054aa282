package files_test

import (
	"bytes"
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/files"
	"github.com/lms-platform/lms/internal/platform"
)

func TestSigner(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	s := &files.Signer{Clock: clk, TTL: time.Hour}
	tn := &platform.Tenant{URLKey: []byte("key-one")}
	link := s.URL(tn, "content/ab/my file.pdf")
	u, err := url.Parse(link)
	if err != nil || u.Path != "/api/files/content/ab/my file.pdf" || !strings.Contains(u.RawPath+u.EscapedPath(), "my%20file.pdf") {
		t.Fatalf("link %q", link)
	}
	var expires int64
	for _, c := range u.Query().Get("expires") {
		expires = expires*10 + int64(c-'0')
	}
	if min := clk.Now().Add(time.Hour).Unix(); expires < min || expires > min+900 {
		t.Errorf("expires %d, want within a quarter hour after %d", expires, min)
	}
	sig := u.Query().Get("signature")
	if err := s.Verify(tn, "content/ab/my file.pdf", expires, sig); err != nil {
		t.Errorf("own link refused: %v", err)
	}
	if s.URL(tn, "content/ab/my file.pdf") != link {
		t.Error("links made within the same quarter differ")
	}
	if s.Verify(tn, "content/ab/other.pdf", expires, sig) == nil {
		t.Error("signature accepted for another key")
	}
	if s.Verify(tn, "content/ab/my file.pdf", expires+1, sig) == nil {
		t.Error("signature accepted for another expiry")
	}
	if s.Verify(&platform.Tenant{URLKey: []byte("key-two")}, "content/ab/my file.pdf", expires, sig) == nil {
		t.Error("signature accepted by another tenant")
	}
	clk.Set(time.Unix(expires, 0))
	if s.Verify(tn, "content/ab/my file.pdf", expires, sig) == nil {
		t.Error("expired link accepted")
	}
}

func TestFilesRoute(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		ctx := context.Background()
		data := []byte("0123456789abcdefghij")
		put := func(key, ct string, b []byte) {
			if err := tn.Blob.Put(ctx, key, bytes.NewReader(b), int64(len(b)), ct); err != nil {
				t.Fatal(err)
			}
		}
		put("content/x/video.mp4", "video/mp4", data)
		put("resources/y/page.html", "text/html", []byte("<script>alert(1)</script>"))
		put("content/z/pic.svg", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`))
		signer := env.Server.Files
		link := signer.URL(tn, "content/x/video.mp4")

		res := env.Do(apitest.Request{Method: "GET", Path: link})
		if res.Status != 200 || !bytes.Equal(res.Body, data) {
			t.Fatalf("get: %d %q", res.Status, res.Body)
		}
		h := res.Header
		if h.Get("Content-Type") != "video/mp4" || !strings.HasPrefix(h.Get("Content-Disposition"), "inline") ||
			h.Get("X-Content-Type-Options") != "nosniff" || !strings.HasPrefix(h.Get("Cache-Control"), "private, max-age=") ||
			h.Get("Accept-Ranges") != "bytes" {
			t.Errorf("headers %v", h)
		}
		res = env.Do(apitest.Request{Method: "GET", Path: link, Headers: map[string]string{"Range": "bytes=2-5"}})
		if res.Status != 206 || string(res.Body) != "2345" || res.Header.Get("Content-Range") != "bytes 2-5/20" {
			t.Errorf("range: %d %q %v", res.Status, res.Body, res.Header)
		}
		res = env.Do(apitest.Request{Method: "GET", Path: link, Headers: map[string]string{"Range": "bytes=15-"}})
		if res.Status != 206 || string(res.Body) != "fghij" {
			t.Errorf("open range: %d %q", res.Status, res.Body)
		}

		res = env.Do(apitest.Request{Method: "GET", Path: signer.URL(tn, "resources/y/page.html")})
		if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
			t.Errorf("html: %d %v", res.Status, res.Header)
		}
		res = env.Do(apitest.Request{Method: "GET", Path: signer.URL(tn, "content/z/pic.svg")})
		if res.Status != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") {
			t.Errorf("svg: %d %v", res.Status, res.Header)
		}

		u, _ := url.Parse(link)
		q := u.Query()
		bad := func(name string, status int, path string, host string) {
			t.Helper()
			res := env.Do(apitest.Request{Method: "GET", Path: path, Host: host})
			if res.Status != status || res.Get("success") != false {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
		tampered := url.Values{"expires": {q.Get("expires")}, "signature": {strings.Repeat("0", 64)}}
		bad("bad signature", 403, u.Path+"?"+tampered.Encode(), "")
		bad("no signature", 403, u.Path, "")
		bad("other key", 403, strings.Replace(link, "video.mp4", "other.mp4", 1), "")
		bad("later expiry", 403, strings.Replace(link, "expires="+q.Get("expires"), "expires=9999999999", 1), "")
		bad("missing file", 404, signer.URL(tn, "content/x/gone.mp4"), "")
		env.AddTenant("other.test")
		bad("another tenant", 403, link, "other.test")
		env.Clock.Advance(2 * time.Hour)
		bad("expired", 403, link, "")
	})
}

// Files learners upload are downloads under a sandbox, never inline: a
// learner's PDF or image could carry scripts to a tutor's browser.
func TestLearnerUploadsAreAttachments(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		tn, release := env.OpenTenant(env.Tenant)
		defer release()
		u := env.NewUser("student")
		profile := apitest.Must(env.UserClient(u).PostProfileUploadAvatar(t.Context(), client.PostProfileUploadAvatarForm{
			Avatar: &client.File{Name: "me.png", Content: bytes.NewReader(apitest.PNG(t))}}))(t)
		avatar := ""
		if profile.PathAvatar != nil {
			avatar = *profile.PathAvatar
		}
		pdf := []byte("%PDF-1.7\n1 0 obj << /OpenAction << /S /JavaScript /JS (app.alert(1)) >> >> endobj")
		for _, key := range []string{"topics/3/submissions/5/ab12/essay.pdf", "content/q/slides.pdf"} {
			if err := tn.Blob.Put(context.Background(), key, bytes.NewReader(pdf), int64(len(pdf)), "application/pdf"); err != nil {
				t.Fatal(err)
			}
		}
		for key, learner := range map[string]bool{
			avatar:                                  true,
			"topics/3/submissions/5/ab12/essay.pdf": true,
			"content/q/slides.pdf":                  false,
		} {
			got := env.Do(apitest.Request{Method: "GET", Path: env.Server.Files.URL(tn, key)})
			disposition, csp := got.Header.Get("Content-Disposition"), got.Header.Get("Content-Security-Policy")
			if got.Status != 200 {
				t.Fatalf("%s: %d %s", key, got.Status, got.Body)
			}
			if learner && (!strings.HasPrefix(disposition, "attachment") || !strings.Contains(csp, "sandbox")) {
				t.Errorf("learner upload %s served with %q, CSP %q", key, disposition, csp)
			}
			if !learner && !strings.HasPrefix(disposition, "inline") {
				t.Errorf("authored %s served with %q", key, disposition)
			}
		}
	})
}
