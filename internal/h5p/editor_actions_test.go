package h5p_test

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p"
	"github.com/lms-platform/lms/internal/h5p/h5pstore"
)

var multiChoiceFixture = filepath.Join(fixtureDir, "hub", "H5P.MultiChoice.h5p")

// hubDownMessage is the answer of a library install the hub cannot serve.
const hubDownMessage = "The H5P hub could not be reached; upload the content type as a package instead."

// zipEntry reads one file of a fixture package in place.
func zipEntry(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := zr.Open(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// fixtureData reads a fixture package, skipping the test when the fixtures
// are absent (failing under CI).
func fixtureData(t *testing.T, name string) []byte {
	t.Helper()
	fixtureFiles(t, "hub")
	return readFixture(t, name)
}

// translations posts the translations action for libraries in language.
// Raw: the editor's AJAX actions are H5P's protocol (forms in, bare JSON
// out), which the API client does not describe.
func translations(env *apitest.Env, token, language string, libraries ...string) *apitest.Response {
	env.T.Helper()
	return env.Do(apitest.Request{Method: "POST", Path: "/h5p/ajax?action=translations&language=" + url.QueryEscape(language),
		Token: token, Body: url.Values{"libraries[]": libraries}.Encode(), Type: "application/x-www-form-urlencoded"})
}

func TestEditorTranslations(t *testing.T) {
	tf := fixtureData(t, trueFalseFixture)
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		installTrueFalse(t, env)
		for _, sc := range []struct {
			as     string
			status int
		}{{"", 401}, {"student", 403}, {"tutor", 200}, {"admin", 200}} {
			token := ""
			if sc.as != "" {
				token = env.As(sc.as).Token
			}
			if res := translations(env, token, "de", "H5P.TrueFalse 1.6"); res.Status != sc.status {
				t.Errorf("%q: %d %s", sc.as, res.Status, res.Body)
			}
		}
		tutor := env.As("tutor").Token

		// Installed libraries with the language file, each once; unknown
		// libraries and names that do not parse are left out.
		res := translations(env, tutor, "de", "H5P.TrueFalse 1.6", "H5P.Image 1.1", "H5P.Nothing 1.0", "garbage", "H5P.TrueFalse 1.6")
		data, _ := res.Get("data").(map[string]any)
		if res.Status != 200 || res.Get("success") != true || len(data) != 2 {
			t.Fatalf("translations: %d %s", res.Status, res.Body)
		}
		for lib, file := range map[string]string{
			"H5P.TrueFalse 1.6": "H5P.TrueFalse-1.6/language/de.json", "H5P.Image 1.1": "H5P.Image-1.1/language/de.json",
		} {
			if got, want := data[lib], string(zipEntry(t, tf, file)); got != want {
				t.Errorf("%s: got %q, want the file %s", lib, got, file)
			}
		}

		// A language no library has gives an empty object.
		if res := translations(env, tutor, "xx", "H5P.TrueFalse 1.6"); res.Status != 200 || len(res.Get("data").(map[string]any)) != 0 {
			t.Errorf("unknown language: %d %s", res.Status, res.Body)
		}
		if res := translations(env, tutor, "de"); res.Status != 200 || len(res.Get("data").(map[string]any)) != 0 {
			t.Errorf("no libraries: %d %s", res.Status, res.Body)
		}
		for _, lang := range []string{"", "de!", "../de", "de/x", "a"} {
			if res := translations(env, tutor, lang, "H5P.TrueFalse 1.6"); res.Status != 422 || res.Get("errors.language") == nil {
				t.Errorf("language %q: %d %s", lang, res.Status, res.Body)
			}
		}
		if res := env.Do(apitest.Request{Method: "GET", Path: "/h5p/ajax?action=translations&language=de", Token: tutor}); res.Status != 404 {
			t.Errorf("GET translations: %d", res.Status)
		}
	})
}

// libraryUpload posts a package to the library-upload action as field
// (raw, as translations).
func libraryUpload(env *apitest.Env, token, field string, data []byte) *apitest.Response {
	env.T.Helper()
	return upload(env, "/h5p/ajax?action=library-upload", field, token, data)
}

