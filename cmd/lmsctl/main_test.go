package main_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/lms-platform/lms/client"
	lmsctlcmd "github.com/lms-platform/lms/cmd/lmsctl"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/lmsctl/lmsctltest"
)

// binary is lmsctl, run as a user runs it: the tests' own binary, which
// is lmsctl when runMain is 1 in its environment, so that no test builds
// lmsctl again.
var binary string

// runMain, set to 1, makes the tests' binary run lmsctl's main instead of
// the tests.
const runMain = "LMSCTL_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMain) == "1" {
		lmsctlcmd.Main()
		os.Exit(0)
	}
	var err error
	if binary, err = os.Executable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Every lmsctl the tests start inherits it.
	os.Setenv(runMain, "1")
	os.Exit(m.Run())
}

// cli runs lmsctl with its own configuration directory.
type cli struct {
	t   *testing.T
	dir string
}

type result struct {
	code           int
	stdout, stderr []byte
}

func newCLI(t *testing.T) *cli { return &cli{t: t, dir: t.TempDir()} }

func (c *cli) cmd(stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), "LMSCTL_CONFIG_DIR="+c.dir)
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

func (c *cli) run(stdin string, args ...string) result {
	c.t.Helper()
	cmd := c.cmd(stdin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		c.t.Fatalf("lmsctl %v: %v", args, err)
	}
	return result{code: code, stdout: out.Bytes(), stderr: errOut.Bytes()}
}

