package h5p_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/blob"
)

const trueFalseScript = "/h5p/libraries/H5P.TrueFalse-1.6/scripts/h5p-true-false.js"

// patchTrueFalse rewrites the TrueFalse fixture in memory: H5P.TrueFalse
// one patch version up, its main script marked, upgrades.js dropped.
func patchTrueFalse(t *testing.T, raw []byte) []byte {
	return rewritePackage(t, raw, func(name string, b []byte) []byte {
		switch name {
		case "H5P.TrueFalse-1.6/upgrades.js":
			return nil
		case "H5P.TrueFalse-1.6/scripts/h5p-true-false.js":
			return append(b, "\n/* patched */\n"...)
		case "H5P.TrueFalse-1.6/library.json":
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			m["patchVersion"] = m["patchVersion"].(float64) + 1
			out, _ := json.Marshal(m)
			return out
		}
		return b
	})
}

// TestLibraryPatchUpdateConcurrent uploads a patch update of H5P.TrueFalse
// several times at once while players fetch its script: every fetch gets
// the whole old or the whole new file, one upload installs the update, and
// one complete version is left.
func TestLibraryPatchUpdateConcurrent(t *testing.T) {
	fixtureFiles(t, "hub") // skips when the fixtures are absent
	raw := readFixture(t, trueFalseFixture)
	patched := patchTrueFalse(t, raw)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		apitest.Must(uploadContent(ctx, admin, raw))(t)
		oldPatch := int(apitest.Must(admin.GetH5PLibrariesID(ctx, "H5P.TrueFalse-1.6"))(t).PatchVersion)
		oldScript := get(env, env.Host, trueFalseScript, "", nil).Body
		newScript := append(bytes.Clone(oldScript), "\n/* patched */\n"...)

		stop := make(chan struct{})
		var readers sync.WaitGroup
		var mu sync.Mutex
		var bad []string
		seenNew := false
		for range 2 {
			readers.Add(1)
			go func() {
				defer readers.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					res := env.Do(apitest.Request{Method: "GET", Path: trueFalseScript})
					mu.Lock()
					switch {
					case res.Status == 200 && bytes.Equal(res.Body, oldScript):
					case res.Status == 200 && bytes.Equal(res.Body, newScript):
						seenNew = true
					default:
						bad = append(bad, fmt.Sprintf("%d (%d bytes)", res.Status, len(res.Body)))
					}
					mu.Unlock()
				}
			}()
		}
		var uploads sync.WaitGroup
		type result struct {
			libs *client.InstalledLibraries
			err  error
		}
		results := make([]result, 4)
		for i := range results {
			uploads.Add(1)
			go func() {
				defer uploads.Done()
				libs, err := admin.PostH5PLibraries(ctx, client.PostH5PLibrariesForm{File: h5pFile(patched)})
				results[i] = result{libs, err}
			}()
		}
		uploads.Wait()
		close(stop)
		readers.Wait()

		updated := 0
		for i, res := range results {
			if res.err != nil {
				t.Errorf("upload %d: %v", i, res.err)
				continue
			}
			for _, l := range res.libs.InstalledLibraries {
				if l.MachineName == "H5P.TrueFalse" {
					updated++
				}
			}
		}
		if updated != 1 {
			t.Errorf("%d uploads installed the update, want 1", updated)
		}
		if len(bad) > 0 {
			t.Errorf("readers saw %d bad answers during the update: %v", len(bad), bad[:min(len(bad), 5)])
		}
		t.Logf("a reader saw the new script during the update: %v", seenNew)

		if after := apitest.Must(admin.GetH5PLibrariesID(ctx, "H5P.TrueFalse-1.6"))(t); int(after.PatchVersion) != oldPatch+1 {
			t.Errorf("patch version after update: %+v", after)
		}
		if res := get(env, env.Host, trueFalseScript, "", nil); res.Status != 200 || !bytes.Equal(res.Body, newScript) {
			t.Errorf("script after update: %d", res.Status)
		}
		if res := get(env, env.Host, "/h5p/libraries/H5P.TrueFalse-1.6/upgrades.js", "", nil); res.Status != 404 {
			t.Errorf("file dropped by the update still served: %d", res.Status)
		}
		folders := map[string]int{}
		tenant, release := env.OpenTenant(env.Tenant)
		err := tenant.Blob.List(context.Background(), "h5p/libraries/H5P.TrueFalse-1.6/", func(i blob.Info) error {
			folder, _, _ := strings.Cut(strings.TrimPrefix(i.Key, "h5p/libraries/H5P.TrueFalse-1.6/"), "/")
			folders[folder]++
			return nil
		})
		release()
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprint(oldPatch + 1); len(folders) != 1 || folders[want] == 0 {
			t.Errorf("library folders after the update: %v, want only %s/", folders, want)
		}
		// The content still plays with the updated library.
		list := apitest.Must(admin.GetH5PContents(ctx, client.GetH5PContentsParams{}))(t)
		if len(list.Items) == 0 {
			t.Fatal("no content listed")
		}
		play := apitest.Must(env.ClientAs("").GetH5PContentsIDPlay(ctx, list.Items[0].ID, client.GetH5PContentsIDPlayParams{}))(t)
		for _, s := range play.Scripts {
			if res := get(env, env.Host, s, "", nil); res.Status != 200 {
				t.Errorf("%s: %d", s, res.Status)
			}
		}
	})
}
