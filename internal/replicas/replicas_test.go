// Package replicas_test proves that `lms serve` scales out: two replicas
// of the built binary share one PostgreSQL server, one Redis and one S3
// bucket behind a round-robin proxy, and one of them is killed under load.
package replicas_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/client"
	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/fixtures"
	"github.com/lms-platform/lms/internal/jobs"
	"github.com/lms-platform/lms/internal/sqldb"
)

// The test's schedule for every job of a tenant, short enough for many
// periods in one run, and how often each replica looks for due jobs and
// pending events.
const (
	jobSchedule = "@every 2s"
	jobsPoll    = "300ms"
	eventsPoll  = "20ms"
)

// tenantJobs are the scheduled jobs every tenant runs.
var tenantJobs = []string{"course-deadline-check", "course-access-expiry", "course-activation", "h5p-temp-sweep"}

// backends are the shared services of the replicas, from the test
// environment: the test skips without them, and fails under CI=true.
type backends struct{ pg, redis, s3 string }

func needBackends(t *testing.T) backends {
	b := backends{os.Getenv("LMS_TEST_PG_URL"), os.Getenv("LMS_TEST_REDIS_URL"), os.Getenv("LMS_TEST_S3_URL")}
	var missing []string
	for name, v := range map[string]string{"LMS_TEST_PG_URL": b.pg, "LMS_TEST_REDIS_URL": b.redis, "LMS_TEST_S3_URL": b.s3} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		msg := "two replicas need PostgreSQL, Redis and S3; not set: " + strings.Join(missing, ", ") +
			" (.ci/start-s3 starts an S3 server)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return b
}

// cluster is the configuration the replicas and the operator commands
// share: the same databases, Redis, bucket prefix and master key.
type cluster struct {
	bin   string
	env   []string
	pgURL string // the platform database
	dir   string
}

func newCluster(t *testing.T, b backends) *cluster {
	ctx := context.Background()
	dir := t.TempDir()
	bin := filepath.Join(dir, "lms")
	build := exec.Command("go", "build", "-o", bin, "./cmd/lms")
	build.Dir = fixtures.RepoRoot()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	name := "lmsreplicas_" + strings.ToLower(rand.Text()[:10])
	if err := sqldb.CreateMigrated(ctx, b.pg, name, sqldb.PlatformSet); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sqldb.DropDatabasesLike(context.Background(), b.pg, name); err != nil {
			t.Logf("drop test databases: %v", err)
		}
	})
	pgURL, err := sqldb.WithDatabase(b.pg, name)
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	rand.Read(key)
	env := []string{
		"LMS_DATABASE_URL=" + pgURL,
		"LMS_MASTER_KEY=" + base64.StdEncoding.EncodeToString(key),
		"LMS_PLATFORM_HOST=platform.test",
		"LMS_ADMIN_EMAIL=root@platform.test",
		"LMS_ADMIN_PASSWORD=platform-password",
		"LMS_PASSWORD_COST=test",
		"LMS_WEB_ADDR=127.0.0.1:0", "LMS_CONTENT_ADDR=127.0.0.1:0",
		"LMS_LOG_LEVEL=info",
		"LMS_JOBS_POLL=" + jobsPoll,
		// Both replicas look for pending events all the time, so without
		// claims they would deliver the same events.
		"LMS_EVENTS_POLL=" + eventsPoll,
		// A killed replica's deliveries go to the other one after this.
		"LMS_EVENTS_LEASE=3s",
		"LMS_JOB_SCHEDULES=" + strings.Join(scheduleEntries(), ";"),
	}
	// One replica alone (pingkill_test.go) needs neither Redis nor S3: its
	// files then go to a data directory of the test's own.
	if b.redis != "" {
		env = append(env, "LMS_REDIS_URL="+ownRedisDatabase(t, b.redis))
	}
	if b.s3 != "" {
		s3, err := url.Parse(b.s3)
		if err != nil {
			t.Fatal(err)
		}
		s3.Path = "/replicas-" + strings.ToLower(rand.Text()[:10])
		env = append(env, "LMS_BLOB_URL="+s3.String())
	} else {
		env = append(env, "LMS_DATA_DIR="+filepath.Join(dir, "data"))
	}
	// The replicas get nothing of this process's LMS_ settings.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "LMS_") && !strings.HasPrefix(kv, "DEMO_") {
			env = append(env, kv)
		}
	}
	return &cluster{bin: bin, env: env, pgURL: pgURL, dir: dir}
}

