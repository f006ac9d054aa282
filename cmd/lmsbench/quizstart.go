package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/events"
	"github.com/lms-platform/lms/internal/platform"
	"github.com/lms-platform/lms/internal/server"
)

// The quiz-start scenario: a class of learners, each with a token of its
// own, starts one timed GIFT quiz within a second, as at the start of an
// exam, then answers every question with a think time between answers
// and ends its attempt. It runs against `lms serve` processes (-binary):
// one on SQLite, or -replicas of them on PostgreSQL (-database) and Redis
// (-redis) behind a round-robin proxy in this process.

const (
	quizQuestions = 16
	quizClass     = `Lms\TopicTypeGift\Models\GiftQuiz`
	quizMinutes   = 30
	// quizRedisDB is the Redis database the replicas share, emptied
	// first: every fresh platform numbers its tenants from 1, and cached
	// entries of an earlier run would be read as this one's.
	quizRedisDB = 12
)

// quizStart is the configuration of the scenario.
type quizStart struct {
	binary, database, redis string
	// learners are the class sizes of the rounds, one quiz each.
	learners []int
	replicas int
	think    time.Duration
	// pingers learners of the course (the quiz takers among them) ping
	// a reading every pingEvery through each round; 0: none.
	pingers   int
	pingEvery time.Duration
	hello     func() (float64, error)
}

func parseCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-learners: %q is not a positive number", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func quizStartRun(qs quizStart) error {
	if qs.binary == "" {
		return errors.New("quiz-start runs `lms serve`: give -binary")
	}
	if qs.replicas > 1 && (qs.database == "" || qs.redis == "") {
		return errors.New("several replicas share PostgreSQL and Redis: give -database and -redis")
	}
	hello, err := qs.hello()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "lmsbench-quiz")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := benchConfig(dir)
	backend := "SQLite"
	if qs.database != "" {
		dbURL, drop, err := scratchDatabase(context.Background(), qs.database)
		if err != nil {
			return err
		}
		defer drop()
		key := make([]byte, 32)
		rand.Read(key)
		cfg.DatabaseURL, cfg.MasterKey, backend = dbURL, base64.StdEncoding.EncodeToString(key), "PostgreSQL"
	}
	if qs.redis != "" {
		if cfg.RedisURL, err = emptyRedisDB(qs.redis); err != nil {
			return err
		}
		backend += " and Redis"
	}
	started := time.Now()
	class, err := prepareClass(cfg, max(slices.Max(qs.learners), qs.pingers))
	if err != nil {
		return err
	}
	fmt.Printf("quiz-start: %d learners created, assigned and signed in (real tokens) in %s (%s)\n",
		len(class.tokens), time.Since(started).Round(time.Millisecond), strings.Join(class.phases, ", "))
	env := []string{"LMS_DATA_DIR=" + dir, "LMS_PLATFORM_HOST=localhost", "LMS_ADMIN_EMAIL=" + cfg.AdminEmail,
		"LMS_ADMIN_PASSWORD=" + cfg.AdminPass, "LMS_PASSWORD_COST=test", "LMS_LOG_LEVEL=error",
		"LMS_DATABASE_URL=" + cfg.DatabaseURL, "LMS_MASTER_KEY=" + cfg.MasterKey, "LMS_REDIS_URL=" + cfg.RedisURL}
	var replicas []*served
	defer func() {
		for _, r := range replicas {
			r.stop()
		}
	}()
	for range max(qs.replicas, 1) {
		r, err := startReplica(qs.binary, env)
		if err != nil {
			return err
		}
		replicas = append(replicas, r)
	}
	base := "http://" + replicas[0].addr
	if len(replicas) > 1 {
		front, err := roundRobin(replicas)
		if err != nil {
			return err
		}
		defer front.Close()
		base = "http://" + front.Addr().String()
	}
	where := fmt.Sprintf("%s, %d replica(s)", backend, len(replicas))
	if len(replicas) > 1 {
		where += " behind a round-robin proxy"
	}
	largest := 0
	for _, n := range qs.learners {
		topic, err := class.quiz(base)
		if err != nil {
			return err
		}
		var pings *pinging
		if qs.pingers > 0 {
			if pings, err = class.startPings(base, qs.pingers, qs.pingEvery); err != nil {
				return err
			}
		}
		var pids []int
		for _, r := range replicas {
			pids = append(pids, r.cmd.Process.Pid)
		}
		r := rush(base, class.tokens[:n], topic, qs.think, pids)
		r.print(n, where, hello, replicas)
		met := r.start.p(0.99) < time.Second && r.failed() == 0
		if pings != nil {
			met = pings.finish(base, class.course, class.tokens[:qs.pingers]) && met
		}
		if met {
			largest = max(largest, n)
		}
	}
	fmt.Printf("  largest class with start p99 < 1 s and no error: %d learners (of %v)\n", largest, qs.learners)
	return nil
}

