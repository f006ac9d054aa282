package server

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// owners maps every table of the migrations to the one package (path under
// internal/) whose SQL may name it. Every other package reaches the table
// through the owner's functions or a small interface (docs/architecture.md).
var owners = map[string]string{
	// platform database
	"tenants":      "platform",
	"tenant_hosts": "platform",
	"demo_tenants": "demo",
	// infrastructure of every tenant
	"events":                    "events",
	"event_deliveries":          "events",
	"webhook_endpoints":         "webhooks",
	"webhook_receipts":          "webhooks",
	"living_course_connections": "livingcourse",
	"job_runs":                  "jobs",
	"job_claims":                "jobs",
	"queue_jobs":                "queue",
	"queue_tenants":             "queue",
	"idempotency_keys":          "httpx",
	"settings":                  "settings",
	"notifications":             "notify",
	"mail_log":                  "notify",
	"access_tokens":             "auth",
	"personal_tokens":           "tokens",
	"agent_audit":               "tokens",
	"device_requests":           "device",
	// social login
	"social_identities":  "social",
	"social_redemptions": "social",
	// LTI 1.3, both roles
	"lti_registrations":  "kinds/lti",
	"lti_states":         "kinds/lti",
	"lti_nonces":         "kinds/lti",
	"lti_users":          "kinds/lti",
	"lti_launches":       "kinds/lti",
	"lti_codes":          "kinds/lti",
	"lti_tools":          "kinds/lti",
	"lti_hints":          "kinds/lti",
	"lti_service_tokens": "kinds/lti",
	"lti_line_items":     "kinds/lti",
	"lti_scores":         "kinds/lti",
	"lti_assertion_jtis": "kinds/lti",
	"lti_link_requests":  "kinds/lti",
	"roles":              "access",
	"permissions":        "access",
	"role_permissions":   "access",
	"message_templates":  "notify",
	"certificates":       "certificates",
	// accounts
	"users":              "accounts",
	"user_roles":         "accounts",
	"user_groups":        "accounts",
	"user_group_members": "accounts",
	"categories":         "accounts",
	"user_categories":    "accounts",
	"user_interests":     "accounts",
	"user_settings":      "accounts",
	// courses: the courses, their program skeleton, and who has access
	"courses":           "courses",
	"course_authors":    "courses",
	"course_categories": "courses",
	"course_tags":       "courses",
	"course_users":      "courses",
	"course_groups":     "courses",
	"lessons":           "courses",
	"course_access":     "courses",
	"catalogue_version": "courses",
	"access_version":    "courses",
	// topics
	"topics":              "topics",
	"topic_resources":     "topics",
	"project_submissions": "topics",
	// quiz: attempts and their answers
	"quiz_attempts":    "kinds/quiz",
	"quiz_answers":     "kinds/quiz",
	"scorm_packages":   "kinds/scorm",
	"scorm_scos":       "kinds/scorm",
	"scorm_tracks":     "kinds/scorm",
	"scorm_objectives": "kinds/scorm",
	// learning: progress, and the program cache's version counters
	"course_progress":      "learning",
	"topic_progress":       "learning",
	"topic_h5p_statements": "learning",
	"learner_time":         "learning",
	"program_versions":     "learning",
	"progress_versions":    "learning",
	// the H5P service's store
	"h5p_libraries":            "h5p/h5pstore",
	"h5p_library_dependencies": "h5p/h5pstore",
	"h5p_contents":             "h5p/h5pstore",
	"h5p_content_libraries":    "h5p/h5pstore",
	"h5p_content_user_data":    "h5p/h5pstore",
	"h5p_results":              "h5p/h5pstore",
	"h5p_temp_files":           "h5p/h5pstore",
	// cmi5: packages, registrations, sessions and what they achieved
	"cmi5_packages":      "kinds/cmi5",
	"cmi5_aus":           "kinds/cmi5",
	"cmi5_registrations": "kinds/cmi5",
	"cmi5_sessions":      "kinds/cmi5",
	"cmi5_au_status":     "kinds/cmi5",
	"cmi5_satisfied":     "kinds/cmi5",
	// the xAPI store
	"lrs_statements":        "lrs",
	"lrs_statement_related": "lrs",
	"lrs_attachments":       "lrs",
	"lrs_documents":         "lrs",
	// interactive packages, their learners' reports and CSP reports
	"interactive_packages": "kinds/interactive",
	"interactive_versions": "kinds/interactive",
	"interactive_progress": "kinds/interactive",
	"csp_reports":          "kinds/interactive",
	// LiaScript courses and their learners' progress
	"liascript_courses":  "kinds/liascript",
	"liascript_progress": "kinds/liascript",
}

