// Package nodetest runs the node programs of tests (third-party tools and
// servers from npm, pinned in a testdata project) as child processes that
// take commands as JSON lines on stdin and tell events as JSON lines on
// stdout.
package nodetest

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Process is a running node program.
type Process struct {
	stdin  io.WriteCloser
	stdout io.Reader
	events *bufio.Scanner
}

// Start runs script of the node project in dir, with env added to ours,
// until the test ends: closing its stdin then stops it, and a program that
// hangs past stopGrace is killed. Its stderr is the test's.
func Start(t testing.TB, node, dir, script string, env ...string) *Process {
	t.Helper()
	cmd := exec.Command(node, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-done:
		case <-time.After(stopGrace):
			cmd.Process.Kill()
			<-done
		}
	})
	return &Process{stdin: stdin, stdout: stdout, events: bufio.NewScanner(stdout)}
}

const stopGrace = 30 * time.Second

// Send writes one command line.
func (p *Process) Send(t testing.TB, cmd any) {
	t.Helper()
	line, _ := json.Marshal(cmd)
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
}

// Next reads the next event, skipping lines that are not JSON (a
// library's own logging), and fails the test unless it is the event
// named want.
func (p *Process) Next(t testing.TB, want string) map[string]any {
	t.Helper()
	for p.events.Scan() {
		var ev map[string]any
		if json.Unmarshal(p.events.Bytes(), &ev) != nil {
			continue
		}
		if ev["event"] != want {
			t.Fatalf("node: %s, want the event %s", p.events.Text(), want)
		}
		return ev
	}
	t.Fatalf("node stopped before the event %s: %v", want, p.events.Err())
	return nil
}

// Drain discards the rest of the program's output, for a program that is
// no longer read, so that it never blocks on a full pipe.
func (p *Process) Drain() {
	go io.Copy(io.Discard, p.stdout)
}

// Need answers node's path, where node and the modules of the project in
// dir are installed; otherwise it skips the test, or fails it under
// CI=true, where every test must run. what names the test's tool in the
// message.
func Need(t testing.TB, what, dir string, modules ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		Missing(t, what, "node is not installed")
	}
	for _, m := range modules {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m, "package.json")); err != nil {
			Missing(t, what, m+" is not installed: run `npm ci --prefix "+dir+"` (make test does)")
		}
	}
	return node
}

// Missing ends a test whose tool is missing: a skip, or a failure under
// CI=true.
func Missing(t testing.TB, what, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(what + ": " + why)
	}
	t.Skip(what + ": " + why)
}