func scheduleEntries() []string {
	var out []string
	for _, j := range tenantJobs {
		out = append(out, j+"="+jobSchedule)
	}
	return out
}

// ownRedisDatabase gives the test a Redis database of its own, emptied:
// every fresh platform numbers its tenants from 1, and the cache keys
// tenant data by that number, so tests sharing a database would read each
// other's entries.
func ownRedisDatabase(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/13"
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return u.String()
}

// lms runs an operator command with the cluster's configuration.
func (c *cluster) lms(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Env = c.env
	// Only standard output is the command's answer: its log goes to
	// standard error, shown when the command fails.
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lms %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Logf("lms %s logged:\n%s", strings.Join(args, " "), stderr.String())
	}
	return string(out)
}

// replica is one running `lms serve`.
type replica struct {
	name string
	url  *url.URL
	log  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has ended, with err set
	err  error
}

// start runs a replica on a free port of 127.0.0.1 and waits until it
// serves, for 60 seconds at most.
func (c *cluster) start(t *testing.T, name string) *replica {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r := &replica{name: name, url: &url.URL{Scheme: "http", Host: addr}, log: filepath.Join(c.dir, name+".log"),
		done: make(chan struct{})}
	logFile, err := os.Create(r.log)
	if err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(c.bin, "serve")
	r.cmd.Env = append([]string{"LMS_API_ADDR=" + addr}, c.env...)
	r.cmd.Stdout, r.cmd.Stderr = logFile, logFile
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		r.err = r.cmd.Wait()
		logFile.Close()
		close(r.done)
	}()
	t.Cleanup(func() { r.stop(t) })
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, _ := http.NewRequest("GET", r.url.String()+"/api/healthcheck", nil)
		req.Host = "platform.test"
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return r
			}
		}
		select {
		case <-r.done:
			t.Fatalf("replica %s exited: %v\n%s", name, r.err, readFile(t, r.log))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s did not serve within a minute\n%s", name, readFile(t, r.log))
		}
	}
}

// kill ends the replica with SIGKILL: no shutdown, no cleanup.
func (r *replica) kill(t *testing.T) {
	if err := r.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-r.done
}

// stop ends the replica gracefully unless it is gone already.
func (r *replica) stop(t *testing.T) {
	select {
	case <-r.done:
		return
	default:
	}
	r.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-r.done:
	case <-time.After(20 * time.Second):
		r.cmd.Process.Kill()
		<-r.done
	}
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// proxy is a round-robin reverse proxy over the replicas. A replica that
// refuses connections is taken out of the rotation, as a load balancer's
// passive health check does; the request that found it gone answers 502.
type proxy struct {
	replicas []*replica
	handlers []*httputil.ReverseProxy
	down     []atomic.Bool
	served   []atomic.Int64 // 2xx answers per replica
	next     atomic.Uint64
}

func newProxy(replicas ...*replica) *proxy {
	p := &proxy{replicas: replicas, down: make([]atomic.Bool, len(replicas)), served: make([]atomic.Int64, len(replicas))}
	for i, r := range replicas {
		p.handlers = append(p.handlers, &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(r.url)
				pr.Out.Host = pr.In.Host // the tenant is chosen by the Host header
			},
			ModifyResponse: func(res *http.Response) error {
				if res.StatusCode < 300 {
					p.served[i].Add(1)
				}
				return nil
			},
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				if errors.Is(err, syscall.ECONNREFUSED) {
					p.down[i].Store(true)
				}
				w.WriteHeader(http.StatusBadGateway)
			},
		})
	}
	return p
}

