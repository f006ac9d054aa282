package server_test

import (
	"bytes"
	"mime/multipart"
	"testing"

	"github.com/lms-platform/lms/internal/apitest"
	"github.com/lms-platform/lms/internal/config"
	"github.com/lms-platform/lms/internal/demo/quickcheck"
	"github.com/lms-platform/lms/internal/redisconn/redisconntest"
)

// TestRedisOutage stops the server's Redis while it runs: the health check
// names Redis (503), rate limits keep counting in the process, the cache
// misses (H5P profiles are fetched again), and locks are refused, so an
// H5P upload that installs libraries answers 503.
func TestRedisOutage(t *testing.T) {
	redis := redisconntest.Start(t)
	env := apitest.New(t, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.RedisURL = redis.URL }})
	admin := env.As("admin")
	if res := env.Do(apitest.Request{Method: "GET", Path: "/api/health"}); res.Status != 200 || res.String("data.services.redis") != "ok" {
		t.Fatalf("health with Redis up: %d %s", res.Status, res.Body)
	}

	redis.Stop()
	res := env.Do(apitest.Request{Method: "GET", Path: "/api/health"})
	if res.Status != 503 || res.String("data.services.redis") != "down" || res.String("message") != "Unavailable: redis." {
		t.Errorf("health with Redis down: %d %s", res.Status, res.Body)
	}
	// /api/name allows 60 a minute per address: counted here now.
	statuses := map[int]int{}
	for range 61 {
		statuses[env.Do(apitest.Request{Method: "GET", Path: "/api/name"}).Status]++
	}
	if statuses[200] != 60 || statuses[429] != 1 {
		t.Errorf("61 calls of a limited route with Redis down: %v, want 60 answered and 1 refused", statuses)
	}
	if me := env.Do(apitest.Request{Method: "GET", Path: "/h5p/whoami", Token: admin.Token}); me.Status != 200 ||
		me.String("data.email") != admin.Email {
		t.Errorf("H5P caller with the profile cache down: %d %s", me.Status, me.Body)
	}

	pkg, err := quickcheck.Package(quickcheck.Quiz{Title: "Outage", Questions: []quickcheck.Question{
		{Text: "Is Redis up?", Answers: []string{"Yes", "No"}, Correct: 1}}})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	part, _ := w.CreateFormFile("h5p_file", "outage.h5p")
	part.Write(pkg)
	w.Close()
	res = env.Do(apitest.Request{Method: "POST", Path: "/h5p/contents/upload", Token: admin.Token, Body: b.Bytes(),
		Type: w.FormDataContentType()})
	if res.Status != 503 || res.Get("success") != false {
		t.Errorf("H5P upload with the locks down: %d %s", res.Status, res.Body)
	}
}

// BenchmarkLimitedRouteRedisDown times a rate-limited route (its limiter
// falls back to the process) after Redis has died: it must answer in
// about the time it takes with Redis up, not after client timeouts.
func BenchmarkLimitedRouteRedisDown(b *testing.B) {
	for _, down := range []bool{false, true} {
		name := "redis-up"
		if down {
			name = "redis-down"
		}
		b.Run(name, func(b *testing.B) {
			redis := redisconntest.Start(b)
			env := apitest.New(b, "sqlite", apitest.Options{Configure: func(c *config.Config) { c.RedisURL = redis.URL }})
			if down {
				redis.Stop()
			}
			for b.Loop() {
				if res := env.Do(apitest.Request{Method: "GET", Path: "/api/healthcheck"}); res.Status != 200 && res.Status != 429 {
					b.Fatalf("healthcheck: %d %s", res.Status, res.Body)
				}
			}
		})
	}
}