// emptyRedisDB is the URL of the scenario's own Redis database on the
// server of raw, emptied.
func emptyRedisDB(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	u.Path = "/" + strconv.Itoa(quizRedisDB)
	opts, err := redis.ParseURL(u.String())
	if err != nil {
		return "", err
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	return u.String(), rdb.FlushDB(context.Background()).Err()
}

// class is the prepared course: its admin's token, course, lesson and
// learners.
type class struct {
	admin  string
	course int64
	lesson int64
	tokens []string
	// phases tells how long each step of the preparation took.
	phases []string
}

// took notes the time of a step of the preparation since *since.
func (c *class) took(step string, since *time.Time) {
	c.phases = append(c.phases, step+" "+time.Since(*since).Round(time.Millisecond).String())
	*since = time.Now()
}

// prepareClass creates n learners assigned to a course, through a server
// in this process on the same data, before the replicas start: users as
// `lms user add` does, their assignment through the admin API in bulk,
// and a token for each from a real login (several at once).
func prepareClass(cfg *config.Config, n int) (*class, error) {
	ctx := context.Background()
	s, err := server.New(ctx, cfg, server.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	rec, _, err := s.EnsurePlatform(ctx)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: s.Handler}
	go srv.Serve(ln)
	defer srv.Close()
	b := &bench{loader: &loader{client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}}, s: s, rec: rec,
		base: "http://" + ln.Addr().String()}
	c := &class{tokens: make([]string, n)}
	if c.admin, err = b.login(cfg.AdminEmail, cfg.AdminPass); err != nil {
		return nil, err
	}
	if _, err := b.call("POST", "/api/admin/config", c.admin, map[string]any{"config": []map[string]any{
		{"key": "lms_gift_quiz.max_quiz_time", "value": quizMinutes}}}); err != nil {
		return nil, err
	}
	out, err := b.call("POST", "/api/admin/courses", c.admin, map[string]any{"title": "Exam", "status": "published"})
	if err != nil {
		return nil, err
	}
	course := idOf(out)
	c.course = course
	if out, err = b.call("POST", "/api/admin/lessons", c.admin, map[string]any{"course_id": course, "title": "Exam day"}); err != nil {
		return nil, err
	}
	c.lesson = idOf(out)
	email := func(i int) string { return "quiz" + strconv.Itoa(i) + "@localhost" }
	step := time.Now()
	err = inParallel(n, 8, func(i int) error { return s.AddUser(ctx, rec, email(i), "bench-password", "student") })
	if err != nil {
		return nil, err
	}
	c.took("users", &step)
	var ids []map[string]any
	for page := 1; len(ids) < n; page++ {
		out, err := b.call("GET", "/api/admin/users?role=student&per_page=100&page="+strconv.Itoa(page), c.admin, nil)
		if err != nil {
			return nil, err
		}
		list, _ := out["data"].([]any)
		if len(list) == 0 {
			return nil, fmt.Errorf("the user list has %d of the %d learners", len(ids), n)
		}
		for _, u := range list {
			ids = append(ids, map[string]any{"id": idOf(map[string]any{"data": u})})
		}
	}
	for from := 0; from < len(ids); from += 1000 {
		if _, err := b.call("POST", "/api/admin/courses/"+strconv.FormatInt(course, 10)+"/access", c.admin,
			map[string]any{"users": ids[from:min(from+1000, len(ids))]}); err != nil {
			return nil, err
		}
	}
	c.took("assignment", &step)
	err = inParallel(n, 16, func(i int) error {
		var err error
		c.tokens[i], err = b.login(email(i), "bench-password")
		return err
	})
	if err != nil {
		return nil, err
	}
	c.took("logins", &step)
	// The class signed in ahead of the exam: the reactions to its logins
	// are done before it starts.
	if err := settleEvents(ctx, s, rec); err != nil {
		return nil, err
	}
	c.took("their events", &step)
	return c, nil
}

// settleEvents delivers the tenant's pending events until none is left.
func settleEvents(ctx context.Context, s *server.Server, rec platform.Record) error {
	t, release, err := s.Tenants.Get(ctx, rec)
	if err != nil {
		return err
	}
	defer release()
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := s.Dispatcher.DispatchPending(ctx, t); err != nil {
			return err
		}
		held, err := events.Unsettled(ctx, t.DB, s.Clock.Now())
		if err != nil || held == 0 {
			return err
		}
	}
	return errors.New("the class's events were not delivered within ten minutes")
}

