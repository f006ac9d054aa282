package web

import (
	"bytes"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestTeachH5PGrantRenewal checks the route teach.js renews an open
// editor's grant through: an author gets a fresh edit grant of their
// content (or of new content), which edits it at the H5P service; another
// author, a learner, a form without its CSRF token and a malformed
// content get none.
func TestTeachH5PGrantRenewal(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		s := newStack(t, backend, frontOptions{})
		ctx := t.Context()
		tutor, other, learner := s.env.NewUser("tutor"), s.env.NewUser("tutor"), s.env.NewUser("student")
		raw, err := os.ReadFile(fixture(t, "h5p/hub/H5P.TrueFalse.h5p"))
		if err != nil {
			t.Fatal(err)
		}
		// The admin installs the library; the tutor's content is the tutor's.
		apitest.Must(s.env.ClientAs("admin").PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
			H5PFile: &client.File{Name: "tf.h5p", Content: bytes.NewReader(raw)}}))(t)
		own := apitest.Must(s.env.UserClient(tutor).PostH5PContentsUpload(ctx, client.PostH5PContentsUploadForm{
			H5PFile: &client.File{Name: "tf.h5p", Content: bytes.NewReader(raw)}}))(t).ContentID

		renew := func(token, content string, status int) string {
			t.Helper()
			r := s.must(req{method: "POST", path: "/teach/h5p-grant", token: token, form: url.Values{"content": {content}}}, status)
			grant, _ := r.get("data.grant").(string)
			return grant
		}
		grant := renew(tutor.Token, own, http.StatusOK)
		if !strings.HasPrefix(grant, "lms_h5pedit.") {
			t.Fatalf("renewed grant %q", grant)
		}
		if m := apitest.Must(s.env.Client("", grant).GetH5PContentsIDEdit(ctx, own, client.GetH5PContentsIDEditParams{}))(t); m.ContentID != own {
			t.Errorf("the renewed grant opens %+v", m)
		}
		if g := renew(tutor.Token, "new", http.StatusOK); !strings.HasPrefix(g, "lms_h5pedit.") {
			t.Errorf("a grant for new content: %q", g)
		}
		renew(other.Token, own, http.StatusForbidden)
		renew(tutor.Token, "../x", http.StatusUnprocessableEntity)
		s.must(req{method: "POST", path: "/teach/h5p-grant", token: learner.Token, form: url.Values{"content": {own}}}, http.StatusForbidden)
		s.must(req{method: "POST", path: "/teach/h5p-grant", token: tutor.Token, noCSRF: true, form: url.Values{"content": {own}}},
			http.StatusForbidden)
	})
}
