package lmsctl_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/lmsctl"
)

// session runs lmsctl in process, as one user at one machine: every run
// shares its configuration directory, so a login holds for the runs
// after it.
type session struct {
	t   *testing.T
	dir string
	// tty says standard error is a terminal (progress bars are drawn).
	tty bool
	// sleep, when set, stands for the waits of --wait.
	sleep func(ctx context.Context, d time.Duration) error
}

func newSession(t *testing.T, tty bool) *session {
	return &session{t: t, dir: t.TempDir(), tty: tty}
}

// env is the process environment of one run.
func (s *session) env(stdin string, out, errOut *bytes.Buffer, args ...string) lmsctl.Env {
	return lmsctl.Env{Args: args, Stdin: strings.NewReader(stdin), Stdout: out, Stderr: errOut, StderrTTY: s.tty, Sleep: s.sleep,
		Getenv: func(k string) string {
			if k == lmsctl.ConfigDirEnv {
				return s.dir
			}
			return ""
		}}
}

// run runs one command and returns its exit code, standard output and
// standard error.
func (s *session) run(stdin string, args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := lmsctl.Main(context.Background(), s.env(stdin, &out, &errOut, args...))
	return code, out.String(), errOut.String()
}

// login logs the session in to env's tenant with token.
func (s *session) login(env *apitest.Env, token string) {
	s.t.Helper()
	s.loginAt(env.HTTP.URL, env.Host, token)
}

// loginAt logs the session in to the tenant host at server with token.
func (s *session) loginAt(server, host, token string) {
	s.t.Helper()
	if code, _, errOut := s.run(token, "login", "--token", "--server", server, "--host", host); code != 0 {
		s.t.Fatalf("login: exit %d: %s", code, errOut)
	}
}

// loggedIn is a session logged in with a new token of env's admin
// holding scopes.
func loggedIn(t *testing.T, env *apitest.Env, tty bool, scopes ...string) *session {
	t.Helper()
	s := newSession(t, tty)
	s.login(env, adminToken(t, env, scopes...))
	return s
}

// adminToken is a new token of env's admin holding scopes.
func adminToken(t *testing.T, env *apitest.Env, scopes ...string) string {
	t.Helper()
	return apitest.Must(env.ClientAs("admin").PostAuthTokens(t.Context(), client.CreateInputBody{Name: "cli", Scopes: scopes}))(t).Token
}

// failure is the error lmsctl printed last on standard error (progress
// lines may come before it).
type failure struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

func lastFailure(t *testing.T, errOut string) failure {
	t.Helper()
	trimmed := strings.TrimRight(errOut, "\n")
	var f struct {
		Error failure `json:"error"`
	}
	if err := json.Unmarshal([]byte(trimmed[strings.LastIndex(trimmed, "\n")+1:]), &f); err != nil || f.Error.Code == "" {
		t.Fatalf("standard error holds no failure: %q", errOut)
	}
	return f.Error
}

// courseWithLesson makes a course with one lesson over the API and
// returns the lesson's id.
func courseWithLesson(t *testing.T, env *apitest.Env) string {
	t.Helper()
	ctx, admin := t.Context(), env.ClientAs("admin")
	course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Course"}))(t).ID
	lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "Lesson"}))(t).ID
	return fmt.Sprint(lesson)
}
