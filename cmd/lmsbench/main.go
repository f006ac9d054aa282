// Command lmsbench is the load run of `make bench`: it starts the platform
// in a temporary directory (SQLite, or PostgreSQL with -database), prepares
// the data of each scenario and measures requests per second and latency
// percentiles over keep-alive connections, load generator included.
//
// Right before each scenario it measures a plain net/http hello-world
// server with the same load generator, connections and duration, and
// prints the scenario as a ratio to it beside the absolute figures: on a
// shared or noisy machine the ratio is what compares between runs. The
// goals are ratios.
//
// Scenarios (-scenario, several separated by commas):
//
//	profile    GET /api/profile/me as the platform admin (the default);
//	           with -binary it also measures how long `lms serve` takes to
//	           serve its first request and its resident memory when idle
//	program    GET /api/courses/{course}/program of a 20-lesson × 10-topic
//	           course, as an assigned learner with some progress
//	catalogue  GET /api/courses, anonymous, on a catalogue of 30 courses
//	ping       PUT /api/courses/progress/{topic_id}/ping from 500 learners,
//	           then a check that no learner lost a second
//	tenants    the resident memory of `lms serve` (-binary) with -tenants
//	           tenants, each touched once by a request
//	quiz-start -learners learners (a class each round) start one timed
//	           GIFT quiz of 16 questions within a second, answer every
//	           question after a think time (-think) and end, against
//	           `lms serve` (-binary): one replica, or -replicas of them on
//	           PostgreSQL (-database) and Redis (-redis) behind a
//	           round-robin proxy; latency percentiles of starts, answers
//	           and ends, errors and the replicas' peak RSS
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/server"
	"github.com/lms-platform/lms/internal/sqldb"
)

// goals are the floors for each scenario, as a share of the
// hello-world rate measured in the same run; sqliteGoals raise some of
// them on SQLite, where a read costs no round trip to a server.
var (
	goals       = map[string]float64{"profile": 0.25, "program": 0.20, "catalogue": 0.20, "ping": 0.10}
	sqliteGoals = map[string]float64{"program": 0.25}
)

func goalOf(name, database string) float64 {
	if g, ok := sqliteGoals[name]; ok && database == "" {
		return g
	}
	return goals[name]
}

var scenarios = map[string]func(*bench) error{"profile": profileRun, "program": programRun,
	"catalogue": catalogueRun, "ping": pingRun}

func main() {
	scenario := flag.String("scenario", "profile", "what to load, comma-separated: profile, program, catalogue, ping, tenants, quiz-start")
	conns := flag.Int("c", 64, "concurrent connections")
	dur := flag.Duration("d", 10*time.Second, "duration of each load run")
	database := flag.String("database", "", "PostgreSQL server URL to run on (a database is created and dropped); empty: SQLite")
	binary := flag.String("binary", "bin/lms", "lms binary for the start-up and memory runs (empty: skip them)")
	tenants := flag.Int("tenants", 1000, "tenants of the tenants scenario")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the load runs (server and load generator) to this file")
	learners := flag.String("learners", "2000", "quiz-start: learners of each round, comma-separated (e.g. 1000,2000,3000)")
	replicas := flag.Int("replicas", 1, "quiz-start: lms serve replicas (more than one needs -database and -redis)")
	redisURL := flag.String("redis", "", "quiz-start: Redis server URL the replicas share (its database 12 is emptied)")
	think := flag.Duration("think", time.Second, "quiz-start: mean think time before each answer")
	pingers := flag.Int("pingers", 0, "quiz-start: learners pinging a reading of the course through each round (the quiz takers among them); 0: none")
	pingEvery := flag.Duration("ping-every", 30*time.Second, "quiz-start: how often each of -pingers pings")
	hold := flag.Bool("hold", false, "instead of loading a scenario, print a wrk command for it and serve until standard input closes (to measure from outside)")
	flag.Parse()
	// Like wrk, the load sends only the headers a scenario sets and counts
	// an answer's bytes without decoding them.
	ld := &loader{conns: *conns, dur: *dur, hold: *hold,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns,
			DisableCompression: true}}}
	counts, err := parseCounts(*learners)
	if err != nil {
		fmt.Fprintln(os.Stderr, "lmsbench:", err)
		os.Exit(2)
	}
	qs := quizStart{binary: *binary, database: *database, redis: *redisURL, learners: counts, replicas: *replicas,
		think: *think, pingers: *pingers, pingEvery: *pingEvery, hello: func() (float64, error) { ld.hello = 0; return helloRun(ld) }}
	if err := run(strings.Split(*scenario, ","), ld, *database, *binary, *tenants, *cpuProfile, qs); err != nil {
		fmt.Fprintln(os.Stderr, "lmsbench:", err)
		os.Exit(1)
	}
}