// inParallel calls fn for 0..n-1 from workers goroutines and returns the
// first error.
func inParallel(n, workers int, fn func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n && first.Load() == nil; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

func idOf(out map[string]any) int64 {
	data, _ := out["data"].(map[string]any)
	id, _ := data["id"].(float64)
	return int64(id)
}

// created is the part of a created resource's answer the scenarios read.
type created struct {
	ID int64 `json:"id"`
}

// quiz creates a new timed quiz topic of quizQuestions short-answer
// questions in the class's lesson, through the API of the replicas.
func (c *class) quiz(base string) (int64, error) {
	var questions []map[string]any
	for i := range quizQuestions {
		questions = append(questions, map[string]any{"gift": fmt.Sprintf("::Q%d:: What is %d plus %d? {=%d}", i+1, i, i, 2*i)})
	}
	body := map[string]any{"lesson": c.lesson, "title": "Exam", "topicable": quizClass, "value": "Answer every question.",
		"questions": questions}
	var topic created
	err := post(http.DefaultClient, base, c.admin, "/api/admin/topics", body, http.StatusCreated, &topic)
	return topic.ID, err
}

// post sends a JSON POST to the platform tenant and decodes the data of
// the answer into data, an error unless it has the status want.
func post(hc *http.Client, base, token, path string, body any, want int, data any) error {
	return send(hc, "POST", base, token, path, body, want, data)
}

// send is post with any method. With data nil the answer is read but not
// decoded: the simulated learners decode only what they use next, so
// that the load generator leaves the machine's CPU to the servers.
func send(hc *http.Client, method, base, token, path string, body any, want int, data any) error {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, base+path, bytes.NewReader(raw))
	req.Host = "localhost"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	answer, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		return fmt.Errorf("%s %s: %d %s", method, path, res.StatusCode, answer)
	}
	if data == nil {
		return nil
	}
	envelope := struct {
		Data any `json:"data"`
	}{Data: data}
	if err := json.Unmarshal(answer, &envelope); err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	return nil
}

// startReplica starts `lms serve` with env on a free port and waits until
// it answers.
func startReplica(binary string, env []string) (*served, error) {
	addr := freeAddr()
	cmd := exec.Command(binary, "serve")
	cmd.Env = append(os.Environ(), append(env, "LMS_API_ADDR="+addr, "LMS_WEB_ADDR=127.0.0.1:0",
		"LMS_CONTENT_ADDR=127.0.0.1:0")...)
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &served{cmd: cmd, addr: addr}
	for time.Since(start) < time.Minute {
		if status(addr, "localhost", "/api/healthcheck") == http.StatusOK {
			return p, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.stop()
	return nil, errors.New("lms serve did not answer within a minute")
}

// roundRobin serves a reverse proxy sending requests to the replicas in
// turn, as a load balancer does.
func roundRobin(replicas []*served) (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	// Idle connections are dropped well before the replicas' own idle
	// timeout (120 s), as a load balancer's keep-alive is set: a request
	// sent on a connection the replica is closing fails as a 502.
	transport := &http.Transport{MaxIdleConnsPerHost: 1024, IdleConnTimeout: 60 * time.Second}
	var proxies []*httputil.ReverseProxy
	for _, r := range replicas {
		to := &url.URL{Scheme: "http", Host: r.addr}
		proxies = append(proxies, &httputil.ReverseProxy{Transport: transport, Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(to)
			pr.Out.Host = pr.In.Host
		}})
	}
	var next atomic.Uint64
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proxies[next.Add(1)%uint64(len(proxies))].ServeHTTP(w, r)
	}))
	return ln, nil
}

// latencies are the durations of one kind of request, and their failures.
type latencies struct {
	mu     sync.Mutex
	all    []time.Duration
	errors int
	first  string
}

func (l *latencies) add(d time.Duration, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.errors++
		if l.first == "" {
			l.first = err.Error()
		}
		return
	}
	l.all = append(l.all, d)
}

// p is the p-quantile of the successful requests (all sorted first).
func (l *latencies) p(q float64) time.Duration {
	if len(l.all) == 0 {
		return 0
	}
	slices.Sort(l.all)
	return l.all[min(len(l.all)-1, int(float64(len(l.all))*q))]
}

func (l *latencies) String() string {
	s := fmt.Sprintf("%d ok, %d failed; p50 %s  p95 %s  p99 %s  max %s", len(l.all), l.errors,
		l.p(0.50).Round(time.Microsecond*100), l.p(0.95).Round(time.Microsecond*100),
		l.p(0.99).Round(time.Microsecond*100), l.p(1).Round(time.Microsecond*100))
	if l.first != "" {
		s += "; first failure: " + l.first
	}
	return s
}

// rushed is the outcome of one round.
type rushed struct {
	start, answer, end latencies
	took               time.Duration
	// The processor time the replicas and the PostgreSQL server used in
	// the round, and until the last start was answered: the machine's
	// noise moves it far less than the latencies.
	replicasCPU, postgresCPU           time.Duration
	startReplicasCPU, startPostgresCPU time.Duration
	startsTook                         time.Duration
}

