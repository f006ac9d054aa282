package quiz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/accounts"
	"github.com/lms-platform/lms/internal/apitest"
)

// rushLearners is the classic stress point of quiz servers: a class
// starting the same quiz at the same second.
const rushLearners = 2000

// learners makes n enrolled learners of the world's course, each signed
// in (a session, as a browser has).
func learners(b *testing.B, w *world, n int) []string {
	b.Helper()
	ctx := context.Background()
	tn, release := w.env.OpenTenant(w.env.Tenant)
	defer release()
	out := make([]string, n)
	for i := range out {
		email := fmt.Sprintf("rush-%d@%s", i, w.env.Host)
		if err := w.env.Server.AddUser(ctx, w.env.Tenant, email, "secret-password", "student"); err != nil {
			b.Fatal(err)
		}
		u, err := accounts.ByEmail(ctx, tn.DB, email)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tn.DB.ExecContext(ctx, `INSERT INTO course_users (course_id, user_id, created_at) VALUES ($1, $2, $3)`,
			w.course, u.ID, w.env.Clock.Now()); err != nil {
			b.Fatal(err)
		}
		out[i], _ = w.env.Login(w.env.Host, email, "secret-password")
	}
	return out
}

type rushClient struct {
	http *http.Client
	base string
	host string
}

func (c rushClient) post(token, path string, body any) (int, []byte, error) {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", c.base+path, bytes.NewReader(data))
	req.Host = c.host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(res.Body)
	return res.StatusCode, buf.Bytes(), nil
}

func newRush(b *testing.B, backend string) (*world, rushClient, []string) {
	env := apitest.New(b, backend, apitest.Options{})
	w := newWorld(b, env)
	toks := learners(b, w, rushLearners)
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, MaxConnsPerHost: 256}
	b.Cleanup(tr.CloseIdleConnections)
	return w, rushClient{http: &http.Client{Transport: tr, Timeout: time.Minute}, base: env.HTTP.URL, host: env.Host}, toks
}

// BenchmarkQuizRush starts one quiz for 2,000 learners at once, every
// start released at the same instant; it reports the p99 and the
// slowest start (queueing on the client's 256 connections included), on
// each backend.
func BenchmarkQuizRush(b *testing.B) {
	for _, backend := range apitest.Backends(b) {
		b.Run(backend, func(b *testing.B) { quizRush(b, backend) })
	}
}

func quizRush(b *testing.B, backend string) {
	w, c, toks := newRush(b, backend)
	var all []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		topic := createQuiz(b, w, nil)
		b.StartTimer()
		lat := make([]time.Duration, len(toks))
		var failed atomic.Int64
		var wg sync.WaitGroup
		gate := make(chan struct{})
		for j, tok := range toks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-gate
				t0 := time.Now()
				status, body, err := c.post(tok, "/api/quiz-attempts", map[string]any{"topic_id": topic})
				lat[j] = time.Since(t0)
				if err != nil || status != http.StatusCreated {
					if failed.Add(1) == 1 {
						b.Errorf("start: %d %v %s", status, err, body)
					}
				}
			}()
		}
		close(gate)
		wg.Wait()
		if failed.Load() > 0 {
			b.Fatalf("%d of %d starts failed", failed.Load(), len(toks))
		}
		if n := w.env.Count(b, `SELECT COUNT(*) FROM quiz_attempts WHERE topic_id = $1`, int64(topic)); n != len(toks) {
			b.Fatalf("%d attempts created, want %d", n, len(toks))
		}
		all = append(all, lat...)
	}
	slices.Sort(all)
	b.ReportMetric(float64(all[len(all)*99/100].Milliseconds()), "p99-ms")
	b.ReportMetric(float64(all[len(all)-1].Milliseconds()), "max-ms")
	b.ReportMetric(float64(rushLearners*b.N)/b.Elapsed().Seconds(), "starts/s")
}

// BenchmarkQuizAnswers saves answers of learners with attempts under way,
// from 64 concurrent clients; it reports saves per second, on each
// backend.
func BenchmarkQuizAnswers(b *testing.B) {
	for _, backend := range apitest.Backends(b) {
		b.Run(backend, func(b *testing.B) { quizAnswers(b, backend) })
	}
}

func quizAnswers(b *testing.B, backend string) {
	w, c, toks := newRush(b, backend)
	topic := createQuiz(b, w, nil)
	attempts := make([]int64, len(toks))
	for i, tok := range toks {
		status, body, err := c.post(tok, "/api/quiz-attempts", map[string]any{"topic_id": topic})
		var res struct {
			Data struct {
				ID int64 `json:"id"`
			} `json:"data"`
		}
		if err != nil || status != http.StatusCreated || json.Unmarshal(body, &res) != nil {
			b.Fatalf("start: %d %v %s", status, err, body)
		}
		attempts[i] = res.Data.ID
	}
	var next atomic.Int64
	var failed atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1) - 1
				if n >= int64(b.N) {
					return
				}
				k := int(n) % len(toks)
				// Question 3 of the quiz is a short answer.
				status, body, err := c.post(toks[k], fmt.Sprintf("/api/quiz-attempts/%d/answer", attempts[k]),
					map[string]any{"question_id": 3, "answer": map[string]any{"text": fmt.Sprintf("answer %d", n)}})
				if err != nil || status != http.StatusOK {
					if failed.Add(1) == 1 {
						b.Errorf("answer: %d %v %s", status, err, body)
					}
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "saves/s")
	if failed.Load() > 0 {
		b.Fatalf("%d saves failed", failed.Load())
	}
}