func run(names []string, ld *loader, database, binary string, tenants int, cpuProfile string, qs quizStart) error {
	for _, name := range names {
		if scenarios[name] == nil && name != "tenants" && name != "quiz-start" {
			return fmt.Errorf("unknown scenario %q (profile, program, catalogue, ping, tenants, quiz-start)", name)
		}
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	for _, name := range names {
		var err error
		switch {
		case name == "tenants":
			if binary != "" {
				err = tenantsRun(binary, tenants)
			}
		case name == "quiz-start":
			err = quizStartRun(qs)
		default:
			// The hello-world is measured again right before each scenario,
			// so that the load of a shared machine weighs on both alike.
			ld.hello = 0
			if !ld.hold {
				if ld.hello, err = helloRun(ld); err != nil {
					return err
				}
			}
			ld.goal = goalOf(name, database)
			err = withBench(database, ld, scenarios[name])
			if err == nil && name == "profile" && binary != "" {
				err = processRun(binary)
			}
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// loader sends the load of a run and prints its figures.
type loader struct {
	client *http.Client
	conns  int
	dur    time.Duration
	// hello is the hello-world rate of this run (0 while measuring it) and
	// goal the share of it the scenario under way should reach.
	hello float64
	goal  float64
	// hold hands the prepared scenario to an outside load generator.
	hold bool
}

// helloRun measures a plain net/http server answering a fixed body: the
// ceiling of this machine, Go's HTTP stack and this load generator.
func helloRun(ld *loader) (float64, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "Hello, world!\n")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/"
	return ld.load("plain net/http hello-world", "", func(int, int) *http.Request {
		req, _ := http.NewRequest("GET", base, nil)
		return req
	})
}

// bench is a running platform under load.
type bench struct {
	*loader
	s       *server.Server
	rec     platform.Record // the platform tenant, served at localhost
	base    string
	backend string
}

func withBench(database string, ld *loader, run func(*bench) error) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "lmsbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := benchConfig(dir)
	backend := "SQLite"
	if database != "" {
		url, drop, err := scratchDatabase(ctx, database)
		if err != nil {
			return err
		}
		defer drop()
		cfg.DatabaseURL, backend = url, "PostgreSQL"
	}
	s, err := server.New(ctx, cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer s.Close()
	rec, _, err := s.EnsurePlatform(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s.Handler}
	go srv.Serve(ln)
	defer srv.Close()
	return run(&bench{loader: ld, s: s, rec: rec, base: "http://" + ln.Addr().String(), backend: backend})
}

func benchConfig(dir string) *config.Config {
	return &config.Config{DataDir: dir, PlatformHost: "localhost", AdminEmail: "admin@localhost",
		AdminPass: "bench-password", PasswordCost: "test", LogLevel: "error"}
}

// scratchDatabase creates a database for one run on the server of url and
// returns its URL and a function dropping it with the tenants' databases.
func scratchDatabase(ctx context.Context, url string) (string, func(), error) {
	buf := make([]byte, 4)
	rand.Read(buf)
	name := "lmsbench_" + hex.EncodeToString(buf)
	if err := sqldb.CreateMigrated(ctx, url, name, sqldb.PlatformSet); err != nil {
		return "", nil, err
	}
	drop := func() { sqldb.DropDatabasesLike(ctx, url, name) }
	full, err := sqldb.WithDatabase(url, name)
	if err == nil {
		noteAutovacuum(ctx, full)
	}
	return full, drop, err
}

// noteAutovacuum says when the server does not vacuum on its own (a CI
// server may be set so): then every row a run updates or deletes leaves a
// dead version that its indexes keep, and queues (events, deliveries) get
// slower through the run than on a server that vacuums.
func noteAutovacuum(ctx context.Context, url string) {
	db, err := sqldb.Open(ctx, url)
	if err != nil {
		return
	}
	defer db.Close()
	var on string
	if db.QueryRowContext(ctx, `SHOW autovacuum`).Scan(&on) == nil && on != "on" {
		fmt.Println("note: this PostgreSQL server's autovacuum is off: what a run updates stays as dead rows until it ends")
	}
}

// load sends requests from ld.conns connections for ld.dur; next makes the
// i-th request of connection c. It prints the rate, its ratio to the
// hello-world rate and the latency percentiles, and returns the rate.
func (ld *loader) load(title, backend string, next func(c, i int) *http.Request) (float64, error) {
	if ld.hold {
		return 0, holdFor(title, next)
	}
	var mu sync.Mutex
	var all []time.Duration
	var failures atomic.Int64
	var firstFailure atomic.Value
	deadline := time.Now().Add(ld.dur)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range ld.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; time.Now().Before(deadline); i++ {
				req := next(c, i)
				t0 := time.Now()
				res, err := ld.client.Do(req)
				if err != nil {
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, err.Error())
					continue
				}
				if res.StatusCode == http.StatusOK {
					io.Copy(io.Discard, res.Body)
				} else {
					body, _ := io.ReadAll(res.Body)
					failures.Add(1)
					firstFailure.CompareAndSwap(nil, fmt.Sprintf("%d %s", res.StatusCode, body))
				}
				res.Body.Close()
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(float64(len(all))*p))]
	}
	rate := float64(len(all)) / elapsed.Seconds()
	where := ""
	if backend != "" {
		where = backend + ", "
	}
	fmt.Printf("%s (%s%d connections, %s): %.0f requests/s, %d failed\n",
		title, where, ld.conns, ld.dur, rate, failures.Load())
	if ld.hello > 0 {
		verdict := "met"
		if rate < ld.goal*ld.hello {
			verdict = "NOT met"
		}
		fmt.Printf("  %.1f%% of hello-world (%.0f requests/s); goal ≥ %.0f%%: %s\n",
			100*rate/ld.hello, ld.hello, 100*ld.goal, verdict)
	}
	fmt.Printf("  latency p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), pct(1))
	if n := failures.Load(); n > 0 {
		return rate, fmt.Errorf("%d requests failed; first: %v", n, firstFailure.Load())
	}
	return rate, nil
}

// holdFor prints a wrk command sending req and waits for standard input
// to close. A GET is sent as is; a scenario that writes varies its
// requests (next(0, i) for i below holdRequests), so wrk sends them in
// turn through a Lua script written for it.
func holdFor(title string, next func(c, i int) *http.Request) error {
	req := next(0, 0)
	cmd := "wrk -H 'Host: " + req.Host + "'"
	if req.Method == http.MethodGet {
		for _, h := range []string{"Accept-Encoding", "Authorization"} {
			if v := req.Header.Get(h); v != "" {
				cmd += fmt.Sprintf(" -H '%s: %s'", h, v)
			}
		}
	} else {
		script, err := wrkScript(req, next)
		if err != nil {
			return err
		}
		defer os.Remove(script)
		cmd += " -s " + script
	}
	fmt.Printf("%s: serving; load it with\n%s %s\n", title, cmd, req.URL)
	io.Copy(io.Discard, os.Stdin)
	return nil
}

// holdRequests is how many distinct requests a held writing scenario
// cycles through (the ping scenario's learners).
const holdRequests = pingLearners

// wrkScript writes a wrk Lua script cycling through holdRequests
// requests, the first being first.
func wrkScript(first *http.Request, next func(c, i int) *http.Request) (string, error) {
	var lua strings.Builder
	lua.WriteString("local all = {}\nlocal n = 0\nfunction init(args)\n")
	for i := range holdRequests {
		req := first
		if i > 0 {
			req = next(0, i)
		}
		body := ""
		if req.Body != nil {
			raw, err := io.ReadAll(req.Body)
			if err != nil {
				return "", err
			}
			body = string(raw)
		}
		headers := fmt.Sprintf("[%q] = %q", "Host", req.Host)
		for _, name := range []string{"Authorization", "Content-Type"} {
			if v := req.Header.Get(name); v != "" {
				headers += fmt.Sprintf(", [%q] = %q", name, v)
			}
		}
		fmt.Fprintf(&lua, "  all[%d] = wrk.format(%q, %q, {%s}, %q)\n", i+1, req.Method, req.URL.RequestURI(), headers, body)
	}
	lua.WriteString("end\nfunction request()\n  n = n % #all + 1\n  return all[n]\nend\n")
	f, err := os.CreateTemp("", "lmsbench-*.lua")
	if err != nil {
		return "", err
	}
	defer f.Close()
	_, err = f.WriteString(lua.String())
	return f.Name(), err
}

func (b *bench) request(method, path, token string, body any) *http.Request {
	var r io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		r = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, b.base+path, r)
	req.Host = "localhost"
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	return req
}

