package server

import (
	"flag"
	"fmt"
	"go/doc"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// updateDocs makes the tests of generated documentation rewrite it instead
// of failing: `make docs`, or `go test ./internal/server -run
// 'TestArchitectureIsCurrent|TestPackageMapIsCurrent' -update` (or with
// LMS_UPDATE_DOCS=1).
var updateDocs = flag.Bool("update", false, "rewrite the generated parts of docs/ instead of comparing them")

// moduleRoot is the repository's root, seen from this package's directory.
var moduleRoot = filepath.Join("..", "..")

// TestArchitectureIsCurrent fails when the table-owner, trigger and
// exception tables of docs/architecture.md differ from what the maps of
// TestTableOwners (owners, triggers, foreign) render: run `make docs` and
// commit.
func TestArchitectureIsCurrent(t *testing.T) {
	platform := platformTables(t)
	checkGenerated(t, filepath.Join(moduleRoot, "docs", "architecture.md"), map[string]string{
		"owners":   renderOwners(platform),
		"triggers": renderTriggers(),
		"foreign":  renderForeign(),
	})
}

// TestPackageMapIsCurrent fails when the package map of docs/developers.md
// differs from the first sentences of the packages' doc comments: run
// `make docs` and commit.
func TestPackageMapIsCurrent(t *testing.T) {
	pkgs := packageDocs(t)
	if len(pkgs) < 40 {
		t.Fatalf("found only %d packages under %s", len(pkgs), moduleRoot)
	}
	checkGenerated(t, filepath.Join(moduleRoot, "docs", "developers.md"), map[string]string{
		"packages": renderPackages(pkgs),
	})
}

// renderOwners is the table of owners: each owning package with its
// tables, those of the platform database marked.
func renderOwners(platform map[string]bool) string {
	byOwner := map[string][]string{}
	for table, owner := range owners {
		name := "`" + table + "`"
		if platform[table] {
			name += " (platform database)"
		}
		byOwner[owner] = append(byOwner[owner], name)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d tables, %d owners.\n\n", len(owners), len(byOwner))
	b.WriteString("| owner (under `internal/`) | tables |\n|---|---|\n")
	for _, owner := range sortedKeys(byOwner) {
		tables := byOwner[owner]
		slices.Sort(tables)
		fmt.Fprintf(&b, "| `%s` | %s |\n", owner, strings.Join(tables, ", "))
	}
	return b.String()
}

// renderTriggers is the table of triggers: the table each fires on and the
// counters it moves, with their owners.
func renderTriggers() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d tables carry triggers.\n\n", len(triggers))
	b.WriteString("| a change of (owner) | moves (owner) |\n|---|---|\n")
	for _, table := range sortedKeys(triggers) {
		var moved []string
		for _, counter := range strings.Split(triggers[table], ",") {
			counter = strings.TrimSpace(counter)
			moved = append(moved, fmt.Sprintf("`%s` (`%s`)", counter, owners[counter]))
		}
		fmt.Fprintf(&b, "| `%s` (`%s`) | %s |\n", table, owners[table], strings.Join(moved, ", "))
	}
	return b.String()
}

// renderForeign lists the places where a package names a table it does not
// own, with their reasons.
func renderForeign() string {
	var b strings.Builder
	b.WriteString("| package | names | why |\n|---|---|---|\n")
	for _, key := range sortedKeys(foreign) {
		pkg, table, _ := strings.Cut(key, " ")
		fmt.Fprintf(&b, "| `%s` | `%s` (`%s`) | %s |\n", pkg, table, owners[table], foreign[key])
	}
	return b.String()
}

// platformTables lists the tables the platform database's migrations
// create.
func platformTables(t *testing.T) map[string]bool {
	out := map[string]bool{}
	dir := filepath.Join("..", "sqldb", "migrations")
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sql") || filepath.Base(filepath.Dir(path)) != "platform" {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range createdRE.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no platform tables found under %s", dir)
	}
	return out
}

// pkgDoc is one Go package of the module and the first sentence of its
// doc comment.
type pkgDoc struct {
	path, synopsis string
}