// ok runs lmsctl, expects exit 0 and returns its JSON output.
func (c *cli) ok(stdin string, args ...string) any {
	c.t.Helper()
	r := c.run(stdin, args...)
	if r.code != 0 {
		c.t.Fatalf("lmsctl %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	var v any
	if err := json.Unmarshal(r.stdout, &v); err != nil {
		c.t.Fatalf("lmsctl %v: output is not JSON: %v\n%s", args, err, r.stdout)
	}
	return v
}

// fails runs lmsctl, expects the exit code and error code, and returns
// the error's details.
func (c *cli) fails(code int, errCode string, stdin string, args ...string) map[string]any {
	c.t.Helper()
	r := c.run(stdin, args...)
	var e struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.stderr, &e); err != nil || r.code != code || e.Error.Code != errCode || e.Error.Message == "" {
		c.t.Fatalf("lmsctl %v: exit %d (want %d), stderr %s (want code %s), stdout %s", args, r.code, code, r.stderr, errCode, r.stdout)
	}
	if len(r.stdout) != 0 {
		c.t.Fatalf("lmsctl %v failed but printed %s", args, r.stdout)
	}
	return e.Error.Details
}

// get reads a dotted path (data.0.id) of decoded JSON.
func get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			var i int
			if _, err := fmt.Sscan(k, &i); err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func id(v any, path string) string {
	n, ok := get(v, path).(float64)
	if !ok {
		return ""
	}
	return fmt.Sprint(int64(n))
}

// scopedToken creates an lms_pat_ token for the user over the API.
func scopedToken(t *testing.T, session *client.Client, name string, scopes ...string) string {
	t.Helper()
	tok := apitest.Must(session.PostAuthTokens(t.Context(), client.CreateInputBody{Name: name, Scopes: scopes}))(t).Token
	if !strings.HasPrefix(tok, "lms_pat_") {
		t.Fatalf("token: %q", tok)
	}
	return tok
}

// TestCourseScript runs lmsctl as a script would: it logs in, creates a
// course with a lesson and one topic of every type the API supports,
// takes the exit-2 path of a SCORM package that needs a choice, assigns
// a learner, who reads the course's program with lmsctl too, and deletes
// the course, checking exit codes and JSON output throughout.
func TestCourseScript(t *testing.T) {
	lmsctltest.NeedFFmpeg(t)
	for _, backend := range apitest.Backends(t) {
		t.Run(backend, func(t *testing.T) { courseScript(t, lmsctltest.Server(t, backend)) })
	}
}

func courseScript(t *testing.T, env *apitest.Env) {
	admin := env.As("admin")
	token := scopedToken(t, env.UserClient(admin), "script", "courses:write", "users:read", "progress:read", "h5p:write",
		"settings:write")
	c := newCLI(t)

	// Bad input fails before any request: with no profile yet, a
	// request would have failed with NOT_LOGGED_IN (exit 4) instead.
	c.fails(3, "USAGE", "", "get-admin-courses", "--bogus")
	c.fails(3, "USAGE", "", "post-admin-lessons", "--title", "No course")
	c.fails(3, "USAGE", "", "get-admin-courses-id", "--id", "abc")
	c.fails(3, "USAGE", "", "post-admin-courses", "--body", "@"+filepath.Join(t.TempDir(), "missing.json"))
	c.fails(3, "USAGE", "", "no-such-operation")
	c.fails(3, "USAGE", "", "create-topic", "richtext", "--lesson", "1", "--title", "x")
	c.fails(4, "NOT_LOGGED_IN", "", "whoami")
	c.fails(3, "USAGE", "not-a-token\n", "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)

	login := c.ok(token+"\n", "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
	if get(login, "profile") != env.Host || get(login, "token.name") != "script" || get(login, "token.scopes.0") != "courses:write" {
		t.Fatalf("login: %v", login)
	}
	st, err := os.Stat(filepath.Join(c.dir, "profiles.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("profiles file: %v, %v", st, err)
	}
	who := c.ok("", "whoami")
	if get(who, "user.email") != admin.Email || get(who, "token.name") != "script" || get(who, "profile") != env.Host {
		t.Fatalf("whoami: %v", who)
	}

	list := c.ok("", "ops", "--json").([]any)
	kinds := map[string]any{}
	for _, o := range list {
		if get(o, "stability") != "stable" || get(o, "scope") == "" || get(o, "input.type") != "object" {
			t.Fatalf("ops entry: %v", o)
		}
		kinds[get(o, "name").(string)] = get(o, "kind")
	}
	if kinds["get-admin-courses"] != "read" || kinds["post-admin-courses"] != "write" || kinds["delete-admin-courses-id"] != "destructive" {
		t.Fatalf("kinds: %v", kinds)
	}

	course := c.ok("", "post-admin-courses", "--title", "Scripted course", "--summary", "Made by lmsctl", "--status", "published")
	courseID := id(course, "id")
	if courseID == "" || get(course, "title") != "Scripted course" {
		t.Fatalf("course: %v", course)
	}
	bodyFile := filepath.Join(t.TempDir(), "lesson.json")
	os.WriteFile(bodyFile, []byte(`{"title":"From a file","course_id":0}`), 0o600)
	// Field flags win over the --body file.
	lesson := c.ok("", "post-admin-lessons", "--body", "@"+bodyFile, "--course-id", courseID, "--title", "First lesson")
	lessonID := id(lesson, "id")
	if lessonID == "" || get(lesson, "title") != "First lesson" {
		t.Fatalf("lesson: %v", lesson)
	}
	made := createEveryType(t, c, lessonID)
	welcome := id(c.ok("", "get-admin-topics", "--lesson-id", lessonID, "--title", "Welcome"), "data.0.id")
	shown := c.ok("", "get-admin-topics-id", "--id", welcome)
	if html, _ := get(shown, "topicable.html").(string); get(shown, "kind") != "richtext" || !strings.Contains(html, "<strong>this</strong>") {
		t.Fatalf("topic: %v", shown)
	}

	// A package of several SCOs needs a choice: exit 2 with the choices
	// and the uploaded package, which the retry names.
	other := id(c.ok("", "post-admin-lessons", "--course-id", courseID, "--title", "Modules"), "id")
	choice := c.fails(2, "CHOICE_REQUIRED", "", "create-topic", "scorm", "--lesson", other, "--title", "Module 2",
		"--package", fixtures.Path(t, "scorm/PrerequisitesTest_SCORM12.zip"))
	choices, _ := get(choice, "choices").([]any)
	if len(choices) != 4 || get(choices[1], "identifier") != "module2" || id(choice, "package") == "" {
		t.Fatalf("choice details: %v", choice)
	}
	module := c.ok("", "create-topic", "scorm", "--lesson", other, "--title", "Module 2",
		"--package", id(choice, "package"), "--sco", id(choices[1], "id"))
	if get(module, "kind") != "scorm" || get(module, "title") != "Module 2" {
		t.Fatalf("topic of the chosen SCO: %v", module)
	}

	learner := env.NewUser("student")
	access := c.ok("", "post-admin-courses-id-access", "--id", courseID, "--users", fmt.Sprintf(`[{"id":%d}]`, learner.ID))
	raw, _ := json.Marshal(access)
	if !strings.Contains(string(raw), fmt.Sprint(learner.ID)) {
		t.Fatalf("access: %s", raw)
	}
	// The program as the admin sees it, and as the learner reads it
	// with lmsctl: the lesson with every topic, in the order made.
	l := newCLI(t)
	l.ok(scopedToken(t, env.UserClient(learner), "learner", "courses:read"),
		"login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
	for who, program := range map[string]any{
		"admin":   c.ok("", "get-admin-courses-course-program", "--course", courseID),
		"learner": l.ok("", "get-courses-course-program", "--course", courseID),
	} {
		lesson := programLesson(program, "First lesson")
		topics, _ := get(lesson, "topics").([]any)
		if len(topics) != len(made) {
			t.Fatalf("%s's program: %d topics, want %d: %v", who, len(topics), len(made), lesson)
		}
		for i, m := range made {
			if get(topics[i], "title") != m.title {
				t.Fatalf("%s's program: topic %d is %v, want %s", who, i, topics[i], m.title)
			}
		}
	}
	page := c.ok("", "get-admin-courses", "--title", "Scripted")
	if get(page, "data.0.id") == nil || get(page, "meta.total") != float64(1) {
		t.Fatalf("course list: %v", page)
	}

	// Server refusals keep their codes: a scope the token lacks, a
	// validation failure, something gone.
	c.fails(4, "FORBIDDEN", "", "get-admin-user-groups")
	details := c.fails(6, "INVALID", "", "post-admin-courses", "--title", "Bad", "--level", strings.Repeat("x", 40))
	if get(details, "status") != float64(422) {
		t.Fatalf("validation details: %v", details)
	}
	if out := c.ok("", "delete-admin-courses-id", "--id", courseID); out != nil {
		t.Fatalf("delete answered %v", out)
	}
	gone := c.fails(5, "NOT_FOUND", "", "get-admin-courses-id", "--id", courseID)
	if get(gone, "status") != float64(404) {
		t.Fatalf("not found details: %v", gone)
	}
	// Its lessons and topics went with it.
	c.fails(5, "NOT_FOUND", "", "get-admin-topics-id", "--id", welcome)
	l.fails(5, "NOT_FOUND", "", "get-courses-course-program", "--course", courseID)

	// The token never shows in what lmsctl prints.
	for _, args := range [][]string{{"whoami"}, {"ops"}, {"get-admin-courses"},
		{"login", "--token", "--server", env.HTTP.URL, "--host", env.Host}} {
		r := c.run(token+"\n", args...)
		if r.code != 0 {
			t.Fatalf("lmsctl %v: exit %d: %s", args, r.code, r.stderr)
		}
		if bytes.Contains(r.stdout, []byte(token)) || bytes.Contains(r.stderr, []byte(token)) {
			t.Fatalf("lmsctl %v printed the token", args)
		}
	}
}

func TestRateLimited(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.ClientAs("admin")
		// One second before the limiter's minute ends, so Retry-After is short.
		env.Clock.Set(env.Clock.Now().Truncate(time.Minute).Add(time.Minute - time.Second))
		slow := apitest.Must(admin.PostAuthTokens(t.Context(), client.CreateInputBody{Name: "slow",
			Scopes: []string{"courses:read"}, RateLimitPerMinute: client.Ptr(int64(1))}))(t)
		c := newCLI(t)
		c.ok(slow.Token, "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
		details := c.fails(7, "RATE_LIMITED", "", "get-admin-courses")
		if n, _ := get(details, "retryAfter").(float64); n < 1 || n > 60 || get(details, "status") != float64(429) {
			t.Fatalf("details: %v", details)
		}

		// --wait waits out Retry-After and tries again: once the server has
		// refused it (the token's audit shows a 429), the minute ends.
		audit := client.GetAdminAgentAuditParams{Status: client.Ptr(int64(429)), TokenID: client.Ptr(slow.ID)}
		refusals := func(atLeast int) int {
			t.Helper()
			for {
				if n := apitest.Must(admin.GetAdminAgentAudit(t.Context(), audit))(t).Meta.Total; n >= atLeast {
					return n
				}
				time.Sleep(50 * time.Millisecond)
			}
		}
		// Only the refusal above so far (the filter works).
		if n := refusals(1); n != 1 {
			t.Fatalf("%d refusals before --wait", n)
		}
		cmd := c.cmd("", "get-admin-courses", "--wait")
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		refusals(2)
		env.Clock.Advance(time.Minute)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("lmsctl --wait: %v", err)
		}
		var page any
		if err := json.Unmarshal(out.Bytes(), &page); err != nil || get(page, "meta") == nil {
			t.Fatalf("output: %s", out.Bytes())
		}
	})
}

var userCodeLine = regexp.MustCompile(`enter the code ([A-Z]{4}-[A-Z]{4})`)

// deviceLogin starts `lmsctl login` and returns it running, with the
// user code it printed.
func deviceLogin(t *testing.T, c *cli, env *apitest.Env, args ...string) (*exec.Cmd, *bytes.Buffer, string) {
	t.Helper()
	cmd := c.cmd("", append([]string{"login", "--server", env.HTTP.URL, "--host", env.Host, "--no-browser"}, args...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	for lines.Scan() {
		if m := userCodeLine.FindStringSubmatch(lines.Text()); m != nil {
			go io.Copy(io.Discard, stderr)
			return cmd, &out, m[1]
		}
	}
	cmd.Wait()
	t.Fatal("lmsctl login printed no user code")
	return nil, nil, ""
}

func TestDeviceLogin(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, ctx := env.As("admin"), t.Context()
		approver := env.UserClient(admin)
		c := newCLI(t)
		cmd, out, code := deviceLogin(t, c, env, "--scopes", "courses:read,courses:write", "--name", "lmsctl in a test")
		shown := apitest.Must(approver.GetAuthDeviceRequestsID(ctx, code))(t)
		if shown.ClientName != "lmsctl in a test" || len(shown.Scopes) < 2 || shown.Scopes[1] != "courses:write" {
			t.Fatalf("request: %+v", shown)
		}
		apitest.Must(approver.PostAuthDeviceRequestsIDApprove(ctx, code, client.DeviceApproveInputBody{Scopes: []string{"courses:read"}}))(t)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("lmsctl login: %v (output %s)", err, out)
		}
		var login any
		if err := json.Unmarshal(out.Bytes(), &login); err != nil || get(login, "token.scopes.0") != "courses:read" ||
			get(login, "token.scopes.1") != nil || get(login, "token.name") != "lmsctl in a test" {
			t.Fatalf("login output: %s", out)
		}
		if who := c.ok("", "whoami"); get(who, "user.email") != admin.Email {
			t.Fatalf("whoami: %v", who)
		}
		c.fails(4, "FORBIDDEN", "", "post-admin-courses", "--title", "Not allowed")

		// A denied request ends the login with the auth exit code.
		cmd, _, code = deviceLogin(t, newCLI(t), env)
		apitest.Must(approver.PostAuthDeviceRequestsIDDeny(ctx, code))(t)
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 4 {
			t.Fatalf("denied login: %v", err)
		}
	})
}

// TestMCPOverStdio runs `lmsctl mcp` as an agent's MCP client starts it.
func TestMCPOverStdio(t *testing.T) {
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.ClientAs("admin")
	c := newCLI(t)
	c.ok(scopedToken(t, admin, "agent", "courses:read"), "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
	c.fails(3, "USAGE", "", "mcp", "--allow", "delete-admin-courses-id")
	c.fails(3, "USAGE", "", "mcp", "--upload-from", filepath.Join(t.TempDir(), "missing"))
	apitest.Must(admin.PostAdminCourses(t.Context(), client.CourseBody{Title: "Seen by the agent"}))(t)

	ctx := context.Background()
	server := c.cmd("", "mcp", "--toolset", "all", "--allow", "post-admin-courses")
	server.Stdin = nil // the transport speaks on it
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test-agent"}, nil).Connect(ctx, &mcp.CommandTransport{Command: server}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := map[string]bool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names[tool.Name] = true
	}
	if !names["get-admin-courses"] || !names["post-admin-courses"] || names["post-admin-lessons"] || names["delete-admin-courses-id"] {
		t.Fatalf("tools: %v", names)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get-admin-courses", Arguments: map[string]any{"title": "Seen"}})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if v := any(nil); json.Unmarshal(raw, &v) != nil || get(v, "data.0.title") != "Seen by the agent" {
		t.Fatalf("result: %s", raw)
	}
}

// TestH5PTopic: the package goes to the H5P service first, then the topic
// is created for the new content; when the second step fails, the error
// says what exists and how to remove it.
func TestH5PTopic(t *testing.T) {
	pkg := fixtures.Path(t, "h5p/hub/H5P.TrueFalse.h5p")
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin, ctx := env.ClientAs("admin"), t.Context()
		c := newCLI(t)
		c.ok(scopedToken(t, admin, "h5p", "courses:write", "h5p:write"), "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
		_, lesson := courseWithLesson(t, admin, "H5P course")

		c.fails(3, "USAGE", "", "create-topic", "h5p", "--lesson", lesson, "--title", "Quiz", "--package", filepath.Join(t.TempDir(), "none.h5p"))
		c.fails(3, "USAGE", "", "create-topic", "h5p", "--lesson", lesson, "--title", "Quiz", "--package", "main.go")

		topic := c.ok("", "create-topic", "h5p", "--lesson", lesson, "--title", "Quiz", "--package", pkg)
		contentID, _ := get(topic, "topicable.content_id").(string)
		if get(topic, "kind") != "h5p" || contentID == "" {
			t.Fatalf("topic: %v", topic)
		}
		apitest.Must(admin.GetH5PContentsID(ctx, contentID))(t)

		details := c.fails(5, "NOT_FOUND", "", "create-topic", "h5p", "--lesson", "999999", "--title", "Lost", "--package", pkg)
		orphan, _ := get(details, "created.h5pContentId").(string)
		if orphan == "" || orphan == contentID {
			t.Fatalf("details of the half-done creation: %v", details)
		}
		apitest.Must(admin.GetH5PContentsID(ctx, orphan))(t)
		c.ok("", "delete-h5p-contents-id", "--id", orphan)
		_, err := admin.GetH5PContentsID(ctx, orphan)
		apitest.Refused(t, err, 404)
	})
}

// courseWithLesson makes a course with one lesson as c and returns their
// ids, the lesson's as lmsctl's flags take it.
func courseWithLesson(t *testing.T, c *client.Client, title string) (course int64, lesson string) {
	t.Helper()
	course = apitest.Must(c.PostAdminCourses(t.Context(), client.CourseBody{Title: title}))(t).ID
	l := apitest.Must(c.PostAdminLessons(t.Context(), client.CreateLessonInputBody{CourseID: course, Title: "Lesson"}))(t)
	return course, fmt.Sprint(l.ID)
}

func TestServerUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newCLI(t)
	c.fails(8, "UNAVAILABLE", "lms_pat_unused\n", "login", "--token", "--server", "http://"+addr)
	if _, err := os.Stat(filepath.Join(c.dir, "profiles.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed login saved a profile: %v", err)
	}
}

