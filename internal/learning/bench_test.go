package learning_test

import (
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lms-platform/lms/internal/apitest"
)

// The goals (issue 3): the program of a 20-lesson × 10-topic course at
// 3,000 requests/s or more on two cores with SQLite, and progress pings
// at 2,000 requests/s from 500 learners. These benchmarks measure both
// through the real HTTP server; `make bench` (cmd/lmsbench) adds the
// latency percentiles at 64 connections.

func benchRequests(b *testing.B, env *apitest.Env, next func() *http.Request) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	var failed atomic.Int64
	// 32 goroutines per core: 64 connections on two cores, as make bench.
	b.SetParallelism(32)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res, err := client.Do(next())
			if err != nil {
				failed.Add(1)
				continue
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				failed.Add(1)
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d requests failed", n)
	}
}

func request(env *apitest.Env, method, path, token string) *http.Request {
	req, _ := http.NewRequest(method, env.HTTP.URL+path, nil)
	req.Host = env.Host
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}

// BenchmarkProgram reads the program of a 20 × 10 course as an assigned
// learner with progress.
func BenchmarkProgram(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	c, _, topics := grid(b, env, courseRow{}, 20, 10)
	u := env.NewUser("student")
	assign(b, env, c, u.ID, nil)
	patch(b, env, u, c, 1, topics[0]...)
	path := "/api/courses/" + id(c) + "/program"
	benchRequests(b, env, func() *http.Request { return request(env, "GET", path, u.Token) })
}

// BenchmarkPing pings one topic from 500 learners in turn.
func BenchmarkPing(b *testing.B) {
	env := apitest.New(b, "sqlite", apitest.Options{})
	_, _, topics := grid(b, env, courseRow{Public: true}, 1, 1)
	var tokens []string
	for range 500 {
		tokens = append(tokens, env.NewUser("student").Token)
	}
	path := "/api/courses/progress/" + id(topics[0][0]) + "/ping"
	var n atomic.Int64
	benchRequests(b, env, func() *http.Request {
		return request(env, "PUT", path, tokens[int(n.Add(1))%len(tokens)])
	})
}
