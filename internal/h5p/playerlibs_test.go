package h5p_test

import (
	"path/filepath"
	"strings"
	"testing"

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
		admin := env.As("admin")
		tested := 0
		for _, f := range files {
			name := filepath.Base(f)
			res := upload(env, "/h5p/contents/upload", "h5p_file", admin.Token, readFixture(t, f))
			if res.Status != 201 {
				t.Errorf("%s: upload %d %s", name, res.Status, res.Body)
				continue
			}
			play := get(env, env.Host, "/h5p/contents/"+res.String("data.contentId")+"/play", "", nil)
			scripts := strs(play.Get("data.scripts"))
			if play.Status != 200 || len(scripts) == 0 {
				t.Errorf("%s: play %d %s", name, play.Status, play.Body)
				continue
			}
			for _, u := range append(scripts, strs(play.Get("data.styles"))...) {
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