// TestTopicTypes creates one topic of each type that takes a local file
// or plain fields, and checks the refusals that happen before a request.
func TestTopicTypes(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.ClientAs("admin")
		c := newCLI(t)
		c.ok(scopedToken(t, admin, "types", "courses:write"), "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
		course, lesson := courseWithLesson(t, admin, "Every type")
		dir := t.TempDir()
		write := func(name string, content []byte) string { return lmsctltest.WriteFile(t, dir, name, content) }
		files := map[string]string{
			"pdf":   write("notes.pdf", []byte("%PDF-1.4\n%%EOF\n")),
			"image": write("map.png", apitest.PNG(t)),
			"audio": write("talk.mp3", append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), make([]byte, 64)...)),
			"video": write("clip.mp4", append([]byte("\x00\x00\x00\x18ftypisom\x00\x00\x02\x00"), make([]byte, 64)...)),
		}
		for kind, path := range files {
			topic := c.ok("", "create-topic", kind, "--lesson", lesson, "--title", "A "+kind, "--file", path, "--summary", "s")
			if get(topic, "kind") != kind || get(topic, "title") != "A "+kind || get(topic, "summary") != "s" {
				t.Fatalf("%s topic: %v", kind, topic)
			}
		}
		// Uploads of registry operations take local files for their file fields.
		pdfTopic := id(c.ok("", "get-admin-topics", "--lesson-id", lesson, "--title", "A pdf"), "data.0.id")
		res := c.ok("", "post-admin-topics-topic-id-resources", "--topic-id", pdfTopic, "--resource", files["pdf"], "--name", "Slides")
		if get(res, "name") != "Slides" {
			t.Fatalf("resource: %v", res)
		}
		listed := c.ok("", "get-admin-topics-topic-id-resources", "--topic-id", pdfTopic)
		if get(listed, "0.name") != "Slides" || get(listed, "1") != nil {
			t.Fatalf("resources: %v", listed)
		}
		c.fails(3, "USAGE", "", "post-admin-topics-topic-id-resources", "--topic-id", pdfTopic)
		c.fails(3, "USAGE", "", "post-admin-topics-topic-id-resources", "--topic-id", pdfTopic, "--resource", filepath.Join(dir, "none"))

		c.fails(3, "USAGE", "", "create-topic", "pdf", "--lesson", lesson, "--title", "x", "--file", files["image"])
		c.fails(3, "USAGE", "", "create-topic", "audio", "--lesson", lesson, "--title", "x")
		c.fails(3, "USAGE", "", "create-topic", "video", "--lesson", lesson, "--title", "x", "--file", files["video"],
			"--video-site-url", "https://example.com/v")
		// The server checks the content, not only the name.
		c.fails(6, "INVALID", "", "create-topic", "pdf", "--lesson", lesson, "--title", "x", "--file", write("fake.pdf", []byte("plain text")))

		md := write("brief.md", []byte("Write **500** words."))
		project := c.ok("", "create-topic", "project", "--lesson", lesson, "--title", "Essay", "--instructions", "@"+md,
			"--accept", "pdf,txt", "--max-size", "1024")
		if get(project, "kind") != "project" {
			t.Fatalf("project: %v", project)
		}
		c.fails(3, "USAGE", "", "create-topic", "project", "--lesson", lesson, "--title", "x", "--max-size", "big")
		c.fails(3, "USAGE", "", "create-topic", "oembed", "--lesson", lesson, "--title", "x")
		// The URL reaches the server, which finds no provider for it.
		embed := c.fails(6, "INVALID", "", "create-topic", "oembed", "--lesson", lesson, "--title", "x", "--url", "http://127.0.0.1/watch")
		if get(embed, "errors.url") == nil {
			t.Fatalf("oembed refusal: %v", embed)
		}
		c.fails(3, "USAGE", "", "create-topic", "quiz", "--lesson", lesson, "--title", "x")
		c.fails(3, "USAGE", "", "create-topic", "quiz", "--lesson", lesson, "--title", "x", "--questions", "[]")
		quiz := c.ok("", "create-topic", "quiz", "--lesson", lesson, "--title", "Check", "--max-attempts", "2", "--review", "after_answer",
			"--questions", `[{"prompt":"2 + 2?","options":[{"text":"3","correct":false},{"text":"4","correct":true}]}]`)
		if get(quiz, "kind") != "quiz" || get(quiz, "topicable.review") != "after_answer" {
			t.Fatalf("quiz: %v", quiz)
		}
		gift := write("check.gift", []byte("// arithmetic\n$CATEGORY: maths\n\n::Sum:: 1 + 1 = {=2 ~3}\n\nThe sky is blue. {T}\n"))
		c.ok("", "create-topic", "quiz", "--lesson", lesson, "--title", "Check 2", "--gift", "@"+gift)
		c.fails(6, "INVALID", "", "create-topic", "quiz", "--lesson", lesson, "--title", "x", "--gift", "What? {=a ~b")
		c.fails(6, "INVALID", "", "create-topic", "quiz", "--lesson", lesson, "--title", "x", "--gift", "What? {T}", "--review", "sometimes")

		doc := write("doc.json", []byte(`[{"component":"Callout","props":{"tone":"info","title":"Note","body":"Read on."}}]`))
		layout := c.ok("", "create-topic", "layout", "--lesson", lesson, "--title", "Structured", "--document", "@"+doc,
			"--fallback", "Read on.")
		if get(layout, "kind") != "layout" {
			t.Fatalf("layout: %v", layout)
		}
		c.fails(3, "USAGE", "", "create-topic", "layout", "--lesson", lesson, "--title", "x", "--document", "{", "--fallback", "f")
		c.fails(3, "USAGE", "", "create-topic", "layout", "--lesson", lesson, "--title", "x", "--document", "[]")
		// The server checks the nodes.
		c.fails(6, "INVALID", "", "create-topic", "layout", "--lesson", lesson, "--title", "x",
			"--document", `[{"component":"Marquee","props":{}}]`, "--fallback", "f")

		program := c.ok("", "get-admin-courses-course-program", "--course", fmt.Sprint(course))
		raw, _ := json.Marshal(program)
		for _, title := range []string{"A pdf", "A image", "A audio", "A video", "Essay", "Structured", "Check", "Check 2"} {
			if !strings.Contains(string(raw), `"`+title+`"`) {
				t.Fatalf("program lacks %s: %s", title, raw)
			}
		}
	})
}

