package h5p_test

import (
	"archive/zip"
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lms-platform/lms/client"
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
func wantCoreRefused(t *testing.T, name string, err error, library, needs string) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		e := apitest.Refused(t, err, 422)
		if !strings.Contains(e.Message, library) || !strings.Contains(e.Message, needs) || len(e.Problems) == 0 ||
			e.Problems[0].Code != h5ppackage.CodeAPIVersionUnsupported || e.Problems[0].Library != library {
			t.Errorf("%v %+v, want 422 naming %s and core API %s", e, e.Problems, library, needs)
		}
	})
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
		ctx, admin := t.Context(), env.ClientAs("admin")

		// Beyond the default core API: 1.99.
		future := rewritePackage(t, coreFixture, func(name string, b []byte) []byte {
			if name == "H5P.GreetingCard-1.0/library.json" {
				return bytes.Replace(b, []byte(`"minorVersion": 19`), []byte(`"minorVersion": 99`), 1)
			}
			return b
		})
		_, err := uploadContent(ctx, admin, future)
		wantCoreRefused(t, "core API 1.99 upload", err, "H5P.GreetingCard-1.0", "1.99")
		_, err = admin.PostH5PLibraries(ctx, client.PostH5PLibrariesForm{File: h5pFile(future)})
		wantCoreRefused(t, "core API 1.99 library upload", err, "H5P.GreetingCard-1.0", "1.99")

		// Below what the fixture needs.
		setCoreAPI(env, h5ppackage.Version{Major: 1, Minor: 18})
		_, err = uploadContent(ctx, admin, coreFixture)
		wantCoreRefused(t, "core API 1.18", err, "H5P.GreetingCard-1.0", "1.19")
		if n := env.Count(t, `SELECT COUNT(*) FROM h5p_contents`) + env.Count(t, `SELECT COUNT(*) FROM h5p_libraries`); n != 0 {
			t.Errorf("%d rows stored from refused packages", n)
		}

		// At or above it, the same package is valid.
		setCoreAPI(env, h5ppackage.Version{Major: 1, Minor: 19})
		if _, err := uploadContent(ctx, admin, coreFixture); err != nil {
			t.Errorf("core API 1.19: %v", err)
		}
		setCoreAPI(env, h5ppackage.Version{})
		if _, err := uploadContent(ctx, admin, coreFixture); err != nil {
			t.Errorf("default core API: %v", err)
		}
	})
}
