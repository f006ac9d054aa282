package lmsctl_test

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/lmsctl"
)

// TestHalfDoneTopic: a package is uploaded, then the connection drops on
// the topic's creation. lmsctl exits with the code of an unreachable
// server (not 2, as the panic of a failure without details did), names
// the uploaded package and says how to finish or remove it; the removal
// it names works.
func TestHalfDoneTopic(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	var creates atomic.Int32
	s := proxied(t, env, func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != http.MethodPost || r.URL.Path != "/api/admin/topics" {
			return false
		}
		creates.Add(1)
		dropConnection(t, w)
		return true
	}, "courses:write", "h5p:write")
	lesson := courseWithLesson(t, env)
	for _, c := range []struct {
		typ, pkg string
		// uploaded reads the uploaded package's id from the details.
		uploaded func(details map[string]any) any
		finish   string
	}{
		{"h5p", fixtures.Path(t, "h5p/hub/H5P.TrueFalse.h5p"),
			func(d map[string]any) any {
				created, _ := d["created"].(map[string]any)
				return created["h5pContentId"]
			},
			`"content_id":"%v"`},
		{"scorm", fixtures.Path(t, "scorm/PrerequisitesTest_SCORM12.zip"),
			func(d map[string]any) any { return d["package"] }, "--package %v"},
	} {
		t.Run(c.typ, func(t *testing.T) {
			before := creates.Load()
			code, out, errOut := s.run("", "create-topic", c.typ, "--lesson", lesson, "--title", "Half", "--package", c.pkg)
			f := lastFailure(t, errOut)
			if code != lmsctl.ExitServer || f.Code != "UNAVAILABLE" || out != "" || creates.Load() == before {
				t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
			}
			id := c.uploaded(f.Details)
			if id == nil || !strings.Contains(f.Message, fmt.Sprintf(c.finish, id)) {
				t.Fatalf("the failure names no uploaded package or no way to finish: %s", errOut)
			}
			// The last command the message quotes removes the package: once,
			// then it is gone.
			quoted := regexp.MustCompile("`lmsctl ([^`]+)`").FindAllStringSubmatch(f.Message, -1)
			if len(quoted) == 0 || !strings.Contains(quoted[len(quoted)-1][1], fmt.Sprint(id)) {
				t.Fatalf("no removal command: %s", f.Message)
			}
			remove := strings.Fields(quoted[len(quoted)-1][1])
			if code, _, errOut := s.run("", remove...); code != 0 {
				t.Fatalf("%v: exit %d: %s", remove, code, errOut)
			}
			if code, _, _ := s.run("", remove...); code != lmsctl.ExitNotFound {
				t.Fatalf("%v again: exit %d, want %d", remove, code, lmsctl.ExitNotFound)
			}
		})
	}
}

// panicking is standard input whose reading panics, as a bug would.
type panicking struct{}

func (panicking) Read([]byte) (int, error) { panic("a bug") }

// TestPanicIsAFailure: a panic ends lmsctl with the generic exit code and
// the error on standard error, not with Go's exit code 2, which means "a
// choice is needed".
func TestPanicIsAFailure(t *testing.T) {
	var out, errOut bytes.Buffer
	env := newSession(t, false).env("", &out, &errOut, "login", "--token", "--server", "http://127.0.0.1:1")
	env.Stdin = panicking{}
	if code := lmsctl.Main(t.Context(), env); code != lmsctl.ExitFailure {
		t.Fatalf("exit %d, want %d: %s", code, lmsctl.ExitFailure, errOut.String())
	}
	if f := lastFailure(t, errOut.String()); f.Code != "INTERNAL" || !strings.Contains(f.Message, "a bug") {
		t.Fatalf("failure: %+v", f)
	}
}
