package h5p_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
)

// imageParams are TrueFalse parameters showing the image at path.
func imageParams(paths ...string) map[string]any {
	p := map[string]any{"question": "<p>Q</p>", "correct": "true"}
	if len(paths) > 0 {
		p["media"] = map[string]any{"type": map[string]any{"params": map[string]any{
			"file": map[string]any{"path": paths[0], "mime": "image/png"}}}}
	}
	if len(paths) > 1 {
		var more []any
		for _, q := range paths[1:] {
			more = append(more, map[string]any{"path": q, "mime": "image/png"})
		}
		p["more"] = more
	}
	return p
}

// tempUpload uploads a PNG as the user and returns its "#tmp" path.
func tempUpload(t *testing.T, env *apitest.Env, token, name string) string {
	t.Helper()
	res := uploadTemp(env, token, name, apitest.PNG(t))
	if res.Status != 200 {
		t.Fatalf("temp upload: %d %s", res.Status, res.Body)
	}
	return res.String("path")
}

// tempExists reports whether the temporary file of a "#tmp" path still has
// its row and its blob.
func tempExists(t *testing.T, env *apitest.Env, p string) bool {
	t.Helper()
	rel := strings.TrimSuffix(p, h5pstore.TempSuffix)
	return env.BlobExists(t, h5pstore.TempPrefix+rel) &&
		env.Count(t, `SELECT COUNT(*) FROM h5p_temp_files WHERE path = $1`, rel) == 1
}

// allContentFiles lists every content file of the tenant.
func allContentFiles(t *testing.T, env *apitest.Env) []string {
	t.Helper()
	tenant, release := env.OpenTenant(env.Tenant)
	defer release()
	var keys []string
	if err := tenant.Blob.List(context.Background(), "h5p/content/", func(i blob.Info) error {
		keys = append(keys, i.Key)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return keys
}

// wantRefused checks a 422 whose message names the path.
func wantRefused(t *testing.T, name string, err error, path string) {
	t.Helper()
	rel := strings.TrimSuffix(path, h5pstore.TempSuffix)
	t.Run(name, func(t *testing.T) {
		if e := apitest.Refused(t, err, 422); !strings.Contains(e.Message, rel) {
			t.Errorf("%v, want 422 naming %s", e, rel)
		}
	})
}

// TestPromoteOnlyOwnTempFiles: a save may take only the caller's own
// editor uploads; another user's upload is refused by name and left alone.
func TestPromoteOnlyOwnTempFiles(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		library := trueFalseLibrary(t, env, installTrueFalse(t, env))
		ctx := t.Context()
		tutor, other := env.As("tutor"), env.NewUser("tutor")
		tutorClient, otherClient, admin, anonymous := env.UserClient(tutor), env.UserClient(other), env.ClientAs("admin"), env.ClientAs("")
		mine := createAs(t, env, tutor.Token, library, "Mine")
		theirs := tempUpload(t, env, other.Token, "theirs.png")
		contents := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`)
		before := apitest.Must(anonymous.GetH5PContentsID(ctx, mine))(t)

		body := client.ContentBody{Library: library, Params: client.ContentParams{Params: imageParams(theirs)}}
		_, err := tutorClient.PostH5PContents(ctx, body)
		wantRefused(t, "POST with another user's upload", err, theirs)
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`); n != contents {
			t.Errorf("%d contents after a refused save, want %d", n, contents)
		}
		_, err = tutorClient.PatchH5PContentsID(ctx, mine, body)
		wantRefused(t, "PATCH with another user's upload", err, theirs)
		// Not even with every permission: the upload is the other user's.
		_, err = admin.PatchH5PContentsID(ctx, mine, body)
		wantRefused(t, "admin PATCH with another user's upload", err, theirs)
		after := apitest.Must(anonymous.GetH5PContentsID(ctx, mine))(t)
		if string(mustJSON(after.Parameters)) != string(mustJSON(before.Parameters)) {
			t.Errorf("refused PATCH changed the content: %+v", after.Parameters)
		}
		if !tempExists(t, env, theirs) {
			t.Fatalf("the other user's upload was consumed")
		}
		rel := strings.TrimSuffix(theirs, h5pstore.TempSuffix)
		if got := env.Do(apitest.Request{Method: "GET", Path: "/h5p/temp-files/" + rel, Token: other.Token}); got.Status != 200 {
			t.Errorf("owner's temp file after refused saves: %d", got.Status)
		}
		// Its owner may still use it.
		created := apitest.Must(otherClient.PostH5PContents(ctx, body))(t)
		got := apitest.Must(anonymous.GetH5PContentsID(ctx, created.ContentID))(t)
		if p, _ := lookup(got.Parameters, "media", "type", "params", "file", "path").(string); p == "" || strings.HasSuffix(p, h5pstore.TempSuffix) {
			t.Errorf("owner's save: %+v", got.Parameters)
		}
		if tempExists(t, env, theirs) {
			t.Errorf("upload kept after its owner saved it")
		}
	})
}

