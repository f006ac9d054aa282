package h5p_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
)

var configPattern = regexp.MustCompile(`(?s)<script type="application/json" id="lms-h5p-config">(.*?)</script>`)

// pageConfig extracts the JSON the embed page hands to its script.
func pageConfig(t *testing.T, res *apitest.Response) map[string]any {
	t.Helper()
	m := configPattern.FindSubmatch(res.Body)
	if m == nil {
		t.Fatalf("no config in page: %s", res.Body)
	}
	var cfg map[string]any
	if err := json.Unmarshal(m[1], &cfg); err != nil {
		t.Fatalf("page config %s: %v", m[1], err)
	}
	return cfg
}

// pageStatus is the status of a page fetched through the client, whose
// HTML it does not read; 0 when the call failed on the way. The pages'
// HTML, headers and configuration are read raw (get).
func pageStatus(res *http.Response, err error) int {
	if err != nil {
		return client.StatusOf(err)
	}
	res.Body.Close()
	return res.StatusCode
}

func TestEmbedPages(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		id := strconv.FormatInt(installTrueFalse(t, env), 10)
		admin := env.As("admin")

		res := get(env, "", "/h5p/embed/play/"+id+"?contextId=c1&language=de&readOnlyState=yes&hideActions=1&_ignored=x", admin.Token, nil)
		if res.Status != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Fatalf("play page: %d %s", res.Status, res.Body)
		}
		if got := res.Header.Get("Content-Security-Policy"); got != "frame-ancestors 'self'" {
			t.Errorf("CSP %q", got)
		}
		if res.Header.Get("Referrer-Policy") != "no-referrer" || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("headers %v", res.Header)
		}
		if strings.Contains(string(res.Body), admin.Token) {
			t.Error("the page holds the caller's token")
		}
		cfg := pageConfig(t, res)
		q, _ := cfg["query"].(map[string]any)
		if cfg["mode"] != "play" || cfg["contentId"] != id || cfg["coreInstalled"] != true ||
			q["contextId"] != "c1" || q["language"] != "de" || q["readOnlyState"] != "yes" || q["hideActions"] != "1" || len(q) != 4 {
			t.Errorf("config %v", cfg)
		}
		if cfg["readyInterval"] != 500.0 || cfg["readyMax"] != 20.0 || cfg["tokenWait"] != 5000.0 {
			t.Errorf("protocol timings %v", cfg)
		}
		if !strings.Contains(string(res.Body), `lang="de"`) || !strings.Contains(string(res.Body), "<title>") {
			t.Errorf("page: %s", res.Body)
		}

		// Anonymous callers get the same page: the content loads later,
		// with whatever token the parent hands over.
		ctx, anonymous := t.Context(), env.ClientAs("")
		if status := pageStatus(anonymous.GetH5PEmbedPlayID(ctx, id, client.GetH5PEmbedPlayIDParams{})); status != 200 {
			t.Errorf("anonymous play page: %d", status)
		}
		// Unknown content: 404, and the page still tells its parent.
		for _, bad := range []string{"999999", "abc"} {
			res := get(env, "", "/h5p/embed/play/"+bad, "", nil)
			if res.Status != 404 || pageConfig(t, res)["contentId"] != "" {
				t.Errorf("play %s: %d %s", bad, res.Status, res.Body)
			}
		}
		bad := client.GetH5PEmbedPlayIDParams{Language: client.Ptr("<script>")}
		if status := pageStatus(anonymous.GetH5PEmbedPlayID(ctx, id, bad)); status != 422 {
			t.Errorf("bad language: %d", status)
		}
		long := client.GetH5PEmbedPlayIDParams{ContextID: client.Ptr(strings.Repeat("c", 256))}
		if status := pageStatus(anonymous.GetH5PEmbedPlayID(ctx, id, long)); status != 422 {
			t.Errorf("long context: %d", status)
		}

		// The edit page exists for new and existing content; without an
		// editor directory it says so to its script.
		res = get(env, "", "/h5p/embed/edit/new", "", nil)
		if res.Status != 200 || pageConfig(t, res)["editorInstalled"] != false || pageConfig(t, res)["mode"] != "edit" {
			t.Errorf("edit page: %d %s", res.Status, res.Body)
		}
		if status := pageStatus(anonymous.GetH5PEmbedEditID(ctx, id, client.GetH5PEmbedEditIDParams{})); status != 200 {
			t.Errorf("edit existing: %d", status)
		}
		if status := pageStatus(anonymous.GetH5PEmbedEditID(ctx, "999999", client.GetH5PEmbedEditIDParams{})); status != 404 {
			t.Errorf("edit unknown: %d", status)
		}
		if res := get(env, "", "/h5p/editor/scripts/h5peditor.js", "", nil); res.Status != 404 || !strings.Contains(res.String("message"), "LMS_H5P_EDITOR_DIR") {
			t.Errorf("editor file without editor: %d %s", res.Status, res.Body)
		}

		// A same-origin proxy narrows the allowed origins to its own.
		res = get(env, "", "/h5p/embed/play/"+id, "", map[string]string{"X-Lms-Embed-Origin": "https://front.school.test"})
		if got := res.Header.Get("Content-Security-Policy"); got != "frame-ancestors 'self' https://front.school.test" {
			t.Errorf("narrowed CSP %q", got)
		}
		if o := strs(pageConfig(t, res)["allowedOrigins"]); len(o) != 1 || o[0] != "https://front.school.test" {
			t.Errorf("narrowed origins %v", o)
		}
	})
}

