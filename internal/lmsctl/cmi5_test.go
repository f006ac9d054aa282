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

// TestCreateCmi5Topic: a package of several AUs without --au exits 2 with
// details.choices; the retry with an AU and the uploaded package's id
// creates the topic.
func TestCreateCmi5Topic(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.As("admin")
	token := env.Call(t, 201, "POST", "/api/auth/tokens", admin.Token, map[string]any{"name": "cmi5", "scopes": []string{"courses:write"}}).String("data.token")
	course := env.Call(t, 201, "POST", "/api/admin/courses", admin.Token, map[string]any{"title": "Course"}).Number("data.id")
	lesson := env.Call(t, 201, "POST", "/api/admin/lessons", admin.Token, map[string]any{"course_id": course, "title": "Lesson"}).Number("data.id")
	pkg := fixtures.Path(t, "cmi5/multi_au_framed.zip")
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
	code, _, errOut := run("", "create-topic", "cmi5", "--lesson", fmt.Sprint(lesson), "--title", "Geology", "--package", pkg)
	var failure struct {
		Error struct {
			Code    string         `json:"code"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if code != lmsctl.ExitChoices || json.Unmarshal([]byte(errOut), &failure) != nil || failure.Error.Code != "CHOICE_REQUIRED" {
		t.Fatalf("no --au: exit %d %s", code, errOut)
	}
	choices, _ := failure.Error.Details["choices"].([]any)
	if len(choices) != 8 || failure.Error.Details["package"] == nil {
		t.Fatalf("details: %v", failure.Error.Details)
	}
	au := choices[2].(map[string]any)["id"]
	code, out, errOut := run("", "create-topic", "cmi5", "--lesson", fmt.Sprint(lesson), "--title", "Geology",
		"--package", fmt.Sprint(failure.Error.Details["package"]), "--au", fmt.Sprint(au))
	var topic map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &topic) != nil || topic["kind"] != "cmi5" {
		t.Fatalf("create-topic: %d %s %s", code, out, errOut)
	}
}