// TestMCPInspector: a second, independent MCP client, the reference
// Inspector (npm, package.json) in its CLI mode, lists the tools of
// `lmsctl mcp` and calls a read tool.
func TestMCPInspector(t *testing.T) {
	inspector := filepath.Join(fixtures.RepoRoot(), "node_modules", ".bin", "mcp-inspector")
	if _, err := os.Stat(inspector); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true but the MCP Inspector is not installed (npm ci): %v", err)
		}
		t.Skip("the MCP Inspector is not installed: run npm ci")
	}
	env := apitest.New(t, "sqlite", apitest.Options{})
	admin := env.ClientAs("admin")
	c := newCLI(t)
	c.ok(scopedToken(t, admin, "inspected", "courses:read"), "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
	apitest.Must(admin.PostAdminCourses(t.Context(), client.CourseBody{Title: "Inspected course"}))(t)

	inspect := func(args ...string) any {
		t.Helper()
		base := []string{"--cli", "-e", "LMSCTL_CONFIG_DIR=" + c.dir, "-e", runMain + "=1", binary, "mcp"}
		cmd := exec.Command(inspector, append(base, args...)...)
		// Its catalog of servers stays out of the user's home.
		cmd.Env = append(os.Environ(), "MCP_CATALOG_PATH="+filepath.Join(t.TempDir(), "mcp.json"))
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			t.Fatalf("inspector %v: %v\n%s\n%s", args, err, out.Bytes(), errOut.Bytes())
		}
		var v any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out.Bytes())
		}
		return v
	}
	listed := inspect("--method", "tools/list")
	tools, _ := get(listed, "tools").([]any)
	found := false
	for _, tool := range tools {
		if get(tool, "name") == "get-admin-courses" {
			found = get(tool, "annotations.readOnlyHint") == true
		}
		if get(tool, "annotations.readOnlyHint") != true {
			t.Fatalf("a tool that is not read-only is offered by default: %v", tool)
		}
	}
	if !found {
		t.Fatalf("tools/list: %v", listed)
	}
	called := inspect("--method", "tools/call", "--tool-name", "get-admin-courses", "--tool-arg", "title=Inspected")
	if get(called, "structuredContent.data.0.title") != "Inspected course" || get(called, "isError") == true {
		t.Fatalf("tools/call: %v", called)
	}
}

