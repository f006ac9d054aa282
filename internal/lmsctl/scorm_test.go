package lmsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
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
	admin := env.As("admin")
	token := env.Call(t, 201, "POST", "/api/auth/tokens", admin.Token, map[string]any{"name": "cli", "scopes": []string{"courses:write"}}).String("data.token")
	course := env.Call(t, 201, "POST", "/api/admin/courses", admin.Token, map[string]any{"title": "Course"}).Number("data.id")
	lesson := env.Call(t, 201, "POST", "/api/admin/lessons", admin.Token, map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")
	dir := t.TempDir()
	run := func(stdin string, args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := lmsctl.Main(context.Background(), lmsctl.Env{Args: args, Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut,
			Getenv: func(k string) string {
				if k == lmsctl.ConfigDirEnv {
					return dir
				}
				return ""
			}})
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := run(token, "login", "--token", "--server", env.HTTP.URL, "--host", env.Host); code != 0 {
		t.Fatalf("login: %d %s", code, errOut)
	}
	code, _, errOut := run("", "create-topic", "scorm", "--lesson", fmt.Sprint(lesson), "--title", "Modules", "--package", pkg)
	var failure struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if code != lmsctl.ExitChoices || json.Unmarshal([]byte(errOut), &failure) != nil || failure.Error.Code != "CHOICE_REQUIRED" {
		t.Fatalf("without --sco: %d %s", code, errOut)
	}
	choices, _ := failure.Error.Details["choices"].([]any)
	if len(choices) != 4 || choices[1].(map[string]any)["identifier"] != "module2" {
		t.Fatalf("choices: %s", errOut)
	}
	sco := fmt.Sprint(choices[1].(map[string]any)["id"])
	code, out, errOut := run("", "create-topic", "scorm", "--lesson", fmt.Sprint(lesson), "--title", "Module 2",
		"--package", fmt.Sprint(failure.Error.Details["package"]), "--sco", sco)
	var topic map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &topic) != nil || topic["kind"] != "scorm" {
		t.Fatalf("with --sco: %d %s %s", code, out, errOut)
	}
}
