package h5p_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/h5p/embedtest"
)

// standInEditor plays the part of the H5P editor client, which is not
// available here: the constructor and getContent the page relies on.
const standInEditor = `window.H5PEditor = window.H5PEditor || {};
H5PEditor.Editor = function (library, params, container, loaded) {
  var given = JSON.parse(params);
  container.textContent = 'Editing ' + (library || 'new content');
  this.getContent = function (done) {
    done({ library: library || 'H5P.TrueFalse 1.6',
      params: JSON.stringify({ params: library ? given.params : PARAMS, metadata: { title: TITLE } }) });
  };
  setTimeout(loaded, 0);
};`

func TestEmbedEditorInBrowser(t *testing.T) {
	editorDir := t.TempDir()
	site := embedtest.New(t, 2*time.Minute, func(c *config.Config) { c.H5PEditorDir = editorDir }, "evil.test")
	env := site.Env
	admin := env.As("admin")
	existing := strconv.FormatInt(installTrueFalse(t, env), 10)
	params, _ := json.Marshal(env.Call(t, 200, "GET", "/h5p/contents/"+existing, admin.Token, nil).Get("data.parameters"))
	script := strings.NewReplacer("PARAMS", string(params), "TITLE", `"Made in the editor"`).Replace(standInEditor)
	if err := os.MkdirAll(filepath.Join(editorDir, "scripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(editorDir, "scripts", "h5peditor-editor.js"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	edit := func(content string) map[string]any {
		t.Helper()
		site.Edit(admin, content)
		site.WaitLog(`m.type === 'lms-h5p:saved' || m.type === 'lms-h5p:error'`)
		return site.Log(`m.type === 'lms-h5p:saved' || m.type === 'lms-h5p:error'`)[0]
	}

	// New content: saved through POST /h5p/contents, with its new id.
	saved := edit("new")
	if ready := site.Log(`m.type === 'lms-h5p:ready'`)[0]; ready["mode"] != "edit" || ready["contentId"] != "new" {
		t.Errorf("ready %v", ready)
	}
	newID, _ := saved["contentId"].(string)
	if saved["type"] != "lms-h5p:saved" || newID == "" || newID == existing {
		t.Fatalf("saved %v", saved)
	}
	got := env.Call(t, 200, "GET", "/h5p/contents/"+newID, admin.Token, nil)
	if got.String("data.title") != "Made in the editor" || got.String("data.mainLibrary") != "H5P.TrueFalse" {
		t.Errorf("created content %s", got.Body)
	}

	// Existing content: saved through PATCH, same id.
	if saved := edit(existing); saved["type"] != "lms-h5p:saved" || saved["contentId"] != existing {
		t.Fatalf("edit existing: %v", saved)
	}
	if got := env.Call(t, 200, "GET", "/h5p/contents/"+existing, admin.Token, nil); got.String("data.title") != "Made in the editor" {
		t.Errorf("edited content %s", got.Body)
	}

	// Without an editor client the page says so.
	os.RemoveAll(filepath.Join(editorDir, "scripts"))
	if e := edit("new"); e["type"] != "lms-h5p:error" || e["code"] != "load" || !strings.Contains(e["message"].(string), "LMS_H5P_EDITOR_DIR") {
		t.Errorf("no editor: %v", e)
	}

	// A site that is not an allowed origin cannot even frame the pages.
	site.Visit(site.Origin("evil.test"), site.APIOrigin+"/h5p/embed/play/"+existing, admin)
	var n int
	if err := chromedp.Run(site.Ctx, chromedp.Sleep(2*time.Second), chromedp.Evaluate(`window.lmsLog.length`, &n)); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a page on another origin got %d messages", n)
	}
}