// call sends one request of the preparation and decodes the answer.
func (b *bench) call(method, path, token string, body any) (map[string]any, error) {
	res, err := b.client.Do(b.request(method, path, token, body))
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	var out map[string]any
	raw, _ := io.ReadAll(res.Body)
	json.Unmarshal(raw, &out)
	if res.StatusCode/100 != 2 {
		return out, fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return out, nil
}

func (b *bench) login(email, password string) (string, error) {
	out, err := b.call("POST", "/api/auth/login", "", map[string]any{"email": email, "password": password, "remember_me": true})
	if err != nil {
		return "", err
	}
	data, _ := out["data"].(map[string]any)
	token, _ := data["token"].(string)
	if token == "" {
		return "", errors.New("login answered no token")
	}
	return token, nil
}

// learner adds a student to the platform tenant and logs it in.
func (b *bench) learner(n int) (int64, string, error) {
	ctx := context.Background()
	email := "learner" + strconv.Itoa(n) + "@localhost"
	if err := b.s.AddUser(ctx, b.rec, email, "bench-password", "student"); err != nil {
		return 0, "", err
	}
	token, err := b.login(email, "bench-password")
	if err != nil {
		return 0, "", err
	}
	out, err := b.call("GET", "/api/profile/me", token, nil)
	if err != nil {
		return 0, "", err
	}
	data, _ := out["data"].(map[string]any)
	id, _ := data["id"].(float64)
	if id == 0 {
		return 0, "", errors.New("GET /api/profile/me answered no id")
	}
	return int64(id), token, nil
}

func (b *bench) db(fn func(*sqldb.DB) error) error {
	t, release, err := b.s.Tenants.Get(context.Background(), b.rec)
	if err != nil {
		return err
	}
	defer release()
	return fn(t.DB)
}

// course inserts a published course of lessons × topics of rich text
// (the authoring routes would take as long without measuring anything
// of learning) and returns its id and its topics' ids.
func (b *bench) course(public bool, lessons, topics int) (int64, []int64, error) {
	ctx := context.Background()
	now := time.Now().UTC()
	var id int64
	var topicIDs []int64
	err := b.db(func(db *sqldb.DB) error {
		if err := db.QueryRowContext(ctx, `INSERT INTO courses (title, status, is_public, created_at, updated_at)
			VALUES ($1, 'published', $2, $3, $3) RETURNING id`, "Bench course", public, now).Scan(&id); err != nil {
			return err
		}
		for l := range lessons {
			var lesson int64
			if err := db.QueryRowContext(ctx, `INSERT INTO lessons (course_id, title, position, created_at, updated_at)
				VALUES ($1, $2, $3, $4, $4) RETURNING id`, id, "Lesson "+strconv.Itoa(l+1), l, now).Scan(&lesson); err != nil {
				return err
			}
			for tp := range topics {
				var topic int64
				if err := db.QueryRowContext(ctx, `INSERT INTO topics (lesson_id, course_id, title, summary, position,
					topicable_type, content, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING id`,
					lesson, id, "Topic "+strconv.Itoa(tp+1), "What this topic is about.", tp,
					`Lms\TopicTypes\Models\TopicContent\RichText`,
					`{"html":"<p>A paragraph of the topic, with <strong>some</strong> markup.</p>"}`, now).Scan(&topic); err != nil {
					return err
				}
				topicIDs = append(topicIDs, topic)
			}
		}
		return nil
	})
	return id, topicIDs, err
}

func profileRun(b *bench) error {
	token, err := b.login("admin@localhost", "bench-password")
	if err != nil {
		return err
	}
	_, err = b.load("GET /api/profile/me", b.backend, func(int, int) *http.Request {
		return b.request("GET", "/api/profile/me", token, nil)
	})
	return err
}

func programRun(b *bench) error {
	course, topics, err := b.course(false, 20, 10)
	if err != nil {
		return err
	}
	user, token, err := b.learner(1)
	if err != nil {
		return err
	}
	admin, err := b.login("admin@localhost", "bench-password")
	if err != nil {
		return err
	}
	if _, err := b.call("POST", "/api/admin/courses/"+strconv.FormatInt(course, 10)+"/access", admin,
		map[string]any{"users": []map[string]any{{"id": user}}}); err != nil {
		return err
	}
	var progress []map[string]any
	for _, t := range topics[:15] {
		progress = append(progress, map[string]any{"topic_id": t, "status": 1})
	}
	if _, err := b.call("PATCH", "/api/courses/progress/"+strconv.FormatInt(course, 10), token,
		map[string]any{"progress": progress}); err != nil {
		return err
	}
	path := "/api/courses/" + strconv.FormatInt(course, 10) + "/program"
	// Browsers and most HTTP clients accept gzip, which the server uses
	// for a learner's program it keeps; the plain answer is measured too.
	_, err = b.load("GET /api/courses/{course}/program, 20 lessons × 10 topics, gzip accepted", b.backend, func(int, int) *http.Request {
		r := b.request("GET", path, token, nil)
		r.Header.Set("Accept-Encoding", "gzip")
		return r
	})
	if err != nil || b.hold {
		return err
	}
	_, err = b.load("GET /api/courses/{course}/program, 20 lessons × 10 topics, plain", b.backend, func(int, int) *http.Request {
		return b.request("GET", path, token, nil)
	})
	return err
}

// catalogueCourses is the size of the catalogue scenario's catalogue: more
// than the default page of the list.
const catalogueCourses = 30

func catalogueRun(b *bench) error {
	for range catalogueCourses {
		if _, _, err := b.course(true, 1, 1); err != nil {
			return err
		}
	}
	out, err := b.call("GET", "/api/courses", "", nil)
	if err != nil {
		return err
	}
	if list, _ := out["data"].([]any); len(list) == 0 {
		return errors.New("the catalogue lists no course")
	}
	_, err = b.load("GET /api/courses, anonymous", b.backend, func(int, int) *http.Request {
		return b.request("GET", "/api/courses", "", nil)
	})
	return err
}

const pingLearners = 500

func pingRun(b *bench) error {
	_, topics, err := b.course(true, 1, 1)
	if err != nil {
		return err
	}
	tokens := make([]string, pingLearners)
	for i := range tokens {
		if _, tokens[i], err = b.learner(i + 1); err != nil {
			return err
		}
	}
	path := "/api/courses/progress/" + strconv.FormatInt(topics[0], 10) + "/ping"
	var n atomic.Int64
	_, err = b.load(fmt.Sprintf("PUT /api/courses/progress/{topic_id}/ping, %d learners", pingLearners), b.backend,
		func(int, int) *http.Request {
			return b.request("PUT", path, tokens[int(n.Add(1))%len(tokens)], nil)
		})
	if err != nil {
		return err
	}
	return checkSeconds(b, topics[0])
}

// checkSeconds verifies that every learner's time on the topic is exactly
// the whole seconds between their first and last ping (all pings of a
// learner came well within the one-minute cap of each other), so no concurrent ping
// was lost or counted twice.
func checkSeconds(b *bench, topic int64) error {
	learners, exact := 0, 0
	var total int64
	err := b.db(func(db *sqldb.DB) error {
		rows, err := db.QueryContext(context.Background(), `SELECT seconds, started_at, last_ping_at FROM topic_progress
			WHERE topic_id = $1`, topic)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var seconds int64
			var first, last time.Time
			if err := rows.Scan(&seconds, &first, &last); err != nil {
				return err
			}
			learners++
			total += seconds
			if seconds == last.Unix()-first.Unix() {
				exact++
			}
		}
		return rows.Err()
	})
	if err != nil {
		return err
	}
	fmt.Printf("  seconds on the topic: %d learners, %d exact, %d seconds in all\n", learners, exact, total)
	if learners != pingLearners || exact != learners {
		return fmt.Errorf("%d of %d learners' seconds do not add up", learners-exact, pingLearners)
	}
	return nil
}

