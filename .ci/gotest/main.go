// Command gotest runs `go test -json` and keeps its events in a file while
// it prints what plain `go test` prints: a line per package, and the
// output of the tests that failed. With -slowest it reads such a file and
// prints the slowest tests and packages. It lives under .ci/, which the go
// tool's ./... leaves out, and needs nothing but Go.
//
//	go run ./.ci/gotest -out var/test.json -- -count=1 ./...   # runs the tests
//	go run ./.ci/gotest -slowest 10 var/test.json                 # the ten slowest
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Time       time.Time
	Action     string
	Package    string
	ImportPath string // build events
	Test       string
	Elapsed    float64
	Output     string
}

func main() {
	jsonOut := flag.String("out", "", "write the events of `go test -json` to this file")
	slowest := flag.Int("slowest", 0, "print the N slowest tests of the event files given as arguments")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: gotest [-out FILE] [--] go-test-arguments...\n       gotest -slowest N FILE...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *slowest > 0 {
		if err := report(os.Stdout, *slowest, flag.Args()); err != nil {
			fmt.Fprintln(os.Stderr, "gotest:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(run(*jsonOut, flag.Args()))
}

// run runs go test with args and returns its exit code.
func run(jsonOut string, args []string) int {
	var keep io.Writer = io.Discard
	if jsonOut != "" {
		f, err := os.Create(jsonOut)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gotest:", err)
			return 1
		}
		defer f.Close()
		w := bufio.NewWriter(f)
		defer w.Flush()
		keep = w
	}
	goCmd := os.Getenv("GO")
	if goCmd == "" {
		goCmd = "go"
	}
	cmd := exec.Command(goCmd, append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		return 1
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "gotest:", err)
		return 1
	}
	p := newPrinter(os.Stdout)
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		keep.Write(line)
		keep.Write([]byte{'\n'})
		p.line(line)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "gotest: reading go test's output:", err)
	}
	err = cmd.Wait()
	if err != nil {
		fmt.Fprintln(os.Stdout, "FAIL")
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintln(os.Stderr, "gotest:", err)
		return 1
	}
}

// printer turns the events back into plain go test's output: the output
// of each test is held until the test ends and printed only if it failed;
// a package's own lines ("ok", "FAIL", a panic outside tests) when it ends.
type printer struct {
	w    io.Writer
	pkgs map[string]*pkgOutput
}

type pkgOutput struct {
	own   []string            // lines outside any test
	tests map[string][]string // held lines by test
}

func newPrinter(w io.Writer) *printer { return &printer{w: w, pkgs: map[string]*pkgOutput{}} }

func (p *printer) line(raw []byte) {
	var e event
	if err := json.Unmarshal(raw, &e); err != nil || e.Action == "" {
		// Not an event (go test's own words): as it came.
		fmt.Fprintf(p.w, "%s\n", raw)
		return
	}
	switch e.Action {
	case "build-output":
		io.WriteString(p.w, e.Output)
		return
	case "build-fail", "start":
		return
	}
	pkg := p.pkgs[e.Package]
	if pkg == nil {
		pkg = &pkgOutput{tests: map[string][]string{}}
		p.pkgs[e.Package] = pkg
	}
	if e.Test != "" {
		switch e.Action {
		case "output":
			if !strings.HasPrefix(e.Output, "=== ") {
				pkg.tests[e.Test] = append(pkg.tests[e.Test], e.Output)
			}
		case "fail":
			// The "--- FAIL" line before what the test printed, and a
			// subtest inside its parent's output, as plain go test has it.
			held := pkg.tests[e.Test]
			delete(pkg.tests, e.Test)
			for i, l := range held {
				if strings.HasPrefix(strings.TrimLeft(l, " "), "--- FAIL: "+e.Test+" ") {
					held = append([]string{l}, append(held[:i:i], held[i+1:]...)...)
					break
				}
			}
			if i := strings.LastIndex(e.Test, "/"); i > 0 {
				parent := e.Test[:i]
				pkg.tests[parent] = append(pkg.tests[parent], held...)
			} else {
				p.write(held)
			}
		case "pass", "skip":
			delete(pkg.tests, e.Test)
		}
		return
	}
	switch e.Action {
	case "output":
		pkg.own = append(pkg.own, e.Output)
	case "pass", "skip":
		for _, l := range pkg.own {
			if l != "PASS\n" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "testing: warning: no tests to run") {
				io.WriteString(p.w, l)
			}
		}
		delete(p.pkgs, e.Package)
	case "fail":
		// Tests still running when the package failed (a panic, the
		// timeout) show what they printed.
		names := make([]string, 0, len(pkg.tests))
		for n := range pkg.tests {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			p.write(pkg.tests[n])
		}
		p.write(pkg.own)
		delete(p.pkgs, e.Package)
	}
}

func (p *printer) write(lines []string) {
	for _, l := range lines {
		io.WriteString(p.w, l)
	}
}

// timing is how long one test or package took.
type timing struct {
	pkg, test string
	seconds   float64
	action    string
}

// report prints the n slowest top-level tests of the event files, and
// the n slowest packages.
func report(w io.Writer, n int, files []string) error {
	if len(files) == 0 {
		return errors.New("-slowest needs an event file")
	}
	var tests, pkgs []timing
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) != nil || (e.Action != "pass" && e.Action != "fail") {
				continue
			}
			switch {
			case e.Test == "":
				pkgs = append(pkgs, timing{pkg: e.Package, seconds: e.Elapsed, action: e.Action})
			case !strings.Contains(e.Test, "/"):
				tests = append(tests, timing{pkg: e.Package, test: e.Test, seconds: e.Elapsed, action: e.Action})
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	print := func(title string, list []timing) {
		sort.SliceStable(list, func(i, j int) bool { return list[i].seconds > list[j].seconds })
		fmt.Fprintf(w, "%s:\n", title)
		for _, t := range list[:min(n, len(list))] {
			name := t.pkg
			if t.test != "" {
				name += " " + t.test
			}
			mark := ""
			if t.action == "fail" {
				mark = " (failed)"
			}
			fmt.Fprintf(w, "%8.1fs  %s%s\n", t.seconds, name, mark)
		}
	}
	print(fmt.Sprintf("The %d slowest tests", n), tests)
	print(fmt.Sprintf("The %d slowest packages", n), pkgs)
	return nil
}
