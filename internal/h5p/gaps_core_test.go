package h5p_test

import (
	"archive/zip"
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/h5p/h5ppackage"
)

// rewritePackage copies an .h5p archive in memory, passing each entry
// through edit (nil drops the entry), then adds the entries of add.
func rewritePackage(t *testing.T, data []byte, edit func(name string, b []byte) []byte, add ...map[string][]byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if b = edit(f.Name, b); b == nil {
			continue
		}
		w, err := zw.Create(f.Name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	for _, files := range add {
		for name, b := range files {
			w, err := zw.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(b)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// setCoreAPI sets the newest core API the service accepts (zero: default).
func setCoreAPI(env *apitest.Env, v h5ppackage.Version) {
	set := env.Server.H5P.Store.Settings()
	set.CoreAPI = v
	env.Server.H5P.Store.SetSettings(set)
}

// wantCoreRefused checks a 422 naming the library and the core API version
// it needs.
func wantCoreRefused(t *testing.T, name string, res *apitest.Response, library, needs string) {
	t.Helper()
	msg := res.String("message")
	if res.Status != 422 || res.Get("success") != false || !strings.Contains(msg, library) || !strings.Contains(msg, needs) ||
		res.String("errors.0.code") != h5ppackage.CodeAPIVersionUnsupported || res.String("errors.0.library") != library {
		t.Errorf("%s: %d %s, want 422 naming %s and core API %s", name, res.Status, res.Body, library, needs)
	}
}

// TestCoreAPIVersion: a library needing a newer core API than the service
// supports is refused with 422 naming it and the version it needs.
//
// invalid-core-version.h5p declares coreApi 1.19 in
// H5P.GreetingCard-1.0/library.json. The service supports 1.24 by default
// (hub content types need it: the valid fixtures hold libraries requiring
// 1.24), so that fixture is invalid only for a service configured below
// 1.19, which is how upstream's test uses it too.
func TestCoreAPIVersion(t *testing.T) {
	var coreFixture []byte
	for _, f := range fixtureFiles(t, "invalid") {
		if filepath.Base(f) == "invalid-core-version.h5p" {
			coreFixture = readFixture(t, f)
		}
	}
	if coreFixture == nil {
		t.Fatal("invalid-core-version.h5p missing")
	}
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")

		// Beyond the default core API: 1.99.
		future := rewritePackage(t, coreFixture, func(name string, b []byte) []byte {
			if name == "H5P.GreetingCard-1.0/library.json" {
				return bytes.Replace(b, []byte(`"minorVersion": 19`), []byte(`"minorVersion": 99`), 1)
			}
			return b
		})
		res := upload(env, "/h5p/contents/upload", "h5p_file", admin.Token, future)
		wantCoreRefused(t, "core API 1.99 upload", res, "H5P.GreetingCard-1.0", "1.99")
		res = upload(env, "/h5p/libraries", "file", admin.Token, future)
		wantCoreRefused(t, "core API 1.99 library upload", res, "H5P.GreetingCard-1.0", "1.99")

		// Below what the fixture needs.
		setCoreAPI(env, h5ppackage.Version{Major: 1, Minor: 18})
		res = upload(env, "/h5p/contents/upload", "h5p_file", admin.Token, coreFixture)
		wantCoreRefused(t, "core API 1.18", res, "H5P.GreetingCard-1.0", "1.19")
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`) + env.Count(t, `SELECT COUNT(*) FROM h5p_libraries`); n != 0 {
			t.Errorf("%d rows stored from refused packages", n)
		}

		// At or above it, the same package is valid.
		setCoreAPI(env, h5ppackage.Version{Major: 1, Minor: 19})
		if res := upload(env, "/h5p/contents/upload", "h5p_file", admin.Token, coreFixture); res.Status != 201 {
			t.Errorf("core API 1.19: %d %s", res.Status, res.Body)
		}
		setCoreAPI(env, h5ppackage.Version{})
		if res := upload(env, "/h5p/contents/upload", "h5p_file", admin.Token, coreFixture); res.Status != 201 {
			t.Errorf("default core API: %d %s", res.Status, res.Body)
		}
	})
}