func (p *proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := uint64(len(p.replicas))
	for range n {
		i := p.next.Add(1) % n
		if !p.down[i].Load() {
			p.handlers[i].ServeHTTP(w, r)
			return
		}
	}
	http.Error(w, "no replica is up", http.StatusBadGateway)
}

// TestTwoReplicas runs the API through two replicas, kills one of them
// under load, and checks what must hold on a scaled-out deployment: no
// acknowledged write is lost, every event is delivered once with one
// notification per user, every scheduled job runs once per period, and
// rate limits count across replicas.
func TestTwoReplicas(t *testing.T) {
	c := newCluster(t, needBackends(t))
	// The first replica creates the platform tenant; the second joins it.
	a := c.start(t, "a")
	b := c.start(t, "b")
	p := newProxy(a, b)
	front := httptest.NewServer(p)
	t.Cleanup(front.Close)

	host := "school-" + strings.ToLower(rand.Text()[:8]) + ".test"
	c.lms(t, "tenant", "add", "--host", host, "--admin-email", "admin@"+host, "--admin-password", "admin-password")
	env := &apitest.Env{T: t, HTTP: front, Host: host}

	sc := setUp(t, env)
	checkSharedRateLimit(t, env)
	var killed time.Time
	acked := runLoad(t, env, sc, func() {
		b.kill(t)
		killed = time.Now()
	})
	for i, r := range p.replicas {
		t.Logf("replica %s answered %d requests with 2xx", r.name, p.served[i].Load())
		if p.served[i].Load() == 0 {
			t.Errorf("replica %s served nothing: the proxy did not share the load", r.name)
		}
	}
	checkWrites(t, env, sc, acked)

	tenant, db := tenantDB(t, c, host)
	checkEvents(t, env, sc, db)
	checkJobs(t, db, tenant, []*replica{a, b}, killed)
}

// scenario is what the set-up created: an admin, learners assigned to a
// course of rich-text topics, and a PDF topic stored in S3.
type scenario struct {
	admin    *client.Client
	course   int64
	topics   []int64
	learners []learner
}

// learner is a learner's id and client.
type learner struct {
	id int64
	c  *client.Client
}

const topicCount = 10

func setUp(t *testing.T, env *apitest.Env) *scenario {
	ctx := t.Context()
	admin := env.Client("", login(t, env, "admin@"+env.Host, "admin-password"))
	sc := &scenario{admin: admin}
	for i := range 4 {
		email, password := fmt.Sprintf("learner%d@%s", i, env.Host), "learner-password"
		u := apitest.Must(admin.PostAdminUsers(ctx, client.CreateUserInputBody{Email: email, Password: client.Ptr(password),
			FirstName: "Learner", LastName: strconv.Itoa(i), EmailVerified: client.Ptr(true)}))(t)
		sc.learners = append(sc.learners, learner{id: u.ID, c: env.Client("", login(t, env, email, password))})
	}
	sc.course = apitest.Must(admin.PostAdminCourses(ctx, client.CourseBody{Title: "Replicated", Status: client.Ptr("published")}))(t).ID
	lesson := apitest.Must(admin.PostAdminLessons(ctx, client.CreateLessonInputBody{CourseID: sc.course, Title: "Everything"}))(t).ID
	for i := range topicCount {
		sc.topics = append(sc.topics, apitest.Must(admin.PostAdminTopics(ctx, client.PostAdminTopicsBody{Lesson: lesson,
			Title: fmt.Sprintf("Topic %d", i), Topicable: `Lms\TopicTypes\Models\TopicContent\RichText`,
			Markdown: client.Ptr(fmt.Sprintf("Topic %d", i))}))(t).ID)
	}
	checkSharedFiles(t, env, admin, lesson)
	var users []client.GrantBody
	for _, u := range sc.learners {
		users = append(users, client.GrantBody{ID: u.id})
	}
	apitest.Must(admin.PostAdminCoursesIDAccess(ctx, sc.course, client.AssignInputBody{Users: users}))(t)
	return sc
}

