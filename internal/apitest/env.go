// Package apitest runs the real platform behind a real HTTP server on a
// real database (SQLite always, PostgreSQL when LMS_TEST_PG_URL is set) for
// scenario tests of the API.
package apitest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/clock"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/notify/smtptest"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/server"
	"github.com/lms-platform/lms/internal/sqldb"
)

// Env is one running platform with one tenant ready for scenarios.
type Env struct {
	T       testing.TB
	Backend string
	Server  *server.Server
	HTTP    *httptest.Server
	Clock   *clock.Fake
	SMTP    *smtptest.Server
	// Tenant is the default tenant, served at Host.
	Tenant platform.Record
	Host   string
	users  map[string]*User
}

// User is a user created for a test, with a token from a real login.
type User struct {
	ID       int64
	Email    string
	Password string
	Token    string
}

// Options change how an Env is built.
type Options struct {
	// Configure edits the configuration before the server is built.
	Configure func(*config.Config)
	// Log receives the server's log lines (JSON), for tests of logging.
	Log io.Writer
	// NoDispatch leaves recorded events undelivered (server.Options).
	NoDispatch bool
}

// Backends lists the databases the API suite runs on: sqlite always;
// postgres with LMS_TEST_PG_URL (a failure, not a skip, under CI=true).
func Backends(t testing.TB) []string {
	out := []string{"sqlite"}
	if os.Getenv("LMS_TEST_PG_URL") != "" {
		out = append(out, "postgres")
	} else if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but LMS_TEST_PG_URL is not set: the PostgreSQL suite must run in CI")
	}
	return out
}

// Each runs fn once per backend, each with its own Env.
func Each(t *testing.T, fn func(t *testing.T, env *Env)) {
	for _, b := range Backends(t) {
		t.Run(b, func(t *testing.T) {
			fn(t, New(t, b, Options{}))
		})
	}
}

// New starts a platform on the backend with a tenant at "school.test".
func New(t testing.TB, backend string, opts Options) *Env {
	t.Helper()
	ctx := context.Background()
	env := &Env{T: t, Backend: backend, Clock: clock.NewFake(time.Now()), SMTP: smtptest.Start(t),
		Host: "school.test", users: map[string]*User{}}
	cfg := &config.Config{
		DataDir:        t.TempDir(),
		PlatformHost:   "platform.test",
		AdminEmail:     "root@platform.test",
		AdminPass:      "platform-password",
		PasswordCost:   "test",
		SMTPURL:        env.SMTP.URL(),
		LogLevel:       "error",
		H5PCoreDir:     filepath.Join(fixtures.RepoRoot(), "node_modules", "h5p-standalone", "dist"),
		ScormPlayerDir: filepath.Join(fixtures.RepoRoot(), "node_modules", "scorm-again", "dist"),
		LiaScriptDir:   filepath.Join(fixtures.RepoRoot(), "node_modules", "@liascript", "editor", "dist"),
	}
	if backend == "postgres" {
		// The at-scale shape: PostgreSQL, with Redis and S3 when configured.
		cfg.DatabaseURL = postgresDatabase(t)
		cfg.RedisURL = os.Getenv("LMS_TEST_REDIS_URL")
		cfg.BlobURL = s3Prefix(t, os.Getenv("LMS_TEST_S3_URL"))
	}
	if opts.Configure != nil {
		opts.Configure(cfg)
	}
	var log *slog.Logger
	switch {
	case opts.Log != nil:
		log = slog.New(slog.NewJSONHandler(opts.Log, nil))
	case os.Getenv("LMS_TEST_LOG") != "":
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	default:
		log = failureLog(t)
	}
	// The platforms of a test process share their tenants' keys: each
	// would take a tenth of a second of CPU or more to generate.
	s, err := server.New(ctx, cfg, server.Options{Clock: env.Clock, Logger: log, NoDispatch: opts.NoDispatch,
		Registry: []platform.RegistryOption{platform.WithSharedKeys()}})
	if err != nil {
		t.Fatalf("apitest: start server: %v", err)
	}
	env.Server = s
	env.HTTP = httptest.NewServer(s.Handler)
	// The H5P service calls the API over HTTP; its address is known only now.
	s.H5P.API.SetBaseURL(env.HTTP.URL)
	t.Cleanup(func() {
		env.HTTP.Close()
		s.Close()
	})
	if _, _, err := s.EnsurePlatform(ctx); err != nil {
		t.Fatalf("apitest: platform tenant: %v", err)
	}
	env.Tenant = env.AddTenant(env.Host)
	return env
}