func (r *rushed) failed() int { return r.start.errors + r.answer.errors + r.end.errors }

// rush runs one round: learner i starts at i/len(tokens) of a second,
// then answers each question after a think time of think ± 50% and ends
// the attempt.
func rush(base string, tokens []string, topic int64, think time.Duration, replicas []int) *rushed {
	hc := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: len(tokens)}}
	defer hc.CloseIdleConnections()
	r := &rushed{}
	replicasCPU, postgresCPU := cpuOf(replicas), cpuOf(postgresPids())
	began := time.Now()
	var started atomic.Int64
	var wg sync.WaitGroup
	for i, token := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Until(began.Add(time.Duration(i) * time.Second / time.Duration(len(tokens)))))
			t0 := time.Now()
			var attempt struct {
				ID        int64 `json:"id"`
				Questions []struct {
					ID int64 `json:"id"`
				} `json:"questions"`
			}
			err := post(hc, base, token, "/api/quiz-attempts", map[string]any{"topic_id": topic}, http.StatusCreated, &attempt)
			r.start.add(time.Since(t0), err)
			if started.Add(1) == int64(len(tokens)) {
				r.startsTook = time.Since(began)
				r.startReplicasCPU, r.startPostgresCPU = cpuOf(replicas)-replicasCPU, cpuOf(postgresPids())-postgresCPU
			}
			if err != nil {
				return
			}
			path := "/api/quiz-attempts/" + strconv.FormatInt(attempt.ID, 10)
			for k, q := range attempt.Questions {
				time.Sleep(think/2 + time.Duration(mrand.Int64N(int64(think)+1)))
				t0 := time.Now()
				err := post(hc, base, token, path+"/answer", map[string]any{"question_id": q.ID,
					"answer": map[string]any{"text": strconv.Itoa(2 * k)}}, http.StatusOK, nil)
				r.answer.add(time.Since(t0), err)
			}
			t0 = time.Now()
			err = post(hc, base, token, path+"/end", map[string]any{}, http.StatusOK, nil)
			r.end.add(time.Since(t0), err)
		}()
	}
	wg.Wait()
	r.took = time.Since(began)
	r.replicasCPU, r.postgresCPU = cpuOf(replicas)-replicasCPU, cpuOf(postgresPids())-postgresCPU
	return r
}

func (r *rushed) print(n int, where string, hello float64, replicas []*served) {
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("quiz-start, %d learners (%s), %s for the round; load average %s",
		n, where, r.took.Round(time.Millisecond), load)
	fmt.Printf("  plain net/http hello-world in this run: %.0f requests/s\n", hello)
	fmt.Printf("  start  (%d within 1 s): %s\n", n, &r.start)
	fmt.Printf("  answer (%d questions each): %s\n", quizQuestions, &r.answer)
	fmt.Printf("  end: %s\n", &r.end)
	for i, p := range replicas {
		fmt.Printf("  replica %d: peak RSS %s\n", i+1, peakRSS(p.cmd.Process.Pid))
	}
	ms := 10 * time.Millisecond
	fmt.Printf("  processor time until the last start was answered (%s): replicas %s, PostgreSQL %s\n",
		r.startsTook.Round(ms), r.startReplicasCPU.Round(ms), r.startPostgresCPU.Round(ms))
	fmt.Printf("  processor time of the round: replicas %s, PostgreSQL %s\n", r.replicasCPU.Round(ms), r.postgresCPU.Round(ms))
	verdict := "met"
	if r.start.p(0.99) >= time.Second || r.failed() > 0 {
		verdict = "NOT met"
	}
	fmt.Printf("  goal: start p99 < 1 s, no error: %s\n", verdict)
}

// cpuOf is the processor time, user and system, the processes used so
// far; a process that is gone counts nothing.
func cpuOf(pids []int) time.Duration {
	var ticks int64
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// The fields after the command, which is in parentheses and may
		// hold spaces: utime and stime are the 12th and 13th of them.
		_, after, _ := strings.Cut(string(b), ") ")
		f := strings.Fields(after)
		if len(f) < 13 {
			continue
		}
		for _, v := range f[11:13] {
			n, _ := strconv.ParseInt(v, 10, 64)
			ticks += n
		}
	}
	// Linux counts in USER_HZ, 100 a second on every architecture Go runs.
	return time.Duration(ticks) * 10 * time.Millisecond
}

// postgresPids lists the PostgreSQL server's processes on this machine
// (the server and its backends), none where there is no such server.
func postgresPids() []int {
	dirs, _ := os.ReadDir("/proc")
	var pids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		if comm, err := os.ReadFile("/proc/" + d.Name() + "/comm"); err == nil && strings.TrimSpace(string(comm)) == "postgres" {
			pids = append(pids, pid)
		}
	}
	return pids
}

// peakRSS is the highest resident memory of a process so far.
func peakRSS(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