func login(t *testing.T, env *apitest.Env, email, password string) string {
	t.Helper()
	return apitest.Must(env.Client("", "").PostAuthLogin(t.Context(), client.LoginInputBody{Email: email, Password: password}))(t).Token
}

// checkSharedFiles uploads a PDF topic through one replica and reads its
// file through both: files live in S3, not on a replica's disk.
func checkSharedFiles(t *testing.T, env *apitest.Env, admin *client.Client, lesson int64) {
	pdf := []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n")
	topic := apitest.Must(admin.PostAdminTopicsMultipart(t.Context(), client.PostAdminTopicsForm{Lesson: lesson, Title: "Notes",
		Topicable: `Lms\TopicTypes\Models\TopicContent\PDF`, File: &client.File{Name: "notes.pdf", Content: bytes.NewReader(pdf)}}))(t)
	fileURL, _ := topic.Topicable.(map[string]any)["url"].(string)
	link, err := url.Parse(fileURL)
	if err != nil || link.Path == "" {
		t.Fatalf("PDF topic has no file link: %+v", topic.Topicable)
	}
	for range 2 { // one read per replica
		got := env.Do(apitest.Request{Method: "GET", Path: link.RequestURI()})
		if got.Status != 200 || !bytes.Equal(got.Body, pdf) {
			t.Fatalf("reading the PDF through the proxy: %d, %d bytes", got.Status, len(got.Body))
		}
	}
}

// checkSharedRateLimit sends GET /api/name (60 a minute per address)
// through the proxy, which alternates replicas: the count goes down by one
// per request whichever replica answers, and the 61st request of the
// minute answers 429. A new minute starts the count again.
func checkSharedRateLimit(t *testing.T, env *apitest.Env) {
	const limit = 60
	used := 0 // requests counted in the current minute
	for range 2 * (limit + 1) {
		res := env.Do(apitest.Request{Method: "GET", Path: "/api/name"})
		remaining, _ := strconv.Atoi(res.Header.Get("X-RateLimit-Remaining"))
		switch {
		case res.Status == 429 && used == limit:
			return
		case res.Status == 200 && remaining == limit-used-1:
			used++
		case res.Status == 200 && remaining == limit-1 && used > 0:
			used = 1 // the minute turned
		default:
			t.Fatalf("after %d requests: status %d, %d remaining; the replicas do not share the count",
				used, res.Status, remaining)
		}
	}
	t.Fatal("no request was refused")
}

// acked holds the writes that were answered 2xx: courses by id with their
// titles, and the topics each learner completed.
type acked struct {
	mu       sync.Mutex
	courses  map[int64]string
	complete map[int64][]int64
}

