package lmsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lmsctl"
	"github.com/lms-platform/lms/internal/ops"
)

// TestEveryOperationHasACommand: each registry operation's command builds
// its flags (no two flags of one name) and documents every parameter.
func TestEveryOperationHasACommand(t *testing.T) {
	for _, op := range ops.All() {
		var out, errOut bytes.Buffer
		code := lmsctl.Main(context.Background(), lmsctl.Env{Args: []string{op.Name, "--help"}, Stdin: strings.NewReader(""),
			Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return t.TempDir() }})
		if code != 0 || errOut.Len() != 0 {
			t.Fatalf("%s --help: exit %d, %s", op.Name, code, errOut.String())
		}
		for _, p := range op.Params {
			if !strings.Contains(out.String(), strings.ReplaceAll(p.Name, "_", "-")) {
				t.Errorf("%s --help lacks %s:\n%s", op.Name, p.Name, out.String())
			}
		}
		if op.Body != nil && !strings.Contains(out.String(), "-body") {
			t.Errorf("%s --help lacks --body", op.Name)
		}
	}
}

// TestUploadProgressOnATerminal: a person at a terminal sees an upload
// progress; JSON still goes to standard output alone.
func TestUploadProgressOnATerminal(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	s := loggedIn(t, env, true, "courses:write")
	lesson := courseWithLesson(t, env)
	pdf := filepath.Join(t.TempDir(), "notes.pdf")
	os.WriteFile(pdf, append([]byte("%PDF-1.4\n"), make([]byte, 200<<10)...), 0o600)

	code, out, errOut := s.run("", "create-topic", "pdf", "--lesson", lesson, "--title", "Notes", "--file", pdf)
	var topic map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &topic) != nil || topic["kind"] != "pdf" {
		t.Fatalf("create-topic: %d %s %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "upload [") || !strings.HasSuffix(errOut, "100% of 0.2 MiB\n") {
		t.Fatalf("progress on standard error: %q", errOut)
	}
}