// packageDocs reads every package of the module (directories holding Go
// files, less testdata and node_modules) and its doc comment: from its
// non-test files, or from its tests (the external test package's too) for
// a package of tests only.
func packageDocs(t *testing.T) []pkgDoc {
	var out []pkgDoc
	fset := token.NewFileSet()
	err := filepath.WalkDir(moduleRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if path != moduleRoot && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			name == "testdata" || name == "node_modules" || name == "var" || name == "bin") {
			return filepath.SkipDir
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		var text, testText string
		found := false
		for _, e := range entries {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(path, e.Name()), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return err
			}
			found = true
			if f.Doc == nil {
				continue
			}
			if strings.HasSuffix(e.Name(), "_test.go") {
				testText += f.Doc.Text()
			} else {
				text += f.Doc.Text()
			}
		}
		if !found {
			return nil
		}
		if text == "" {
			text = testText
		}
		rel, err := filepath.Rel(moduleRoot, path)
		if err != nil {
			return err
		}
		synopsis := new(doc.Package).Synopsis(text)
		if synopsis == "" {
			synopsis = "(no package doc)"
		}
		out = append(out, pkgDoc{path: filepath.ToSlash(rel), synopsis: synopsis})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(out, func(a, b pkgDoc) int { return strings.Compare(a.path, b.path) })
	return out
}

func renderPackages(pkgs []pkgDoc) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d packages.\n\n", len(pkgs))
	b.WriteString("| package | what it is (the first sentence of its doc) |\n|---|---|\n")
	for _, p := range pkgs {
		path := p.path
		if path == "." {
			path = "(root)"
		}
		fmt.Fprintf(&b, "| `%s` | %s |\n", path, strings.ReplaceAll(p.synopsis, "|", `\|`))
	}
	return b.String()
}

// checkGenerated compares the parts of the file at path between the
// markers `<!-- generated:NAME -->` and `<!-- end generated:NAME -->`
// with blocks[NAME]; it rewrites the file with -update or
// LMS_UPDATE_DOCS=1, and fails otherwise.
func checkGenerated(t *testing.T, path string, blocks map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	want := text
	for _, name := range sortedKeys(blocks) {
		if want, err = splice(want, name, blocks[name]); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	if want == text {
		return
	}
	if *updateDocs || os.Getenv("LMS_UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %s", path)
		return
	}
	t.Errorf("%s is stale (first difference at line %d): run `make docs` and commit the result", path, firstDifference(text, want))
}

// splice replaces what stands between the markers of name with body.
func splice(text, name, body string) (string, error) {
	begin, end := "<!-- generated:"+name+" -->\n", "<!-- end generated:"+name+" -->"
	i := strings.Index(text, begin)
	if i < 0 {
		return "", fmt.Errorf("no marker %q", strings.TrimSpace(begin))
	}
	j := strings.Index(text[i:], end)
	if j < 0 {
		return "", fmt.Errorf("no marker %q after %q", end, strings.TrimSpace(begin))
	}
	start := i + len(begin)
	return text[:start] + body + text[i+j:], nil
}

func firstDifference(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdFence   = regexp.MustCompile("(?ms)^```.*?^```")
	mdCode    = regexp.MustCompile("`[^`\n]*`")
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	mdDrop    = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// TestDocLinks fails when a relative link of README.md or docs/*.md names
// a file that does not exist, or a #fragment that no heading of its target
// makes (as GitHub makes them: lower case, punctuation dropped, spaces as
// dashes).
func TestDocLinks(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(moduleRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(moduleRoot, "README.md"))
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		if raw, err := os.ReadFile(path); err == nil {
			for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(string(raw), ""), -1) {
				id := strings.ReplaceAll(mdDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
				a[id] = true
			}
		}
		anchors[path] = a
		return a
	}
	links := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		text := mdCode.ReplaceAllString(mdFence.ReplaceAllString(string(raw), ""), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, fragment, _ := strings.Cut(target, "#")
			dest := file
			if path != "" {
				dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
				if _, err := os.Stat(dest); err != nil {
					t.Errorf("%s links to %s, which does not exist", filepath.Base(file), target)
					continue
				}
			}
			if fragment != "" && strings.HasSuffix(dest, ".md") && !anchorsOf(dest)[fragment] {
				t.Errorf("%s links to %s, whose heading does not exist", filepath.Base(file), target)
			}
		}
	}
	if links < 20 {
		t.Fatalf("found only %d relative links", links)
	}
}