// runLoad runs learners writing progress and reading notifications, and an
// admin creating courses, through the proxy; once half of the writes are
// acknowledged it calls kill. Every loop is bounded by its count.
func runLoad(t *testing.T, env *apitest.Env, sc *scenario, kill func()) *acked {
	const newCourses = 20
	total := int64(len(sc.learners)*topicCount + newCourses)
	ack := &acked{courses: map[int64]string{}, complete: map[int64][]int64{}}
	var writes, failed atomic.Int64
	half := make(chan struct{})
	var once sync.Once
	acknowledged := func() {
		if writes.Add(1) >= total/2 {
			once.Do(func() { close(half) })
		}
	}
	// A write that failed is tried again, three times at most: the writes
	// are idempotent or create a new row, and a failure is not an answer.
	try := func(write func(ctx context.Context) error) bool {
		for range 3 {
			if write(context.Background()) == nil {
				acknowledged()
				return true
			}
			failed.Add(1)
		}
		return false
	}
	var wg sync.WaitGroup
	for _, u := range sc.learners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, topic := range sc.topics {
				if try(func(ctx context.Context) error {
					_, err := u.c.PatchCoursesProgressID(ctx, sc.course, client.WriteInputBody{
						Progress: []client.ProgressWrite{{TopicID: topic, Status: 1}}})
					return err
				}) {
					ack.mu.Lock()
					ack.complete[u.id] = append(ack.complete[u.id], topic)
					ack.mu.Unlock()
				}
				// Reads add load; an answer lost to the kill is no loss.
				u.c.GetNotifications(context.Background(), client.GetNotificationsParams{})
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range newCourses {
			title := fmt.Sprintf("Load course %d", i)
			var id int64
			if try(func(ctx context.Context) error {
				course, err := sc.admin.PostAdminCourses(ctx, client.CourseBody{Title: title})
				if err == nil {
					id = course.ID
				}
				return err
			}) {
				ack.mu.Lock()
				ack.courses[id] = title
				ack.mu.Unlock()
			}
		}
	}()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-half:
		kill()
	case <-done:
		t.Fatal("the load ended before half of its writes were acknowledged")
	}
	<-done
	if n := writes.Load(); n < total/2 {
		t.Fatalf("%d of %d writes acknowledged", n, total)
	}
	t.Logf("%d of %d writes acknowledged; %d attempts failed and were tried again", writes.Load(), total, failed.Load())
	return ack
}

// checkWrites reads every acknowledged write back through the proxy.
func checkWrites(t *testing.T, env *apitest.Env, sc *scenario, ack *acked) {
	ctx := t.Context()
	for id, title := range ack.courses {
		if got := apitest.Must(sc.admin.GetAdminCoursesID(ctx, id))(t).Title; got != title {
			t.Errorf("course %d: title %q, want %q", id, got, title)
		}
	}
	for _, u := range sc.learners {
		status := map[int64]int64{}
		for _, p := range apitest.Must(u.c.GetCoursesProgressID(ctx, sc.course))(t).Topics {
			status[p.TopicID] = p.Status
		}
		for _, topic := range ack.complete[u.id] {
			if status[topic] != 1 {
				t.Errorf("learner %d: topic %d acknowledged complete, now status %d", u.id, topic, status[topic])
			}
		}
	}
}

// tenantDB opens the tenant's database, found as an operator finds it for
// a backup: in `lms tenant list --json`.
func tenantDB(t *testing.T, c *cluster, host string) (id int64, db *sqldb.DB) {
	var list []struct {
		ID       int64    `json:"id"`
		Hosts    []string `json:"hosts"`
		Database string   `json:"database"`
	}
	if err := json.Unmarshal([]byte(c.lms(t, "tenant", "list", "--json")), &list); err != nil {
		t.Fatal(err)
	}
	for _, rec := range list {
		if slices.Contains(rec.Hosts, host) {
			loc, err := sqldb.WithDatabase(c.pgURL, rec.Database)
			if err != nil {
				t.Fatal(err)
			}
			if db, err = sqldb.OpenPostgres(context.Background(), loc); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			return rec.ID, db
		}
	}
	t.Fatalf("tenant list has no %s", host)
	return 0, nil
}