// TestPromoteRollback: when an editor upload cannot be moved into a new
// content, the content is removed again (row and files) and the caller's
// other uploads stay for another try; a failed PATCH leaves the content
// and its folder as they were.
func TestPromoteRollback(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		library := trueFalseLibrary(t, env, installTrueFalse(t, env))
		ctx, tutor := t.Context(), env.As("tutor")
		tutorClient, anonymous := env.UserClient(tutor), env.ClientAs("")
		first := createAs(t, env, tutor.Token, library, "First")
		files := allContentFiles(t, env)
		contents := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`)
		unchanged := func(name string) {
			t.Helper()
			if n := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`); n != contents {
				t.Errorf("%s: %d contents, want %d", name, n, contents)
			}
			if n := env.Count(t, `SELECT COUNT(*) FROM h5p_content_libraries WHERE content_id NOT IN (SELECT id FROM h5p_contents)`); n != 0 {
				t.Errorf("%s: %d library links of removed contents", name, n)
			}
			if got := allContentFiles(t, env); strings.Join(got, ",") != strings.Join(files, ",") {
				t.Errorf("%s: content files %v, want %v", name, got, files)
			}
		}
		post := func(paths ...string) error {
			_, err := tutorClient.PostH5PContents(ctx, client.ContentBody{Library: library,
				Params: client.ContentParams{Params: imageParams(paths...)}})
			return err
		}

		wantRefused(t, "missing upload", post("0123abcd/missing.png#tmp"), "0123abcd/missing.png#tmp")
		unchanged("missing upload")

		// An upload whose row exists but whose file is gone fails only
		// once the content row exists: that row must go again.
		kept := tempUpload(t, env, tutor.Token, "kept.png")
		broken := tempUpload(t, env, tutor.Token, "broken.png")
		tenant, release := env.OpenTenant(env.Tenant)
		err := tenant.Blob.Delete(context.Background(), h5pstore.TempPrefix+strings.TrimSuffix(broken, h5pstore.TempSuffix))
		release()
		if err != nil {
			t.Fatal(err)
		}
		wantRefused(t, "upload without its file", post(kept, broken), broken)
		unchanged("upload without its file")
		if !tempExists(t, env, kept) {
			t.Errorf("the caller's good upload was consumed by a failed save")
		}

		// The failed save did create a row (ids are never reused, so the
		// next one skips it) and removed it.
		firstID, _ := strconv.ParseInt(first, 10, 64)
		next := createAs(t, env, tutor.Token, library, "Next")
		if id, _ := strconv.ParseInt(next, 10, 64); id != firstID+2 {
			t.Logf("next id %d after %d: the failure came before the row", id, firstID)
			t.Errorf("the rollback path was not taken")
		}
		contents++
		files = allContentFiles(t, env)

		// PATCH: the content and its folder stay as they were.
		before := apitest.Must(anonymous.GetH5PContentsID(ctx, first))(t)
		_, err = tutorClient.PatchH5PContentsID(ctx, first, client.ContentBody{Library: library,
			Params: client.ContentParams{Params: imageParams(kept, broken)}})
		wantRefused(t, "PATCH with an upload without its file", err, broken)
		unchanged("PATCH with an upload without its file")
		after := apitest.Must(anonymous.GetH5PContentsID(ctx, first))(t)
		if string(mustJSON(after.Parameters)) != string(mustJSON(before.Parameters)) {
			t.Errorf("failed PATCH changed the parameters: %+v", after.Parameters)
		}
		if !tempExists(t, env, kept) {
			t.Errorf("the caller's good upload was consumed by a failed PATCH")
		}

		// The good upload still saves.
		if err := post(kept); err != nil {
			t.Fatalf("save with the kept upload: %v", err)
		}
		if tempExists(t, env, kept) {
			t.Errorf("upload kept after a successful save")
		}
	})
}