// processRun starts `lms serve` on a prepared data directory, times its
// first served request and reads its resident memory once idle.
func processRun(binary string) error {
	dir, err := os.MkdirTemp("", "lmsbench-proc")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	// First start creates the platform tenant (key generation, migrations);
	// the measured start is the second, as after any restart.
	for round := 0; round < 2; round++ {
		p, err := startServe(binary, dir)
		if err != nil {
			return err
		}
		if round == 1 {
			time.Sleep(3 * time.Second)
			fmt.Printf("lms serve: first request served %s after start; idle RSS with one tenant %s (goal ≤ 60 MB)\n",
				p.firstServed, readRSS(p.cmd.Process.Pid))
		}
		if round == 0 {
			// The measured start loads the binary from disk, as a server
			// does after an install or a reboot. A binary the compiler
			// has just written sits in the page cache in large folios,
			// which Linux (6.x, ext4) maps whole on the first touch: the
			// whole 48 MB of code and tables would count as resident,
			// however little of them the server runs.
			if err := dropFromPageCache(binary); err != nil {
				return err
			}
		}
		p.stop()
	}
	return nil
}

// served is a running `lms serve`.
type served struct {
	cmd         *exec.Cmd
	addr        string
	firstServed time.Duration
}

// startServe starts `lms serve` on the data directory and waits until it
// answers its health check.
func startServe(binary, dir string) (*served, error) {
	addr, web := freeAddr(), freeAddr()
	cmd := exec.Command(binary, "serve")
	// The frontend runs too, as in a default `lms serve`, on a free port.
	cmd.Env = append(os.Environ(), "LMS_DATA_DIR="+dir, "LMS_API_ADDR="+addr, "LMS_ADMIN_PASSWORD=bench-password",
		"LMS_LOG_LEVEL=error", "LMS_WEB_ADDR="+web, "LMS_CONTENT_ADDR="+freeAddr())
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &served{cmd: cmd, addr: addr}
	for time.Since(start) < 30*time.Second {
		if status(addr, "localhost", "/api/healthcheck") == http.StatusOK {
			p.firstServed = time.Since(start)
			return p, nil
		}
		time.Sleep(2 * time.Millisecond)
	}
	p.stop()
	return nil, errors.New("lms serve did not answer within 30s")
}