func count(t *testing.T, db *sqldb.DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// checkEvents waits, 30 seconds at most, until the surviving replica has
// delivered every event, the killed one's included, then checks that each
// was delivered by one replica once (a delivery counts as an attempt) and
// left exactly one notification for its user, through the API too.
func checkEvents(t *testing.T, env *apitest.Env, sc *scenario, db *sqldb.DB) {
	deadline := time.Now().Add(30 * time.Second)
	for count(t, db, `SELECT COUNT(*) FROM events WHERE dispatched_at IS NULL`)+
		count(t, db, `SELECT COUNT(*) FROM event_deliveries WHERE state <> 'delivered'`) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("events left undelivered after the replica was killed")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM events`); n < len(sc.learners)*topicCount {
		t.Fatalf("%d events recorded", n)
	}
	t.Logf("%d events, %d notifications", count(t, db, `SELECT COUNT(*) FROM events`),
		count(t, db, `SELECT COUNT(*) FROM notifications`))
	if n := count(t, db, `SELECT COUNT(*) FROM event_deliveries WHERE attempts <> 1`); n > 0 {
		t.Errorf("%d event deliveries were run more than once", n)
	}
	if n := count(t, db, `SELECT COUNT(*) FROM events e WHERE e.user_id IS NOT NULL AND
		(SELECT COUNT(*) FROM notifications n WHERE n.event_id = e.id AND n.user_id = e.user_id) <> 1`); n > 0 {
		t.Errorf("%d events have no notification or more than one", n)
	}
	for _, u := range sc.learners {
		want := count(t, db, `SELECT COUNT(*) FROM events WHERE user_id = $1`, u.id)
		got := apitest.Must(u.c.GetNotifications(t.Context(), client.GetNotificationsParams{PerPage: client.Ptr(int64(1))}))(t).Meta.Total
		if got != want {
			t.Errorf("learner %d has %d notifications for %d events", u.id, got, want)
		}
	}
}

// jobRun is one "scheduled job ran" line of a replica's log.
type jobRun struct {
	Msg    string    `json:"msg"`
	Tenant int64     `json:"tenant"`
	Job    string    `json:"job"`
	At     time.Time `json:"at"`
}

// loggedRuns reads the runs of the tenant's jobs from the replicas' logs,
// in time order per job.
func loggedRuns(t *testing.T, replicas []*replica, tenant int64) map[string][]time.Time {
	out := map[string][]time.Time{}
	for _, r := range replicas {
		f, err := os.Open(r.log)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var run jobRun
			if json.Unmarshal(sc.Bytes(), &run) == nil && run.Msg == "scheduled job ran" && run.Tenant == tenant {
				out[run.Job] = append(out[run.Job], run.At)
			}
		}
		f.Close()
	}
	for _, runs := range out {
		slices.SortFunc(runs, time.Time.Compare)
	}
	return out
}

// checkJobs checks the runs of every job of the tenant on both replicas'
// logs: no run comes before the schedule's next time after the previous
// one (two replicas running one period would), each job ran after the kill
// on the survivor, and job_runs holds the latest logged run. It waits 30
// seconds at most for the runs after the kill.
func checkJobs(t *testing.T, db *sqldb.DB, tenant int64, replicas []*replica, killed time.Time) {
	sched, err := jobs.Cron(jobSchedule)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var runs map[string][]time.Time
	for {
		runs = loggedRuns(t, replicas, tenant)
		ready := true
		for _, j := range tenantJobs {
			rs := runs[j]
			ready = ready && len(rs) >= 2 && rs[len(rs)-1].After(killed) && inJobRuns(t, db, j, rs)
		}
		if ready {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not run on the surviving replica, or job_runs disagrees with the logs: %v", runs)
		}
		time.Sleep(300 * time.Millisecond)
	}
	for _, j := range tenantJobs {
		rs := runs[j]
		t.Logf("%s ran %d times", j, len(rs))
		for i := 1; i < len(rs); i++ {
			if next := sched.Next(rs[i-1]); rs[i].Before(next) {
				t.Errorf("%s ran at %s and again at %s, before its next time %s", j, rs[i-1], rs[i], next)
			}
		}
	}
}

// inJobRuns reports whether job_runs records one of the logged runs as
// the job's last (PostgreSQL keeps microseconds).
func inJobRuns(t *testing.T, db *sqldb.DB, job string, logged []time.Time) bool {
	last, err := jobs.LastRun(context.Background(), db, job)
	if err != nil {
		t.Fatal(err)
	}
	return last != nil && logged[len(logged)-1].Truncate(time.Microsecond).Equal(last.Truncate(time.Microsecond))
}
