package web

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/golang-jwt/jwt/v5"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/browsertest"
)

// ltiStubTool is an external tool of the test, launched by our platform:
// its login sends the browser to our authorization endpoint; before that
// it tries the same URL itself, without the browser's cookies, as someone
// who copied it would. Its launch page shows the launch's sub, or the
// OAuth error it was posted.
type ltiStubTool struct {
	srv *httptest.Server
	mu  sync.Mutex
	// copied is what our authorization endpoint answered the copy.
	copied string
}

var errorField = regexp.MustCompile(`name="error" value="([^"]*)"`)

func newLTIStubTool(t *testing.T, env *apitest.Env, authorize, clientID func() string) *ltiStubTool {
	tool := &ltiStubTool{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		to := authorize() + "?" + url.Values{"scope": {"openid"}, "response_type": {"id_token"},
			"response_mode": {"form_post"}, "prompt": {"none"}, "client_id": {clientID()},
			"redirect_uri": {tool.srv.URL + "/launch"}, "login_hint": {q.Get("login_hint")},
			"lti_message_hint": {q.Get("lti_message_hint")}, "state": {"tool-state"}, "nonce": {"tool-nonce"}}.Encode()
		u, _ := url.Parse(to)
		copyReq, _ := http.NewRequest("GET", env.HTTP.URL+u.RequestURI(), nil)
		copyReq.Host = u.Host
		answer := "no answer"
		if res, err := http.DefaultClient.Do(copyReq); err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			answer = fmt.Sprint(res.StatusCode, " ", errorField.FindStringSubmatch(string(body)))
		}
		tool.mu.Lock()
		tool.copied = answer
		tool.mu.Unlock()
		http.Redirect(w, r, to, http.StatusFound)
	})
	mux.HandleFunc("POST /launch", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if e := r.PostForm.Get("error"); e != "" {
			fmt.Fprintf(w, `<p id="tool-refused">%s</p>`, html.EscapeString(e))
			return
		}
		claims := jwt.MapClaims{}
		if _, _, err := jwt.NewParser().ParseUnverified(r.PostForm.Get("id_token"), claims); err != nil ||
			r.PostForm.Get("state") != "tool-state" || claims["nonce"] != "tool-nonce" {
			http.Error(w, "not a launch", http.StatusBadRequest)
			return
		}
		fmt.Fprintf(w, `<p id="tool-launched">%s</p>`, html.EscapeString(fmt.Sprint(claims["sub"])))
	})
	tool.srv = httptest.NewServer(mux)
	t.Cleanup(tool.srv.Close)
	return tool
}

// TestLTIToolLaunchInBrowser: a learner opens an lti topic's external tool
// from the topic page in Chromium. The frontend asks the API for the
// launch with the session and hands on, to the browser, the cookie that
// binds the login hint to it; the tool sends the browser to the API's
// authorization endpoint (another port of the tenant's host), which posts
// the learner's launch to the tool. The same URL without the cookie, as
// the tool tried it first, was refused at the tool's redirect URI and
// left the hint to the learner.
func TestLTIToolLaunchInBrowser(t *testing.T) {
	eachBackend(t, ltiToolLaunchInBrowser)
}

func ltiToolLaunchInBrowser(t *testing.T, backend string) {
	s := newStack(t, backend, frontOptions{})
	env := s.env
	_, apiPort, _ := net.SplitHostPort(strings.TrimPrefix(env.HTTP.URL, "http://"))
	_, frontPort, _ := net.SplitHostPort(strings.TrimPrefix(s.srv.URL, "http://"))
	origin := "http://" + env.Host + ":" + frontPort
	var ext *client.ExternalTool
	tool := newLTIStubTool(t, env, func() string { return "http://" + env.Host + ":" + apiPort + "/api/lti/authorize" },
		func() string { return ext.ClientID })
	_, toolPort, _ := net.SplitHostPort(strings.TrimPrefix(tool.srv.URL, "http://"))
	toolOrigin := "http://tool.test:" + toolPort

	ctx := t.Context()
	admin := env.ClientAs("admin")
	ext = apitest.Must(admin.PostAdminLTITools(ctx, client.ToolInput{Name: "Stub tool", LoginURL: toolOrigin + "/login",
		TargetLinkURI: toolOrigin + "/launch", RedirectUris: []string{tool.srv.URL + "/launch"},
		JwksURL: client.Ptr(toolOrigin + "/jwks")}))(t)
	course := apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "With a tool", Status: client.Ptr("published")}))(t).ID
	lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: course, Title: "L"}))(t).ID
	topic := apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson, Title: "Lab",
		Topicable: `Lms\TopicTypes\Models\TopicContent\LTI`, Tool: &ext.ID}))(t).ID
	learner := env.NewUser("student")
	apitest.Must(admin.PostAdminCoursesIDAccess(ctx, course, client.AssignInputBody{Users: []client.GrantBody{{ID: learner.ID}}}))(t)

	bctx := browsertest.New(t, 3*time.Minute, browsertest.MapHosts(env.Host, "tool.test"))
	run := (&browserRun{t: t, ctx: bctx}).run
	run("sign in", signIn(origin, learner), chromedp.WaitVisible(`a[href="/certificates"]`, chromedp.ByQuery))
	var sub, at string
	run("launch", chromedp.Navigate(origin+"/learn/"+id(course)+"/"+id(topic)), chromedp.WaitVisible(`#lti-start`, chromedp.ByID),
		chromedp.Click(`#lti-start`, chromedp.ByID), chromedp.WaitVisible(`#tool-launched`, chromedp.ByID),
		chromedp.Text(`#tool-launched`, &sub, chromedp.ByID), chromedp.Location(&at))
	if sub != id(learner.ID) || at != tool.srv.URL+"/launch" {
		t.Fatalf("the tool launched %q at %s", sub, at)
	}
	tool.mu.Lock()
	copied := tool.copied
	tool.mu.Unlock()
	if copied != "200 [name=\"error\" value=\"login_required\" login_required]" {
		t.Fatalf("the copied URL was answered %s", copied)
	}
	browsertest.Screenshot(t, bctx, "web-lti-tool-launch")
}
