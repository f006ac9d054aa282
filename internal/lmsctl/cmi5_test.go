package lmsctl_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/lmsctl"
)

// TestCreateCmi5Topic: a package of several AUs without --au exits 2 with
// details.choices; the retry with an AU and the uploaded package's id
// creates the topic.
func TestCreateCmi5Topic(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	s := loggedIn(t, env, false, "courses:write")
	lesson := courseWithLesson(t, env)
	pkg := fixtures.Path(t, "cmi5/multi_au_framed.zip")
	code, _, errOut := s.run("", "create-topic", "cmi5", "--lesson", lesson, "--title", "Geology", "--package", pkg)
	if code != lmsctl.ExitChoices {
		t.Fatalf("no --au: exit %d %s", code, errOut)
	}
	f := lastFailure(t, errOut)
	choices, _ := f.Details["choices"].([]any)
	if f.Code != "CHOICE_REQUIRED" || len(choices) != 8 || f.Details["package"] == nil {
		t.Fatalf("failure: %+v", f)
	}
	au := choices[2].(map[string]any)["id"]
	code, out, errOut := s.run("", "create-topic", "cmi5", "--lesson", lesson, "--title", "Geology",
		"--package", fmt.Sprint(f.Details["package"]), "--au", fmt.Sprint(au))
	var topic map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &topic) != nil || topic["kind"] != "cmi5" {
		t.Fatalf("create-topic: %d %s %s", code, out, errOut)
	}
}
