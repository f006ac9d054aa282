package h5p_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestPlayModelFollowsLibraryUpdate checks that the play model, whose
// asset lists processes keep between requests, lists the scripts of a
// library's new patch version as soon as it is installed.
func TestPlayModelFollowsLibraryUpdate(t *testing.T) {
	raw := readFixture(t, trueFalseFixture)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.ClientAs("admin")
		id := apitest.Must(uploadContent(ctx, admin, raw))(t).ContentID
		play := func() []string {
			return apitest.Must(admin.GetH5PContentsIDPlay(ctx, id, client.GetH5PContentsIDPlayParams{}))(t).Scripts
		}
		before := play()
		if !slices.Equal(before, play()) {
			t.Fatal("the play model changed without a change")
		}
		const added = "/h5p/libraries/H5P.TrueFalse-1.6/scripts/added.js"
		if slices.Contains(before, added) {
			t.Fatal("fixture already has the script")
		}
		update := rewritePackage(t, raw, func(name string, b []byte) []byte {
			switch name {
			case "H5P.TrueFalse-1.6/library.json":
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				m["patchVersion"] = m["patchVersion"].(float64) + 1
				m["preloadedJs"] = append(m["preloadedJs"].([]any), map[string]any{"path": "scripts/added.js"})
				out, _ := json.Marshal(m)
				return out
			}
			return b
		}, map[string][]byte{"H5P.TrueFalse-1.6/scripts/added.js": []byte("/* added */")})
		apitest.Must(uploadContent(ctx, admin, update))(t)
		after := play()
		if !slices.Contains(after, added) || len(after) != len(before)+1 {
			t.Errorf("scripts after the update: %v", after)
		}
		if res := get(env, "", added, "", nil); res.Status != 200 || string(res.Body) != "/* added */" {
			t.Errorf("added script: %d", res.Status)
		}
	})
}
