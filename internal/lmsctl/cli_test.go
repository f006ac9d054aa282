package lmsctl_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

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
