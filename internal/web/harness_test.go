package web

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/fixtures"
)

// countingAPI is the real API behind its own test server, which counts
// the calls the frontend makes and can hold calls to one path until told
// to go on. Closing it makes the API unreachable.
type countingAPI struct {
	srv *httptest.Server

	mu    sync.Mutex
	calls map[string]int // by path, without the query
	gates map[string]chan struct{}
}

// landed is the header link of the page a user lands on after signing
// in: learners on their courses, tutors and admins on /teach.
const landed = `a[href="/my"][aria-current="page"], a[href="/teach"][aria-current="page"]`

func newCountingAPI(t testing.TB, next http.Handler) *countingAPI {
	c := &countingAPI{calls: map[string]int{}, gates: map[string]chan struct{}{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.calls[r.URL.Path]++
		gate := c.gates[r.URL.Path]
		c.mu.Unlock()
		if gate != nil {
			<-gate
		}
		next.ServeHTTP(w, r)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *countingAPI) count(path string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[path]
}

func (c *countingAPI) total() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.calls {
		n += v
	}
	return n
}

// hold makes calls to path wait until the returned function is called.
func (c *countingAPI) hold(path string) (release func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.gates[path] = ch
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			delete(c.gates, path)
			c.mu.Unlock()
			close(ch)
		})
	}
}

// front is the frontend under test, pointed at an API.
type front struct {
	t   testing.TB
	web *Handler
	srv *httptest.Server
	// content is the content origin's listener; contentPort its port.
	content     *httptest.Server
	contentPort string
	clock       *clock.Fake
	host        string // the Host requests are sent with by default
}

type frontOptions struct {
	fresh      time.Duration
	trustProxy bool
	clock      *clock.Fake
}

func newFront(t testing.TB, apiURL, platformHost string, o frontOptions) *front {
	t.Helper()
	clk := o.clock
	if clk == nil {
		clk = clock.NewFake(time.Now())
	}
	log := slog.New(slog.DiscardHandler)
	if os.Getenv("LMS_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	// The content origin: the tenant's host on the content listener's
	// port, as make run has it.
	content := httptest.NewUnstartedServer(nil)
	_, contentPort, _ := net.SplitHostPort(content.Listener.Addr().String())
	h, err := New(Options{APIURL: apiURL, PlatformHost: platformHost, TrustProxy: o.trustProxy,
		CacheFresh: o.fresh, Clock: clk, Log: log, ContentOrigin: "http://{host}:" + contentPort,
		HLSPlayer: filepath.Join(fixtures.RepoRoot(), "node_modules", "hls.js", "dist", "hls.min.js"),
		Editor:    filepath.Join(fixtures.RepoRoot(), "node_modules", "tiny-markdown-editor", "dist")})
	if err != nil {
		content.Close()
		t.Fatal(err)
	}
	content.Config.Handler = h.Content()
	content.Start()
	f := &front{t: t, web: h, srv: httptest.NewServer(h), content: content, contentPort: contentPort, clock: clk}
	t.Cleanup(func() {
		f.srv.Close()
		f.content.Close()
		h.cache.wait()
	})
	return f
}

// contentPath checks that a link names the content origin of the
// harness's tenant and returns its path and query, to request with
// content: true; the frontend's own origin must not serve it (404).
func (f *front) contentPath(link string) string {
	f.t.Helper()
	origin := "http://" + f.host + ":" + f.contentPort
	path, ok := strings.CutPrefix(link, origin)
	if !ok || !strings.HasPrefix(path, "/") {
		f.t.Fatalf("%q is not on the content origin %s", link, origin)
	}
	f.must(req{path: path}, http.StatusNotFound)
	return path
}

// testCSRFSecret is the CSRF secret of the harness's requests: do sends it
// as the lms_csrf cookie and its token in every page form it posts,
// unless the request says noCSRF.
var testCSRFSecret = base64.RawURLEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// pageForm tells whether a POST to path is one of the frontend's forms
// (not the BFF, a pass-through or the device decision, which binds its
// token to the code).
func pageForm(path string) bool {
	for _, p := range []string{"/bff/", "/api/", "/h5p/", "/device/"} {
		if strings.HasPrefix(path, p) {
			return false
		}
	}
	return true
}

// stack is a real API on a real database with the frontend in front of
// it, on the apitest tenant school.test.
type stack struct {
	env *apitest.Env
	api *countingAPI
	*front
}

func newStack(t *testing.T, backend string, o frontOptions) *stack {
	t.Helper()
	env := apitest.New(t, backend, apitest.Options{})
	o.clock = env.Clock
	api := newCountingAPI(t, env.Server.Handler)
	f := newFront(t, api.srv.URL, "platform.test", o)
	f.host = env.Host
	return &stack{env: env, api: api, front: f}
}

// eachBackend runs fn on SQLite and, when configured, PostgreSQL.
func eachBackend(t *testing.T, fn func(t *testing.T, backend string)) {
	for _, b := range apitest.Backends(t) {
		t.Run(b, func(t *testing.T) { fn(t, b) })
	}
}

// req is one request to the frontend.
type req struct {
	method string
	path   string
	host   string
	token  string // sent as the lms_session cookie
	// noCSRF leaves out the CSRF cookie and token do adds to page forms.
	noCSRF bool
	// content sends the request to the content origin's listener.
	content bool
	cookies []*http.Cookie
	headers map[string]string
	body    io.Reader
	form    url.Values
	json    any
}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r *resp) text() string { return string(r.body) }

