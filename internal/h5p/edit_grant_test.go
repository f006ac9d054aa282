package h5p_test

import (
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p"
)

// TestEditGrant checks the edit grant an authoring page hands to the
// editor page on the content origin: who gets one, and that it opens the
// editor of its one content (or the creation of one) and nothing else.
func TestEditGrant(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx := t.Context()
		c := env.Clients()
		adminContent := apitest.Must(uploadContent(ctx, c.Admin, readFixture(t, trueFalseFixture)))(t).ContentID
		main := apitest.Must(c.Anonymous.GetH5PContentsID(ctx, adminContent))(t)
		body := func(title string) client.ContentBody {
			return client.ContentBody{Library: main.MainLibrary + " " + main.LibraryVersion, Params: client.ContentParams{
				Params: main.Parameters, Metadata: map[string]any{"title": title}}}
		}
		own := apitest.Must(c.Tutor.PostH5PContents(ctx, body("The tutor's")))(t).ContentID

		// Who gets one: the editor model's rules.
		_, err := c.Anonymous.PostH5PContentsIDEditGrant(ctx, "new")
		apitest.Refused(t, err, 401)
		_, err = c.Student.PostH5PContentsIDEditGrant(ctx, "new")
		apitest.Refused(t, err, 403)
		_, err = c.Tutor.PostH5PContentsIDEditGrant(ctx, adminContent)
		apitest.Refused(t, err, 403)
		_, err = c.Admin.PostH5PContentsIDEditGrant(ctx, "999999")
		apitest.Refused(t, err, 404)
		apitest.Must(c.Admin.PostH5PContentsIDEditGrant(ctx, own))(t)
		g := apitest.Must(c.Tutor.PostH5PContentsIDEditGrant(ctx, own))(t)
		if !strings.HasPrefix(g.Grant, "lms_h5pedit.") || g.ContentID != own ||
			g.ExpiresAt.Sub(env.Clock.Now()) > h5p.EditGrantTTL || g.ExpiresAt.Before(env.Clock.Now()) {
			t.Fatalf("grant %+v", g)
		}

		// It edits its content: model and save.
		edit := env.Client("", g.Grant)
		if m := apitest.Must(edit.GetH5PContentsIDEdit(ctx, own, client.GetH5PContentsIDEditParams{}))(t); m.ContentID != own {
			t.Errorf("edit model %+v", m)
		}
		apitest.Must(edit.PatchH5PContentsID(ctx, own, body("Saved with a grant")))(t)
		if got := apitest.Must(c.Anonymous.GetH5PContentsID(ctx, own))(t); got.Title != "Saved with a grant" {
			t.Errorf("after the save: %+v", got)
		}
		// The editor client's AJAX calls carry it as _token.
		if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/ajax?action=libraries&_token=" + url.QueryEscape(g.Grant)}); res.Status != 200 {
			t.Errorf("libraries with _token: %d %s", res.Status, res.Body)
		}

		// Nothing else: other contents, other routes, the API.
		_, err = edit.PatchH5PContentsID(ctx, adminContent, body("Not mine"))
		apitest.Refused(t, err, 403)
		_, err = edit.GetH5PContentsIDEdit(ctx, adminContent, client.GetH5PContentsIDEditParams{})
		apitest.Refused(t, err, 403)
		_, err = edit.PostH5PContents(ctx, body("Another"))
		apitest.Refused(t, err, 403)
		_, err = edit.DeleteH5PContentsID(ctx, own)
		apitest.Refused(t, err, 403)
		_, err = edit.GetH5PContentsIDPlay(ctx, own, client.GetH5PContentsIDPlayParams{})
		apitest.Refused(t, err, 403)
		_, err = edit.PostH5PContentsIDEditGrant(ctx, own)
		apitest.Refused(t, err, 403)
		_, err = edit.GetH5PLibraries(ctx)
		apitest.Refused(t, err, 403)
		if res := env.Do(apitest.Request{Method: "POST", Path: "/h5p/ajax?action=library-install&id=H5P.Blanks", Token: g.Grant}); res.Status != 403 {
			t.Errorf("library-install with a grant: %d %s", res.Status, res.Body)
		}
		_, err = edit.GetProfileMe(ctx)
		apitest.Refused(t, err, 401)

		// A grant for new content creates one, and edits nothing else.
		n := apitest.Must(c.Tutor.PostH5PContentsIDEditGrant(ctx, "new"))(t)
		create := env.Client("", n.Grant)
		apitest.Must(create.GetH5PContentsIDEdit(ctx, "new", client.GetH5PContentsIDEditParams{}))(t)
		made := apitest.Must(create.PostH5PContents(ctx, body("Made with a grant")))(t)
		if got := apitest.Must(c.Tutor.GetH5PContentsID(ctx, made.ContentID))(t); got.Title != "Made with a grant" ||
			got.UserID != strconv.FormatInt(env.As("tutor").ID, 10) {
			t.Errorf("created %+v", got)
		}
		_, err = create.PatchH5PContentsID(ctx, made.ContentID, body("Again"))
		apitest.Refused(t, err, 403)
		_, err = create.PatchH5PContentsID(ctx, own, body("Again"))
		apitest.Refused(t, err, 403)

		// A forged or expired grant is nobody's.
		forged := strings.Replace(g.Grant, "."+own+".", "."+adminContent+".", 1)
		_, err = env.Client("", forged).GetH5PContentsIDEdit(ctx, adminContent, client.GetH5PContentsIDEditParams{})
		apitest.Refused(t, err, 401)
		env.Clock.Advance(h5p.EditGrantTTL + time.Minute)
		_, err = edit.GetH5PContentsIDEdit(ctx, own, client.GetH5PContentsIDEditParams{})
		apitest.Refused(t, err, 401)
	})
}