// TestLTITopicScoreMaximum: create-topic lti takes the maximum of the
// line item its resource link gets, and refuses one that is not a
// positive number before any request.
func TestLTITopicScoreMaximum(t *testing.T) {
	apitest.Each(t, func(t *testing.T, env *apitest.Env) {
		admin := env.ClientAs("admin")
		c := newCLI(t)
		c.ok(scopedToken(t, admin, "lti", "courses:write", "settings:write"), "login", "--token", "--server", env.HTTP.URL, "--host", env.Host)
		_, lesson := courseWithLesson(t, admin, "Graded by a tool")
		tool := c.ok("", "post-admin-lti-tools", "--body", "@"+lmsctltest.WriteFile(t, t.TempDir(), "tool.json", []byte(lmsctltest.LTITool)))
		for _, bad := range []string{"0", "-3", "many"} {
			c.fails(3, "USAGE", "", "create-topic", "lti", "--lesson", lesson, "--title", "Lab", "--tool", id(tool, "id"), "--score-maximum", bad)
		}
		topic := c.ok("", "create-topic", "lti", "--lesson", lesson, "--title", "Lab", "--tool", id(tool, "id"), "--score-maximum", "40")
		if get(topic, "kind") != "lti" || get(topic, "topicable.score_maximum") != float64(40) {
			t.Fatalf("topic: %v", topic)
		}
	})
}
