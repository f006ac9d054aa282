package h5p_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
)

// TestPlayerLoadsNoEditorLibraries: the player of a content loads none of
// its editor libraries, not even those an editor library preloads
// (H5PEditor.RangeList preloads H5PEditor.TableList, which calls
// H5PEditor when it loads and broke the player of every content using
// it), while the editor still gets them.
func TestPlayerLoadsNoEditorLibraries(t *testing.T) {
	files := append(fixtureFiles(t, "hub"), fixtureFiles(t, "valid")...)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		ctx, admin := t.Context(), env.As("admin")
		tested := 0
		for _, f := range files {
			name := filepath.Base(f)
			up, err := uploadContent(ctx, env.UserClient(admin), readFixture(t, f))
			if err != nil {
				t.Errorf("%s: upload %v", name, err)
				continue
			}
			play, err := env.ClientAs("").GetH5PContentsIDPlay(ctx, up.ContentID, client.GetH5PContentsIDPlayParams{})
			if err != nil || len(play.Scripts) == 0 {
				t.Errorf("%s: play %v %+v", name, err, play)
				continue
			}
			for _, u := range append(play.Scripts, play.Styles...) {
				if strings.HasPrefix(u, "/h5p/libraries/H5PEditor.") {
					t.Errorf("%s: the player loads the editor library file %s", name, u)
				}
			}
			tested++
		}
		if tested == 0 {
			t.Fatal("no fixture played")
		}

		// The editor of H5P.Blanks still loads the editor library that
		// H5PEditor.RangeList preloads.
		one := env.Call(t, 200, "GET", "/h5p/ajax?action=libraries&machineName=H5P.Blanks&majorVersion=1&minorVersion=12", admin.Token, nil)
		found := false
		for _, u := range strs(one.Get("javascript")) {
			found = found || strings.HasPrefix(u, "/h5p/libraries/H5PEditor.TableList-1.0/")
		}
		if !found {
			t.Errorf("the editor of H5P.Blanks lacks H5PEditor.TableList: %s", one.Body)
		}
	})
}
