package lmsctl_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/lmsctl"
)

// TestCreateScormTopic: a package with several SCOs and no --sco exits
// with code 2 and the server's details.choices; --sco with the uploaded
// package's id then creates the topic.
func TestCreateScormTopic(t *testing.T) {
	pkg := fixtures.Path(t, "scorm/PrerequisitesTest_SCORM12.zip")
	env := apitest.New(t, "sqlite", apitest.Options{})
	s := loggedIn(t, env, false, "courses:write")
	lesson := courseWithLesson(t, env)
	code, _, errOut := s.run("", "create-topic", "scorm", "--lesson", lesson, "--title", "Modules", "--package", pkg)
	if code != lmsctl.ExitChoices {
		t.Fatalf("without --sco: %d %s", code, errOut)
	}
	f := lastFailure(t, errOut)
	choices, _ := f.Details["choices"].([]any)
	if f.Code != "CHOICE_REQUIRED" || len(choices) != 4 || choices[1].(map[string]any)["identifier"] != "module2" {
		t.Fatalf("choices: %s", errOut)
	}
	sco := fmt.Sprint(choices[1].(map[string]any)["id"])
	code, out, errOut := s.run("", "create-topic", "scorm", "--lesson", lesson, "--title", "Module 2",
		"--package", fmt.Sprint(f.Details["package"]), "--sco", sco)
	var topic map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &topic) != nil || topic["kind"] != "scorm" {
		t.Fatalf("with --sco: %d %s %s", code, out, errOut)
	}
}