func TestEditorLibraryUpload(t *testing.T) {
	mc := fixtureData(t, multiChoiceFixture)
	image := zipEntry(t, mc, "content/images/file-5885c23902f31.jpg")
	invalid := readFixture(t, fixtureDir+"/invalid/invalid-library-json.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, tutor := env.As("admin"), env.As("tutor")
		if res := libraryUpload(env, "", "h5p", mc); res.Status != 401 {
			t.Errorf("anonymous: %d", res.Status)
		}
		if res := libraryUpload(env, env.As("student").Token, "h5p", mc); res.Status != 403 {
			t.Errorf("student: %d", res.Status)
		}
		// A tutor may not install libraries: the missing ones are named.
		res := libraryUpload(env, tutor.Token, "h5p", mc)
		if res.Status != 422 || !strings.Contains(res.String("message"), "H5P.MultiChoice 1.14") {
			t.Errorf("tutor before install: %d %s", res.Status, res.Body)
		}
		// The same validation and limits as POST /h5p/contents/upload.
		if res := libraryUpload(env, admin.Token, "h5p", invalid); res.Status != 422 || res.Get("errors.0.code") == nil ||
			!strings.HasPrefix(res.String("message"), "The H5P package is invalid: ") {
			t.Errorf("invalid package: %d %s", res.Status, res.Body)
		}
		if res := libraryUpload(env, admin.Token, "package", mc); res.Status != 422 {
			t.Errorf("no h5p field: %d %s", res.Status, res.Body)
		}
		capped := withOptions(t, env, func(o *h5p.Options) { o.MaxUploadSize = int64(len(mc) / 2) })
		res = libraryUpload(capped, admin.Token, "h5p", mc)
		if res.Status != 413 {
			t.Errorf("over the cap: %d %s", res.Status, res.Body)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_libraries`); n != 0 {
			t.Errorf("%d libraries installed by refused uploads", n)
		}

		res = libraryUpload(env, admin.Token, "h5p", mc)
		if res.Status != 200 || res.Get("success") != true || res.String("data.h5p.mainLibrary") != "H5P.MultiChoice" ||
			res.Get("data.contentTypes.apiVersion") == nil {
			t.Fatalf("admin upload: %d %s", res.Status, res.Body)
		}
		if m := cacheLibrary(res.Get("data.contentTypes.libraries"), "H5P.MultiChoice"); m == nil || m["installed"] != true {
			t.Errorf("MultiChoice not in the answered cache: %s", res.Body)
		}
		// The content file is a temporary file of the uploader, named in
		// the parameters as the editor saves it.
		tmp := res.String("data.content.media.type.params.file.path")
		file := strings.TrimSuffix(tmp, h5pstore.TempSuffix)
		if !strings.HasSuffix(tmp, "/file-5885c23902f31.jpg#tmp") || res.String("data.content.answers.0.text") == "" {
			t.Fatalf("parameters: %s", res.Body)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_temp_files WHERE path = $1 AND user_id = $2`, file, admin.ID); n != 1 {
			t.Errorf("temporary file rows: %d", n)
		}
		// Raw: a file, not JSON.
		if got := env.Do(apitest.Request{Method: "GET", Path: "/h5p/temp-files/" + file, Token: admin.Token}); got.Status != 200 || !bytes.Equal(got.Body, image) {
			t.Errorf("temporary file: %d", got.Status)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`); n != 0 {
			t.Errorf("the upload created %d contents", n)
		}

		// Saving the parameters moves the file into the new content.
		body := client.ContentBody{Library: "H5P.MultiChoice 1.14", Params: client.ContentParams{
			Params: res.Get("data.content"), Metadata: map[string]any{"title": "Uploaded"}}}
		cid := apitest.Must(env.UserClient(admin).PostH5PContents(t.Context(), body))(t).ContentID
		detail := apitest.Must(env.ClientAs("anonymous").GetH5PContentsID(t.Context(), cid))(t)
		saved := apitest.LookupString(detail.Parameters, "media.type.params.file.path")
		if saved == "" || strings.HasSuffix(saved, h5pstore.TempSuffix) || !env.BlobExists(t, "h5p/content/"+cid+"/"+saved) ||
			env.BlobExists(t, h5pstore.TempPrefix+file) {
			t.Errorf("file not moved on save: %q", saved)
		}

		// Once the libraries are installed a tutor may upload, as h5p_file.
		res = libraryUpload(env, tutor.Token, "h5p_file", mc)
		if res.Status != 200 || !strings.HasSuffix(res.String("data.content.media.type.params.file.path"), "#tmp") {
			t.Errorf("tutor after install: %d %s", res.Status, res.Body)
		}
	})
}

// fakeHub serves content-type packages by machine name under
// /v1/content-types/ and records the paths asked for.
type fakeHub struct {
	packages map[string][]byte
	mu       sync.Mutex
	paths    []string
}

func (h *fakeHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.paths = append(h.paths, r.Method+" "+r.URL.Path)
	h.mu.Unlock()
	b, ok := h.packages[strings.TrimPrefix(r.URL.Path, "/v1/content-types/")]
	if !ok || r.Method != http.MethodGet {
		http.Error(w, `{"success":false}`, http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Write(b)
}

func (h *fakeHub) asked() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.paths...)
}

// libraryInstall posts the library-install action for id (raw, as
// translations).
func libraryInstall(env *apitest.Env, token, id string) *apitest.Response {
	env.T.Helper()
	return env.Do(apitest.Request{Method: "POST", Path: "/h5p/ajax?action=library-install&id=" + url.QueryEscape(id), Token: token})
}

func TestEditorLibraryInstall(t *testing.T) {
	mc := fixtureData(t, multiChoiceFixture)
	hub := &fakeHub{packages: map[string][]byte{
		"H5P.MultiChoice": mc,
		"H5P.Blanks":      mc, // the wrong content type
		"H5P.Garbage":     []byte("<html>maintenance</html>"),
	}}
	server := httptest.NewServer(hub)
	defer server.Close()
	// A hub that accepts the call and never answers: the request ends
	// only when the caller gives up.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()

	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		setHub(env, server.URL+"/v1/content-types/", 0)
		before := len(hub.asked())
		for _, sc := range []struct {
			as     string
			status int
		}{{"", 401}, {"student", 403}, {"tutor", 403}} {
			token := ""
			if sc.as != "" {
				token = env.As(sc.as).Token
			}
			if res := libraryInstall(env, token, "H5P.MultiChoice"); res.Status != sc.status || res.Get("success") != false {
				t.Errorf("%q: %d %s", sc.as, res.Status, res.Body)
			}
		}
		if len(hub.asked()) != before {
			t.Errorf("refused installs called the hub")
		}
		admin := env.As("admin").Token
		for _, id := range []string{"", "..", "H5P..X", "H5P.X/y", "a b"} {
			if res := libraryInstall(env, admin, id); res.Status != 422 || res.Get("errors.id") == nil {
				t.Errorf("id %q: %d %s", id, res.Status, res.Body)
			}
		}

		res := libraryInstall(env, admin, "H5P.MultiChoice")
		if res.Status != 200 || res.Get("success") != true || res.Get("data.outdated") != false ||
			!strings.Contains(res.String("message"), "installed from the H5P hub") {
			t.Fatalf("install: %d %s", res.Status, res.Body)
		}
		if m := cacheLibrary(res.Get("data.libraries"), "H5P.MultiChoice"); m == nil || m["installed"] != true || m["localMinorVersion"] != 14.0 {
			t.Errorf("MultiChoice not installed in the cache: %s", res.Body)
		}
		if asked := hub.asked(); asked[len(asked)-1] != "GET /v1/content-types/H5P.MultiChoice" {
			t.Errorf("hub asked for %v", asked)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_libraries WHERE machine_name = 'H5P.MultiChoice'`); n != 1 {
			t.Errorf("MultiChoice rows: %d", n)
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`); n != 0 {
			t.Errorf("the install created %d contents", n)
		}
		// Installing again changes nothing.
		again := env.Call(t, 200, "POST", "/h5p/ajax?action=library-install&id=H5P.MultiChoice", admin, nil) // raw: AJAX
		if again.String("message") != "H5P.MultiChoice is installed and up to date." {
			t.Errorf("second install: %s", again.Body)
		}

		// Every failure of the hub is a 503 with the same advice, never a
		// hang or a 500.
		for name, c := range map[string]struct {
			hub, id string
			message string
		}{
			"unknown content type": {server.URL + "/v1/content-types/", "H5P.Nothing", hubDownMessage},
			"not a package":        {server.URL + "/v1/content-types/", "H5P.Garbage", hubDownMessage},
			"wrong package":        {server.URL + "/v1/content-types/", "H5P.Blanks", "The H5P hub sent a package without H5P.Blanks; upload the content type as a package instead."},
			"closed port":          {"http://" + closedAddr(t) + "/v1/content-types/", "H5P.MultiChoice", hubDownMessage},
			"slow":                 {slow.URL + "/v1/content-types/", "H5P.MultiChoice", hubDownMessage},
		} {
			setHub(env, c.hub, 300*time.Millisecond)
			start := time.Now()
			res := libraryInstall(env, admin, c.id)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("%s: took %v", name, took)
			}
			if res.Status != 503 || res.Get("success") != false || res.String("message") != c.message {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
			}
		}
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_libraries WHERE machine_name = 'H5P.Blanks'`); n != 0 {
			t.Errorf("a wrong package installed H5P.Blanks")
		}
	})
}