// postgresDatabase creates a platform database for one test and drops it,
// with every tenant database named after it, when the test ends.
func postgresDatabase(t testing.TB) string {
	serverURL := os.Getenv("LMS_TEST_PG_URL")
	b := make([]byte, 5)
	rand.Read(b)
	name := "lmstest_" + hex.EncodeToString(b)
	ctx := context.Background()
	if err := sqldb.CreateMigrated(ctx, serverURL, name, sqldb.PlatformSet); err != nil {
		t.Fatalf("apitest: %v", err)
	}
	t.Cleanup(func() {
		if err := sqldb.DropDatabasesLike(ctx, serverURL, name); err != nil {
			t.Logf("apitest: drop test databases: %v", err)
		}
	})
	u, err := sqldb.WithDatabase(serverURL, name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// s3Prefix gives a test its own prefix in the S3 test bucket, so parallel
// tests never see each other's files.
func s3Prefix(t testing.TB, raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("apitest: LMS_TEST_S3_URL: %v", err)
	}
	b := make([]byte, 5)
	rand.Read(b)
	u.Path = "/apitest-" + hex.EncodeToString(b)
	return u.String()
}

// AddTenant registers another tenant whose admin is admin@HOST with the
// password "admin-password".
func (e *Env) AddTenant(host string) platform.Record {
	e.T.Helper()
	rec, _, err := e.Server.AddTenant(context.Background(), server.NewTenant{Host: host, AdminEmail: "admin@" + host,
		AdminPassword: "admin-password"})
	if err != nil {
		e.T.Fatalf("apitest: add tenant %s: %v", host, err)
	}
	return rec
}

// As returns a logged-in user of the role on the default tenant, created
// on first use: "admin" is the tenant's first admin, "student" and "tutor"
// are created. "other-admin" is the admin of a second tenant.
func (e *Env) As(role string) *User {
	e.T.Helper()
	if u, ok := e.users[role]; ok {
		return u
	}
	var u *User
	switch role {
	case "admin":
		u = &User{Email: "admin@" + e.Host, Password: "admin-password"}
		u.Token, u.ID = e.Login(e.Host, u.Email, u.Password)
	case "other-admin":
		e.AddTenant("other.test")
		u = &User{Email: "admin@other.test", Password: "admin-password"}
		u.Token, u.ID = e.Login("other.test", u.Email, u.Password)
	default:
		u = e.NewUser(role)
	}
	e.users[role] = u
	return u
}

// NewUser creates a fresh verified user of the role and logs it in.
func (e *Env) NewUser(role string) *User {
	e.T.Helper()
	b := make([]byte, 4)
	rand.Read(b)
	u := &User{Email: role + "-" + hex.EncodeToString(b) + "@" + e.Host, Password: "secret-password"}
	if err := e.Server.AddUser(context.Background(), e.Tenant, u.Email, u.Password, role); err != nil {
		e.T.Fatalf("apitest: add %s: %v", role, err)
	}
	u.Token, u.ID = e.Login(e.Host, u.Email, u.Password)
	return u
}

// Login logs in through the API and returns the token and user id.
func (e *Env) Login(host, email, password string) (string, int64) {
	e.T.Helper()
	issued, err := e.Client(host, "").PostAuthLogin(context.Background(), client.LoginInputBody{Email: email, Password: password})
	if err != nil {
		e.T.Fatalf("apitest: login %s: %v", email, err)
	}
	rec, err := e.Server.Registry.ByHost(context.Background(), host)
	if err != nil {
		e.T.Fatal(err)
	}
	t, release := e.OpenTenant(rec)
	defer release()
	u, err := accounts.ByEmail(context.Background(), t.DB, email)
	if err != nil {
		e.T.Fatal(err)
	}
	return issued.Token, u.ID
}

// Client is the typed API client of the running server for the tenant at
// host ("": the default tenant), signed in with token ("": anonymous).
func (e *Env) Client(host, token string) *client.Client {
	if host == "" {
		host = e.Host
	}
	c, err := client.New(e.HTTP.URL, e.HTTP.Client())
	if err != nil {
		e.T.Fatal(err)
	}
	return c.WithHost(host).WithToken(token)
}

// Request is one HTTP request of a test.
type Request struct {
	Method  string
	Path    string
	Host    string // default: the default tenant's host
	Token   string
	Body    any // marshalled as JSON unless it is []byte or io.Reader
	Type    string
	Headers map[string]string
}

// Response is a parsed response.
type Response struct {
	Req    Request
	Status int
	Header http.Header
	Body   []byte
	JSON   any
}

// Do sends the request to the server and parses a JSON answer.
func (e *Env) Do(r Request) *Response {
	e.T.Helper()
	var body io.Reader
	ctype := r.Type
	switch b := r.Body.(type) {
	case nil:
	case []byte:
		body = bytes.NewReader(b)
	case string:
		body = strings.NewReader(b)
	case io.Reader:
		body = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		body = bytes.NewReader(raw)
		if ctype == "" {
			ctype = "application/json"
		}
	}
	req, err := http.NewRequest(r.Method, e.HTTP.URL+r.Path, body)
	if err != nil {
		e.T.Fatal(err)
	}
	req.Host = r.Host
	if req.Host == "" {
		req.Host = e.Host
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if r.Token != "" {
		req.Header.Set("Authorization", "Bearer "+r.Token)
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	res, err := e.HTTP.Client().Do(req)
	if err != nil {
		e.T.Fatalf("apitest: %s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	out := &Response{Req: r, Status: res.StatusCode, Header: res.Header}
	out.Body, _ = io.ReadAll(res.Body)
	// An encoded body (the request asked for gzip itself) stays as sent.
	encoded := res.Header.Get("Content-Encoding") != ""
	if strings.Contains(res.Header.Get("Content-Type"), "json") && len(out.Body) > 0 && !encoded {
		if err := json.Unmarshal(out.Body, &out.JSON); err != nil {
			e.T.Fatalf("apitest: %s %s: invalid JSON %q", r.Method, r.Path, out.Body)
		}
	}
	return out
}

// Get returns the value at a dotted path ("data.items.0.id"), or nil.
func (r *Response) Get(path string) any {
	return Lookup(r.JSON, path)
}

// String returns the string at path, or "".
func (r *Response) String(path string) string {
	s, _ := r.Get(path).(string)
	return s
}

// Number returns the number at path, or 0.
func (r *Response) Number(path string) float64 {
	n, _ := r.Get(path).(float64)
	return n
}

// EventNames lists the names of the tenant's recorded events after id.
func (e *Env) EventNames(afterID int64) []string {
	e.T.Helper()
	t, release, err := e.Server.Tenants.Get(context.Background(), e.Tenant)
	if err != nil {
		e.T.Fatal(err)
	}
	defer release()
	rows, err := t.DB.QueryContext(context.Background(), `SELECT name FROM events WHERE id > $1 ORDER BY id`, afterID)
	if err != nil {
		e.T.Fatal(err)
	}
	defer rows.Close()
	names := []string{}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	return names
}

// DeliverEvents delivers the default tenant's pending events to the
// listeners now, as the dispatcher does after a commit, so a test reads the
// reactions to a change without waiting for them.
func (e *Env) DeliverEvents() {
	e.T.Helper()
	t, release, err := e.Server.Tenants.Get(context.Background(), e.Tenant)
	if err != nil {
		e.T.Fatal(err)
	}
	defer release()
	Settle(e.T, e.Server, t)
}

// Settle delivers the tenant's events through s's dispatcher until none
// is left unmade or held. The server's own dispatcher may hold some of
// them under its lease, which DispatchPending skips, and listeners may
// record events of their own: Settle returns once every reaction has
// committed.
func Settle(tb testing.TB, s *server.Server, t *platform.Tenant) {
	tb.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := s.Dispatcher.DispatchPending(ctx, t); err != nil {
			tb.Fatal(err)
		}
		held, err := events.Unsettled(ctx, t.DB, s.Clock.Now())
		if err != nil {
			tb.Fatal(err)
		}
		if held == 0 {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%d event deliveries still held by the dispatcher", held)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// LastEventID is the id of the newest event of the default tenant.
func (e *Env) LastEventID() int64 {
	e.T.Helper()
	t, release, err := e.Server.Tenants.Get(context.Background(), e.Tenant)
	if err != nil {
		e.T.Fatal(err)
	}
	defer release()
	var id int64
	t.DB.QueryRowContext(context.Background(), `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&id)
	return id
}

// Tenant opens a tenant for direct checks of stored state.
func (e *Env) OpenTenant(rec platform.Record) (*platform.Tenant, func()) {
	e.T.Helper()
	t, release, err := e.Server.Tenants.Get(context.Background(), rec)
	if err != nil {
		e.T.Fatal(err)
	}
	return t, release
}

// failureLog keeps the server's warnings and errors and prints them when
// the test fails, so a 500 seen in CI comes with its cause.
func failureLog(t testing.TB) *slog.Logger {
	var mu sync.Mutex
	var kept bytes.Buffer
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		if kept.Len() < 64<<10 {
			kept.Write(p)
		}
		return len(p), nil
	})
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() && kept.Len() > 0 {
			t.Logf("server log (warnings and errors):\n%s", kept.String())
		}
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
