package server_test

import (
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
)

// TestNULInPathIsNotFound: a path with a NUL byte names nothing any
// route serves; every route answers 404 in the envelope, never a 500 from
// a file system or store that refuses the name.
func TestNULInPathIsNotFound(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.As("admin")
		for _, path := range []string{
			"/api/liascript/runtime/%00/%00",
			"/api/liascript/runtime/1.0.0/a%00.js",
			"/api/liascript/play/x/%00",
			"/api/files/%00",
			"/api/files/avatars/%00.png?expires=1&signature=x",
			"/api/scorm/runtime/%00",
			"/api/scorm/content/1/9999999999/abc/%00",
			"/api/cmi5/content/1/abc/%00",
			"/api/interactive/play/x/%00",
			"/api/admin/courses/%00",
			"/h5p/libraries/%00/library.json",
			"/h5p/content/1/%00",
			"/%00",
		} {
			for _, token := range []string{"", admin.Token} {
				res := env.Do(apitest.Request{Method: "GET", Path: path, Token: token})
				if res.Status != 404 || res.String("message") != "Not found." {
					t.Errorf("GET %s (signed in: %t): %d %.200s", path, token != "", res.Status, res.Body)
				}
			}
		}
	})
}