// get returns the JSON value at a dotted path of the body.
func (r *resp) get(path string) any {
	var v any
	if json.Unmarshal(r.body, &v) != nil {
		return nil
	}
	return apitest.Lookup(v, path)
}

func (r *resp) cookie(name string) *http.Cookie {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (f *front) do(q req) *resp {
	f.t.Helper()
	method := q.method
	if method == "" {
		method = http.MethodGet
	}
	body := q.body
	ctype := ""
	csrf := method == http.MethodPost && !q.noCSRF && pageForm(q.path) && !q.content
	if csrf && q.body == nil {
		form := url.Values{}
		for k, v := range q.form {
			form[k] = v
		}
		form.Set(csrfField, csrfMAC(testCSRFSecret, csrfForm))
		q.form = form
	}
	switch {
	case q.form != nil:
		body = strings.NewReader(q.form.Encode())
		ctype = "application/x-www-form-urlencoded"
	case q.json != nil:
		b, _ := json.Marshal(q.json)
		body = bytes.NewReader(b)
		ctype = "application/json"
	}
	base := f.srv.URL
	if q.content {
		base = f.content.URL
	}
	r, err := http.NewRequest(method, base+q.path, body)
	if err != nil {
		f.t.Fatal(err)
	}
	r.Host = q.host
	if r.Host == "" {
		r.Host = f.host
	}
	if csrf {
		r.AddCookie(&http.Cookie{Name: csrfCookie, Value: testCSRFSecret})
	}
	if ctype != "" {
		r.Header.Set("Content-Type", ctype)
	}
	if method != http.MethodGet && method != http.MethodHead {
		// What a browser sends for its own same-origin requests.
		r.Header.Set("Sec-Fetch-Site", "same-origin")
		r.Header.Set("Origin", "http://"+r.Host)
	}
	for k, v := range q.headers {
		if v == "" {
			r.Header.Del(k)
		} else {
			r.Header.Set(k, v)
		}
	}
	if q.token != "" {
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: q.token})
	}
	for _, c := range q.cookies {
		r.AddCookie(c)
	}
	res, err := noRedirects.Do(r)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, q.path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return &resp{status: res.StatusCode, header: res.Header, body: b}
}

func (f *front) must(q req, status int) *resp {
	f.t.Helper()
	r := f.do(q)
	if r.status != status {
		f.t.Fatalf("%s %s: status %d, want %d: %.400s", q.method, q.path, r.status, status, r.body)
	}
	return r
}

// seeded is a course built through the admin API for the tests.
type seeded struct {
	course                      int64
	lesson                      int64
	reading, second, image, pdf int64
	project                     int64
}

const richTextClass = `Lms\TopicTypes\Models\TopicContent\RichText`

// seedCourse creates a published public course with a rich-text topic,
// a second one, an image, a PDF and a project, on host.
func seedCourse(t testing.TB, env *apitest.Env, host, adminToken, title string) seeded {
	t.Helper()
	ctx, admin := t.Context(), env.Client(host, adminToken)
	var s seeded
	s.course = apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: title, Status: client.Ptr("published"),
		Public: client.Ptr(true), Summary: client.Ptr("A short course to try the frontend."), Tags: []string{"testing"}}))(t).ID
	s.lesson = apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: s.course, Title: "First steps"}))(t).ID
	rich := func(title, md string) int64 {
		return apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: s.lesson, Title: title,
			Topicable: richTextClass, Markdown: client.Ptr(md)}))(t).ID
	}
	s.reading = rich("Welcome", "# Welcome\n\nThis is the **first** topic. Read it to the end.")
	s.second = rich("Going further", "More text to read.")
	upload := func(title, class, name string, data []byte) int64 {
		return apitest.Must(admin.PostAdminTopicsMultipart(ctx, client.PostAdminTopicsForm{Lesson: s.lesson, Title: title,
			Topicable: class, File: &client.File{Name: name, Content: bytes.NewReader(data)}}))(t).ID
	}
	s.image = upload("A picture", `Lms\TopicTypes\Models\TopicContent\Image`, "dot.png", apitest.PNG(t))
	s.pdf = upload("A document", `Lms\TopicTypes\Models\TopicContent\PDF`, "doc.pdf",
		[]byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"))
	s.project = apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: s.lesson, Title: "Your project",
		Topicable: `Lms\TopicTypeProject\Models\Project`, Value: map[string]any{"instructions": "Upload a text file."}}))(t).ID
	return s
}

func id(n int64) string { return strconv.FormatInt(n, 10) }