// freeAddr is a local address with a port free at the time of the call.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (p *served) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	p.cmd.Wait()
}

// status sends one GET to the host at addr and returns its status (0 when
// the request failed).
func status(addr, host, path string) int {
	req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

// tenantsRun creates n tenants (as `lms tenant add` does), starts
// `lms serve` on them, touches each with one catalogue request and reads
// the server's resident memory.
func tenantsRun(binary string, n int) error {
	dir, err := os.MkdirTemp("", "lmsbench-tenants")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := server.New(ctx, benchConfig(dir), server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	started := time.Now()
	_, _, err = s.EnsurePlatform(ctx)
	for i := 0; i < n && err == nil; i++ {
		_, _, err = s.AddTenant(ctx, server.NewTenant{Name: "Bench " + strconv.Itoa(i), Host: tenantHost(i),
			AdminPassword: "bench-password"})
	}
	s.Close()
	if err != nil {
		return err
	}
	fmt.Printf("%d tenants created in %s\n", n, time.Since(started).Round(time.Millisecond))
	p, err := startServe(binary, dir)
	if err != nil {
		return err
	}
	defer p.stop()
	time.Sleep(2 * time.Second)
	idle := readRSS(p.cmd.Process.Pid)
	started = time.Now()
	for i := range n {
		if code := status(p.addr, tenantHost(i), "/api/courses"); code != http.StatusOK {
			return fmt.Errorf("GET /api/courses on %s answered %d", tenantHost(i), code)
		}
	}
	touched := time.Since(started)
	time.Sleep(2 * time.Second)
	busy := readRSS(p.cmd.Process.Pid)
	// Idle: once the tenants' database pools closed their idle connections.
	time.Sleep(sqldb.SQLiteIdleConn + 10*time.Second)
	fmt.Printf("lms serve with %d tenants: RSS %s before any request; %s just after touching each once (in %s); "+
		"idle RSS %s once their connections idled out (goal ≤ 500 MB)\n",
		n, idle, busy, touched.Round(time.Millisecond), readRSS(p.cmd.Process.Pid))
	return nil
}

func tenantHost(i int) string { return "t" + strconv.Itoa(i) + ".bench.test" }

// readRSS is a process's resident memory, with its anonymous part (heap,
// stacks) and its file part (the binary's pages) beside it.
func readRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	field := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if name, value, ok := strings.Cut(line, ":"); ok {
			field[name] = strings.TrimSpace(value)
		}
	}
	return fmt.Sprintf("%s (anonymous %s, file %s)", field["VmRSS"], field["RssAnon"], field["RssFile"])
}

// dropFromPageCache asks the kernel to forget the cached pages of a file
// no process maps.
func dropFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
