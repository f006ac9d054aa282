// Command lmsbench is the load run of `make bench`: it starts the platform
// in a temporary directory (SQLite, or PostgreSQL with -database), prepares
// the data of a scenario and measures requests per second and latency
// percentiles over keep-alive connections, load generator included.
//
// Scenarios (-scenario):
//
//	profile  GET /api/profile/me as the platform admin (the default); with
//	         -binary it also measures how long `lms serve` takes to serve
//	         its first request and its resident memory when idle
//	program  GET /api/courses/{course}/program of a 20-lesson × 10-topic
//	         course, as an assigned learner with some progress
//	ping     PUT /api/courses/progress/{topic_id}/ping from 500 learners,
//	         then a check that no learner lost a second
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

	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/server"
	"github.com/lms-platform/lms/internal/sqldb"
)

func main() {
	scenario := flag.String("scenario", "profile", "what to load: profile, program or ping")
	conns := flag.Int("c", 0, "concurrent connections (default 32 for profile, 64 for program and ping)")
	dur := flag.Duration("d", 10*time.Second, "duration of the load run")
	database := flag.String("database", "", "PostgreSQL server URL to run on (a database is created and dropped); empty: SQLite")
	binary := flag.String("binary", "bin/lms", "lms binary for the start-up and memory run of the profile scenario (empty: skip)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the load run (server and load generator) to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "lmsbench:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	if *conns == 0 {
		*conns = 64
		if *scenario == "profile" {
			*conns = 32
		}
	}
	run := map[string]func(*bench) error{"profile": profileRun, "program": programRun, "ping": pingRun}[*scenario]
	if run == nil {
		fmt.Fprintf(os.Stderr, "lmsbench: unknown scenario %q (profile, program, ping)\n", *scenario)
		os.Exit(2)
	}
	err := withBench(*database, *conns, *dur, run)
	if err == nil && *scenario == "profile" && *binary != "" {
		err = processRun(*binary)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "lmsbench:", err)
		os.Exit(1)
	}
}

// bench is a running platform under load.
type bench struct {
	s       *server.Server
	rec     platform.Record // the platform tenant, served at localhost
	base    string
	client  *http.Client
	conns   int
	dur     time.Duration
	backend string
}

func withBench(database string, conns int, dur time.Duration, run func(*bench) error) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "lmsbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := &config.Config{DataDir: dir, PlatformHost: "localhost", AdminEmail: "admin@localhost",
		AdminPass: "bench-password", PasswordCost: "test", LogLevel: "error"}
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
	b := &bench{s: s, rec: rec, base: "http://" + ln.Addr().String(), conns: conns, dur: dur, backend: backend,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}}}
	return run(b)
}

// scratchDatabase creates a database for one run on the server of url and
// returns its URL and a function dropping it with the tenants' databases.
func scratchDatabase(ctx context.Context, url string) (string, func(), error) {
	buf := make([]byte, 4)
	rand.Read(buf)
	name := "lmsbench_" + hex.EncodeToString(buf)
	if err := sqldb.CreateDatabase(ctx, url, name); err != nil {
		return "", nil, err
	}
	drop := func() { sqldb.DropDatabasesLike(ctx, url, name) }
	full, err := sqldb.WithDatabase(url, name)
	return full, drop, err
}

// load sends requests from b.conns connections for b.dur; next makes the
// i-th request of connection c. It prints the rate and latency percentiles.
func (b *bench) load(title string, next func(c, i int) *http.Request) error {
	var mu sync.Mutex
	var all []time.Duration
	var failures atomic.Int64
	var firstFailure atomic.Value
	deadline := time.Now().Add(b.dur)
	var wg sync.WaitGroup
	start := time.Now()
	for c := range b.conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for i := 0; time.Now().Before(deadline); i++ {
				req := next(c, i)
				t0 := time.Now()
				res, err := b.client.Do(req)
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
	fmt.Printf("%s (%s, %d connections, %s): %.0f requests/s, %d failed\n",
		title, b.backend, b.conns, b.dur, float64(len(all))/elapsed.Seconds(), failures.Load())
	fmt.Printf("  latency p50 %s  p90 %s  p99 %s  max %s\n", pct(0.50), pct(0.90), pct(0.99), pct(1))
	if n := failures.Load(); n > 0 {
		return fmt.Errorf("%d requests failed; first: %v", n, firstFailure.Load())
	}
	return nil
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
	var id int64
	err = b.db(func(db *sqldb.DB) error {
		return db.QueryRowContext(ctx, `SELECT id FROM users WHERE email = $1`, email).Scan(&id)
	})
	return id, token, err
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
	return b.load("GET /api/profile/me", func(int, int) *http.Request {
		return b.request("GET", "/api/profile/me", token, nil)
	})
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
	if err := b.db(func(db *sqldb.DB) error {
		_, err := db.ExecContext(context.Background(), `INSERT INTO course_users (course_id, user_id, created_at)
			VALUES ($1, $2, $3)`, course, user, time.Now().UTC())
		return err
	}); err != nil {
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
	return b.load("GET /api/courses/{course}/program, 20 lessons × 10 topics", func(int, int) *http.Request {
		return b.request("GET", path, token, nil)
	})
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
	err = b.load(fmt.Sprintf("PUT /api/courses/progress/{topic_id}/ping, %d learners", pingLearners),
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	addr := ln.Addr().String()
	ln.Close()
	env := append(os.Environ(), "LMS_DATA_DIR="+dir, "LMS_API_ADDR="+addr, "LMS_ADMIN_PASSWORD=bench-password",
		"LMS_LOG_LEVEL=error")
	// First start creates the platform tenant (key generation, migrations);
	// the measured start is the second, as after any restart.
	for round := 0; round < 2; round++ {
		cmd := exec.Command(binary, "serve")
		cmd.Env = env
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		start := time.Now()
		if err := cmd.Start(); err != nil {
			return err
		}
		firstServed := time.Duration(0)
		for time.Since(start) < 20*time.Second {
			req, _ := http.NewRequest("GET", "http://"+addr+"/api/healthcheck", nil)
			req.Host = "localhost"
			if res, err := http.DefaultClient.Do(req); err == nil {
				res.Body.Close()
				if res.StatusCode == 200 {
					firstServed = time.Since(start)
					break
				}
			}
			time.Sleep(2 * time.Millisecond)
		}
		if round == 1 {
			time.Sleep(3 * time.Second)
			rss := readRSS(cmd.Process.Pid)
			fmt.Printf("lms serve: first request served %s after start; idle RSS with one tenant %s\n", firstServed, rss)
		}
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	return nil
}

func readRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:"))
		}
	}
	return "unknown"
}
