package h5p_test

import (
	"encoding/json"
	"html/template"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
	"github.com/lms-platform/lms/internal/config"
)

// editorParent embeds the edit page, hands over the token, asks for a save
// once the editor has loaded, and logs every message.
var editorParent = template.Must(template.New("editor").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Authoring</title></head><body>
<iframe id="editor" src="{{.Src}}" style="width:900px;height:300px;border:0"></iframe>
<script>
window.lmsLog = [];
var api = {{.APIOrigin}}, frame = document.getElementById('editor');
window.addEventListener('message', function (e) {
  if (e.source !== frame.contentWindow) { return; }
  window.lmsLog.push({ origin: e.origin, data: e.data });
  if (e.origin !== api) { return; }
  if (e.data.type === 'lms-h5p:ready') {
    frame.contentWindow.postMessage({ type: 'lms-h5p:token', token: {{.Token}} }, api);
  } else if (e.data.type === 'lms-h5p:loaded') {
    frame.contentWindow.postMessage({ type: 'lms-h5p:save' }, api);
  }
});
</script></body></html>`))

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
	ctx := browsertest.New(t, 2*time.Minute, browsertest.MapHosts("school.test", "parent.test", "evil.test"))

	type pageArgs struct{ Src, APIOrigin, Token string }
	var mu sync.Mutex
	var args pageArgs
	parent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		a := args
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		editorParent.Execute(w, a)
	}))
	defer parent.Close()
	parentOrigin := "http://parent.test:" + port(t, parent.URL)

	editorDir := t.TempDir()
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.H5PEmbedOrigins = []string{parentOrigin}
		c.H5PEditorDir = editorDir
	}})
	apiOrigin := "http://school.test:" + port(t, env.HTTP.URL)
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

	run := func(src string) []map[string]any {
		t.Helper()
		mu.Lock()
		args = pageArgs{Src: src, APIOrigin: apiOrigin, Token: admin.Token}
		mu.Unlock()
		var done bool
		if err := chromedp.Run(ctx, chromedp.Navigate(parentOrigin+"/"),
			chromedp.Poll(`window.lmsLog.some(function (m) { return m.data.type === 'lms-h5p:saved' || m.data.type === 'lms-h5p:error'; })`,
				&done, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("%s: no saved or error message: %v", src, err)
		}
		var log []map[string]any
		if err := chromedp.Run(ctx, chromedp.Evaluate(`window.lmsLog.map(function (m) { return m.data; })`, &log)); err != nil {
			t.Fatal(err)
		}
		return log
	}
	last := func(log []map[string]any) map[string]any { return log[len(log)-1] }

	// New content: saved through POST /h5p/contents, with its new id.
	log := run(apiOrigin + "/h5p/embed/edit/new")
	saved := last(log)
	if log[0]["type"] != "lms-h5p:ready" || log[0]["mode"] != "edit" || log[0]["contentId"] != "new" || saved["type"] != "lms-h5p:saved" {
		t.Fatalf("messages %v", log)
	}
	newID, _ := saved["contentId"].(string)
	if newID == "" || newID == existing {
		t.Fatalf("saved %v", saved)
	}
	got := env.Call(t, 200, "GET", "/h5p/contents/"+newID, admin.Token, nil)
	if got.String("data.title") != "Made in the editor" || got.String("data.mainLibrary") != "H5P.TrueFalse" {
		t.Errorf("created content %s", got.Body)
	}

	// Existing content: saved through PATCH, same id.
	log = run(apiOrigin + "/h5p/embed/edit/" + existing)
	if saved := last(log); saved["type"] != "lms-h5p:saved" || saved["contentId"] != existing {
		t.Fatalf("edit existing: %v", log)
	}
	if got := env.Call(t, 200, "GET", "/h5p/contents/"+existing, admin.Token, nil); got.String("data.title") != "Made in the editor" {
		t.Errorf("edited content %s", got.Body)
	}

	// Without an editor client the page says so.
	os.RemoveAll(filepath.Join(editorDir, "scripts"))
	log = run(apiOrigin + "/h5p/embed/edit/new")
	if e := last(log); e["type"] != "lms-h5p:error" || e["code"] != "load" || !strings.Contains(e["message"].(string), "LMS_H5P_EDITOR_DIR") {
		t.Errorf("no editor: %v", log)
	}

	// A site that is not an allowed origin cannot even frame the pages.
	evil := "http://evil.test:" + port(t, parent.URL)
	mu.Lock()
	args = pageArgs{Src: apiOrigin + "/h5p/embed/play/" + existing, APIOrigin: apiOrigin, Token: admin.Token}
	mu.Unlock()
	var n int
	if err := chromedp.Run(ctx, chromedp.Navigate(evil+"/"), chromedp.Sleep(2*time.Second),
		chromedp.Evaluate(`window.lmsLog.length`, &n)); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a page on another origin got %d messages", n)
	}
}