func TestEmbedOriginsConfigured(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.H5PEmbedOrigins = []string{"https://lms.example.org/", "not an origin", "http://localhost:3000"}
	}})
	id := strconv.FormatInt(installTrueFalse(t, env), 10)
	res := get(env, "", "/h5p/embed/play/"+id, "", nil)
	if got := res.Header.Get("Content-Security-Policy"); got != "frame-ancestors 'self' https://lms.example.org http://localhost:3000" {
		t.Errorf("CSP %q", got)
	}
	if o := strs(pageConfig(t, res)["allowedOrigins"]); len(o) != 2 {
		t.Errorf("origins %v", o)
	}
	// The proxy's header replaces the list; it never widens it to any.
	res = get(env, "", "/h5p/embed/play/"+id, "", map[string]string{"X-Lms-Embed-Origin": "*"})
	if got := res.Header.Get("Content-Security-Policy"); !strings.Contains(got, "https://lms.example.org") {
		t.Errorf("a bad proxy origin changed the CSP: %q", got)
	}

	wild := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) {
		c.H5PEmbedOrigins = []string{"*"}
	}})
	res = get(wild, "", "/h5p/embed/edit/new", "", nil)
	if got := res.Header.Get("Content-Security-Policy"); got != "frame-ancestors *" || pageConfig(t, res)["anyOrigin"] != true {
		t.Errorf("wildcard: %q %s", got, res.Body)
	}
}

func TestEmbedAssets(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	for _, name := range []string{"protocol.js", "player.js", "editor.js", "embed.css"} {
		res := get(env, "", "/h5p/embed/assets/"+name, "", nil)
		want := "text/javascript; charset=utf-8"
		if strings.HasSuffix(name, ".css") {
			want = "text/css; charset=utf-8"
		}
		if res.Status != 200 || res.Header.Get("Content-Type") != want || len(res.Body) < 100 {
			t.Errorf("%s: %d %q", name, res.Status, res.Header.Get("Content-Type"))
		}
		again := get(env, "", "/h5p/embed/assets/"+name, "", map[string]string{"If-None-Match": res.Header.Get("ETag")})
		if again.Status != 304 {
			t.Errorf("%s revalidation: %d", name, again.Status)
		}
	}
	if res := get(env, "", "/h5p/embed/assets/page.html", "", nil); res.Status != 404 {
		t.Errorf("template served: %d", res.Status)
	}
	if res := get(env, "nowhere.test", "/h5p/embed/assets/player.js", "", nil); res.Status != 404 {
		t.Errorf("unknown host: %d", res.Status)
	}

	// The core player comes from h5p-standalone, installed by the build.
	res := get(env, "", "/h5p/core/frame.bundle.js", "", nil)
	if res.Status != 200 || res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" || len(res.Body) < 10000 {
		t.Fatalf("core script: %d %q (run make build to install it)", res.Status, res.Header.Get("Content-Type"))
	}
	part := get(env, "", "/h5p/core/frame.bundle.js", "", map[string]string{"Range": "bytes=0-99"})
	if part.Status != 206 || len(part.Body) != 100 || string(part.Body) != string(res.Body[:100]) {
		t.Errorf("range: %d %d", part.Status, len(part.Body))
	}
	if res := get(env, "", "/h5p/core/styles/h5p.css", "", nil); res.Status != 200 || res.Header.Get("Content-Type") != "text/css; charset=utf-8" {
		t.Errorf("core styles: %d", res.Status)
	}
	for _, bad := range []string{"/h5p/core/../package.json", "/h5p/core/styles/..%2f..%2fpackage.json", "/h5p/core/missing.js", "/h5p/core/styles"} {
		if res := get(env, "", bad, "", nil); res.Status != 404 && res.Status != 400 {
			t.Errorf("%s: %d", bad, res.Status)
		}
	}

	// Without the core, the page says the player is missing and the files
	// answer 404 with the reason.
	bare := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.H5PCoreDir = t.TempDir() }})
	id := strconv.FormatInt(installTrueFalse(t, bare), 10)
	if cfg := pageConfig(t, get(bare, "", "/h5p/embed/play/"+id, "", nil)); cfg["coreInstalled"] != false {
		t.Errorf("core reported installed: %v", cfg)
	}
	if res := get(bare, "", "/h5p/core/frame.bundle.js", "", nil); res.Status != 404 || !strings.Contains(res.String("message"), "not installed") {
		t.Errorf("missing core: %d %s", res.Status, res.Body)
	}
}

func TestEmbedEditorDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"scripts/h5peditor.js", "scripts/h5peditor-editor.js", "scripts/h5peditor-form.js",
		"language/en.js", "styles/css/application.css", "scripts/unlisted.js"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte("/* "+f+" */"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.H5PEditorDir = dir }})
	cfg := pageConfig(t, get(env, "", "/h5p/embed/edit/new", "", nil))
	scripts := strs(cfg["editorScripts"])
	want := []string{"/h5p/editor/scripts/h5peditor.js", "/h5p/editor/scripts/h5peditor-editor.js",
		"/h5p/editor/scripts/h5peditor-form.js", "/h5p/editor/language/en.js"}
	if cfg["editorInstalled"] != true || strings.Join(scripts, " ") != strings.Join(want, " ") {
		t.Errorf("editor config %v", cfg)
	}
	if s := strs(cfg["editorStyles"]); len(s) != 1 || s[0] != "/h5p/editor/styles/css/application.css" {
		t.Errorf("editor styles %v", s)
	}
	res := get(env, "", "/h5p/editor/scripts/h5peditor-form.js", "", nil)
	if res.Status != 200 || string(res.Body) != "/* scripts/h5peditor-form.js */" {
		t.Errorf("editor file: %d %s", res.Status, res.Body)
	}
	if res := get(env, "", "/h5p/editor/scripts/nope.js", "", nil); res.Status != 404 {
		t.Errorf("missing editor file: %d", res.Status)
	}
}