// triggers are the database triggers of the migrations, by the table they
// fire on, with the table they write. They are the one sanctioned way a
// table is written by SQL its owner did not write: the program cache of
// learning must see every change of a course's program however it is made
// (package code, cascades, operators' SQL), which only the database itself
// can promise; so must the catalogue cache of courses, the learners'
// program answers kept by learning (their progress rows) and the access
// decisions kept by courses (assignments, memberships and the group tree,
// which accounts owns). A new trigger must be listed here with its reason.
var triggers = map[string]string{
	"courses":            "program_versions, catalogue_version",
	"course_authors":     "program_versions, catalogue_version",
	"course_categories":  "catalogue_version",
	"course_tags":        "program_versions, catalogue_version",
	"lessons":            "program_versions",
	"topics":             "program_versions",
	"topic_progress":     "progress_versions",
	"course_progress":    "progress_versions",
	"course_users":       "access_version, program_versions",
	"course_groups":      "access_version, program_versions",
	"user_group_members": "access_version, program_versions",
	"user_groups":        "access_version, program_versions",
	// A setting can switch a content kind off, which changes how programs
	// show its topics.
	"settings": "program_versions",
	// The catalogue shows its authors' and categories' names.
	"users":      "catalogue_version",
	"categories": "catalogue_version",
}

// foreign lists the places left where a package names a table it does not
// own, each with why it is still there. The test fails when one of them
// goes away, so the list only shrinks.
var foreign = map[string]string{
	// Test harnesses read stored state directly to check it.
	"apitest events":               "test harness",
	"h5p/embedtest topic_progress": "test harness",
	// The commands under cmd/ are checked too, named "cmd/<command>".
	// lmsbench prepares the program, catalogue and ping scenarios' courses
	// (up to 200 topics each) with SQL, so preparing measures nothing of
	// authoring, and checks the ping scenario by each learner's first and
	// last ping, which no route shows.
	"cmd/lmsbench courses":        "benchmark seeding",
	"cmd/lmsbench lessons":        "benchmark seeding",
	"cmd/lmsbench topics":         "benchmark seeding",
	"cmd/lmsbench topic_progress": "benchmark check of the ping scenario",
}

var (
	sqlKeyword = regexp.MustCompile(`\b(SELECT|INSERT|UPDATE|DELETE|FROM|JOIN|WHERE|CREATE|ALTER|DROP)\b`)
	identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	createdRE  = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?([a-z0-9_]+)`)
	triggerRE  = regexp.MustCompile(`(?is)CREATE TRIGGER [a-z0-9_]+ .*?\bON ([a-z0-9_]+)`)
	// renamedRE finds the rebuilt tables of SQLite migrations: a table
	// made under a passing name and renamed to the one it replaces.
	renamedRE = regexp.MustCompile(`(?i)ALTER TABLE ([a-z0-9_]+) RENAME TO [a-z0-9_]+`)
)

// TestTableOwners reads every non-test Go file under internal/ and cmd/
// and fails when a package's SQL names a table it does not own, and reads
// the migrations to check that every table has an owner and every trigger
// is known.
func TestTableOwners(t *testing.T) {
	root := filepath.Join("..")
	tables := migrationTables(t, filepath.Join(root, "sqldb", "migrations"))
	for _, name := range tables {
		if owners[name] == "" {
			t.Errorf("table %s of the migrations has no owner in owners", name)
		}
	}
	for name := range owners {
		if !slices.Contains(tables, name) {
			t.Errorf("owners names %s, which no migration creates", name)
		}
	}

	named := namedTables(t, root, "")
	for key, places := range namedTables(t, filepath.Join("..", "..", "cmd"), "cmd/") {
		named[key] = places
	}
	if len(named) < 50 {
		t.Fatalf("found only %d package-table pairs", len(named))
	}
	seen := map[string]bool{}
	for key, places := range named {
		pkg, table, _ := strings.Cut(key, " ")
		if owners[table] == pkg {
			continue
		}
		if _, ok := foreign[key]; ok {
			seen[key] = true
			continue
		}
		t.Errorf("package %s names table %s (owned by %s) at %s", pkg, table, owners[table], strings.Join(places, ", "))
	}
	for key := range foreign {
		if !seen[key] {
			t.Errorf("foreign lists %q, which no longer happens: remove it", key)
		}
	}
}

// migrationTables lists the tables the migrations create, and checks their
// triggers against triggers.
func migrationTables(t *testing.T, dir string) []string {
	var tables []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sql") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		text := string(b)
		var passing []string
		for _, m := range renamedRE.FindAllStringSubmatch(text, -1) {
			passing = append(passing, m[1])
		}
		for _, m := range createdRE.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(tables, m[1]) && !slices.Contains(passing, m[1]) {
				tables = append(tables, m[1])
			}
		}
		for _, m := range triggerRE.FindAllStringSubmatch(text, -1) {
			if triggers[m[1]] == "" {
				t.Errorf("%s: a trigger on %s is not listed in triggers", path, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("found only %d tables under %s", len(tables), dir)
	}
	return tables
}

// namedTables finds, in every string literal that reads as SQL in the
// non-test Go files under root, the known table names, keyed "pkg table"
// (pkg the directory under root after prefix) with the places they occur.
func namedTables(t *testing.T, root, prefix string) map[string][]string {
	out := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg = prefix + filepath.ToSlash(pkg)
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil || !sqlKeyword.MatchString(s) {
				return true
			}
			for _, word := range identifier.FindAllString(s, -1) {
				if _, ok := owners[word]; ok {
					key := pkg + " " + word
					out[key] = append(out[key], fmt.Sprintf("%s:%d", filepath.Base(path), fset.Position(lit.Pos()).Line))
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
